import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { summaryOf } from './commands.js';
import { type Command, type CommandOptions, settingsFlags, STORE_HELP, STORE_OPTIONS, storeTargetOf, UsageError } from './common.js';
import { type ConfigFile, ConfigError, probeConfigs } from './config.js';
import { type DoctorFinding, doctorReport, printDoctor } from './doctorReport.js';
import { fromVerify } from './doctorAdvice.js';
import { pgFindings } from './doctorPg.js';
import { KeyOptionError, keyFromSettings } from './encryptionKey.js';
import { out, stdoutStyle } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';
import { resolveSettings, type Settings } from './settings.js';
import { StoreEnvError } from './storeEnv.js';
import type { StoreTarget } from './storeTarget.js';
import type { StoreKey } from '../durable/storeKey.js';
import { StoreLayout } from '../backends/file/layout.js';
import { readMarker } from '../backends/file/encryptionMarker.js';
import { verifyStore } from '../backends/file/verify/index.js';
import { humanBytes } from './output.js';

const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' } } as const satisfies CommandOptions;

/** Less free space than this (or than 5% of the file system) is a problem: a failed write stops the store. */
const LOW_SPACE = 1 << 30;

/**
 * `session-sidecar doctor`: the configuration (each config file read or refused, and where each
 * setting comes from), then the store's health — a directory store's modes, leases left by dead
 * processes, index entries, journals (verify's checks, read-only), free disk space and encryption
 * state; a PostgreSQL store's reachability, schema and privileges — each problem with what to do.
 * A broken config file is a finding, not an error: the rest is checked without it.
 */
export const doctorCommand: Command = {
  name: 'doctor',
  summary: summaryOf('doctor'),
  options: OPTIONS,
  usage: `Usage: session-sidecar doctor [--json] [-v] [options]

Checks what a sidecar started here would use, and says what to do about each problem:
  config       the workspace and user config files (read, absent, or refused and why) and where
               the store, the key source and the log level come from
  store        a directory store: file modes (0600/0700) and ownership, leases left by processes
               that are gone, index entries, journals and archives (verify's checks, read-only),
               free disk space, the encryption state against the key given (or not)
  postgres     a PostgreSQL store: the server reachable and the login accepted, the schema's
               migrations against this binary's, the privileges a sidecar needs on every table
Nothing is changed. Exit code 0 when no problem was found, 1 otherwise.

Options:
  --json                   the report as JSON: {store, kind, healthy, findings: [{status, check,
                           message, file?, advice?}]}
  -v, --verbose            also list what is fine (each check's ok and info lines)
${STORE_HELP}
`,
  async run(argv) {
    let values;
    try {
      ({ values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true }));
    } catch (e) {
      throw new UsageError((e as Error).message.split('\n')[0] as string, this.name);
    }
    if (values.help) return out(this.usage), 0;
    const found: DoctorFinding[] = [];
    const settings = configFindings(values, found);
    let target: StoreTarget;
    try {
      target = storeTargetOf(settings);
    } catch (e) {
      throw e instanceof UsageError ? new UsageError(e.message, this.name) : e;
    }
    found.push({ status: 'info', check: 'config', message: `store ${target.display} (from ${settings.store.from})` });
    let key: StoreKey | undefined;
    try {
      key = keyFromSettings(settings);
      if (settings.key) found.push({ status: 'ok', check: 'encryption', message: `the key loads (from ${settings.key.from})` });
    } catch (e) {
      if (!(e instanceof KeyOptionError)) throw e;
      found.push({ status: 'problem', check: 'encryption', message: e.message, advice: 'fix the key source: the variable must hold the key in base64; a key file must be mode 0600 and yours' });
    }
    if (target.kind === 'postgres') found.push(...await pgFindings(target));
    else await fileFindings(target.root, key, settings.key !== undefined, found);
    const shown = values.verbose || values.json ? found : found.filter((f) => f.status === 'problem' || f.check === 'config');
    const report = doctorReport(target.display, target.kind, found);
    printDoctor({ ...report, findings: shown }, stdoutStyle(), values.json === true);
    return report.healthy ? 0 : 1;
  },
};

/** The config files, each a finding; the settings resolved from the readable ones. */
function configFindings(values: Record<string, string | boolean | undefined>, found: DoctorFinding[]): Settings {
  const str = (k: string) => values[k] as string | undefined;
  const workspace = str('workspace');
  const files: ConfigFile[] = [];
  for (const p of probeConfigs(workspace ?? process.cwd())) {
    if (p.state === 'absent') found.push({ status: 'info', check: 'config', message: `no ${p.where} config file`, file: p.path });
    else if (p.state === 'ok') {
      files.push(p.file);
      found.push({ status: 'ok', check: 'config', message: `${p.where} config file read: ${Object.keys(p.file.values).join(', ') || 'empty'}`, file: p.path });
    } else found.push({ status: 'problem', check: 'config', message: `${p.where} config file refused: ${p.error.message}`, file: p.path, advice: 'fix or remove it: every command and sidecar refuses to start while it is there (session-sidecar --help lists the members)' });
  }
  try {
    return resolveSettings(settingsFlags(values), files);
  } catch (e) {
    if (e instanceof StoreEnvError) throw new UsageError(e.message, 'doctor');
    if (!(e instanceof ConfigError)) throw e;
    found.push({ status: 'problem', check: 'config', message: e.message, advice: 'fix the variable or file it names' });
    return resolveSettings({ ...(workspace !== undefined ? { workspace } : {}) }, [], {});
  }
}

async function fileFindings(root: string, key: StoreKey | undefined, keyGiven: boolean, found: DoctorFinding[]): Promise<void> {
  // The workspace's .session-sidecar may hold only its config.json: not a store yet either.
  if (!fs.lstatSync(`${root}/sessions`, { throwIfNoEntry: false }) && !fs.lstatSync(`${root}/encryption.json`, { throwIfNoEntry: false })) {
    found.push({ status: 'info', check: 'store', message: `no store at ${root} yet: the first sidecar started here creates it (0700)` });
    return;
  }
  found.push(...diskFindings(root));
  const layout = new StoreLayout(root);
  let marker;
  try {
    marker = readMarker(readOnlyFs(), layout);
  } catch (e) {
    found.push({ status: 'problem', check: 'encryption', message: (e as Error).message, file: `${root}/encryption.json`, advice: 'session-sidecar verify -v shows the same; the marker must be a regular file of yours, mode 0600' });
    return;
  }
  if (marker?.rekey) {
    found.push({ status: 'problem', check: 'encryption', message: 'a rekey was interrupted: sidecars refuse the store until it is finished', advice: 'run the same session-sidecar rekey command again (the same --from and --to keys)' });
    return;
  }
  if (keyGiven && !key) {
    found.push({ status: 'info', check: 'store', message: 'the store\'s files were not checked: the key given does not load (above)' });
    return;
  }
  if (marker && !keyGiven) {
    found.push({ status: 'problem', check: 'encryption', message: 'the store is encrypted and no key is given: sidecars refuse it', advice: 'name the key: --encryption-key-env NAME, $SESSION_SIDECAR_ENCRYPTION_KEY_ENV, or encryptionKeyEnv in the config file' });
    return;
  }
  if (marker && key && marker.keyId !== key.id) {
    found.push({ status: 'problem', check: 'encryption', message: 'the key given is not the store\'s key', advice: 'give the key the store was encrypted with (its check value is in encryption.json)' });
    return;
  }
  if (!marker && keyGiven) found.push({ status: 'problem', check: 'encryption', message: 'a key is given but the store is not encrypted: sidecars refuse to start', advice: `encrypt it: session-sidecar rekey --store ${root} --to-env NAME --yes (or stop naming a key)` });
  else found.push({ status: 'ok', check: 'encryption', message: marker ? 'encrypted, under the key given' : 'not encrypted at rest' });
  const report = await verifyStore(root, { fs: readOnlyFs(), ...(key && marker ? { encryptionKey: key } : {}) });
  const fromV = fromVerify(report, root);
  found.push(...fromV);
  if (!fromV.some((f) => f.status === 'problem')) found.push({ status: 'ok', check: 'store', message: `${report.totals.sessions} session(s), ${humanBytes(report.totals.bytes)}: modes, leases, index entries and journals are sound` });
}

function diskFindings(root: string): DoctorFinding[] {
  try {
    const s = fs.statfsSync(root);
    const free = s.bavail * s.bsize;
    const total = s.blocks * s.bsize;
    if (free < LOW_SPACE || free < total * 0.05) {
      return [{ status: 'problem', check: 'disk', message: `${humanBytes(free)} free of ${humanBytes(total)} on the store's file system`, advice: 'free some space: an append that cannot be synced stops the store (nothing acknowledged is lost, but nothing more is written); session-sidecar stats shows the largest sessions, prune moves old ones to the trash' }];
    }
    return [{ status: 'ok', check: 'disk', message: `${humanBytes(free)} free of ${humanBytes(total)}` }];
  } catch {
    return [{ status: 'info', check: 'disk', message: 'free space unknown (statfs failed)' }];
  }
}
