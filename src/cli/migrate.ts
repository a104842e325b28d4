import { summaryOf } from './commands.js';
import { parseArgs } from 'node:util';
import { protocolVocabulary } from '../../protocol/vocabulary.js';
import { nodeFs } from '../durable/fsLayer.js';
import { fileEnd, pgEnd, type TransferEnd } from '../migrate/ends.js';
import { migrateStores } from '../migrate/migrate.js';
import { CliError, type Command, type CommandOptions, UsageError } from './common.js';
import { type Consent, consentOf, goAhead } from './consent.js';
import { err, humanBytes, out } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';
import { type StoreTarget, targetOf } from './storeTarget.js';
import { KeyOptionError, loadKey } from './encryptionKey.js';
import { storeOption, StoreEnvError } from './storeEnv.js';
import fs from 'node:fs';
import path from 'node:path';
import { longWork } from './longWork.js';
import { reindexDirectory } from './reindex.js';
import { WorkInterrupted } from '../domain/work.js';

/** Every option migrate accepts (its usage lists each). */
const OPTIONS = {
  from: { type: 'string' }, to: { type: 'string' }, 'from-store-env': { type: 'string' }, 'to-store-env': { type: 'string' },
  'pg-schema': { type: 'string' }, 'from-pg-schema': { type: 'string' },
  'to-pg-schema': { type: 'string' }, help: { type: 'boolean', short: 'h' }, yes: { type: 'boolean' },
  'from-key-env': { type: 'string' }, 'from-key-file': { type: 'string' }, 'to-key-env': { type: 'string' }, 'to-key-file': { type: 'string' },
} as const satisfies CommandOptions;

export const migrateCommand: Command = {
  name: 'migrate',
  summary: summaryOf('migrate'),
  options: OPTIONS,
  usage: `Usage: session-sidecar migrate --from DIR|URL --to URL|DIR [options]
       (--from-store-env NAME / --to-store-env NAME instead of --from / --to)

Copies every session of one store into another — a directory store into a PostgreSQL
database (postgres://user:pass@host:port/db, also postgresql://, ?sslmode=..., ?host=/dir) or
back — with its header, every record of its active journal, its archived generations
(compaction history), its state values and the blobs it references; deleted sessions (in the
trash) stay deleted. Seqs, timestamps and record texts are kept byte for byte (a directory
store written from PostgreSQL has each record as its own batch: batch boundaries are not
kept there).

Every record is checked again by the secret gate (the session's registered secrets, from its
secretEnv and llm.apiKeyEnv in this environment, the PostgreSQL ends' passwords, and the
credential rules): a session holding one is refused, not copied. Each session is copied in one atomic step (one transaction on
PostgreSQL; a staged directory renamed into place in a directory store), read back from the
destination and compared byte for byte with the source. A session a live writer holds in the
source is refused (close it or stop its sidecar first). A session already in the destination
is skipped when identical (a rerun after an interruption completes the job) and refused when
it differs. The source is only read (PostgreSQL: read-only connections, no lease).

Prints one line per session and a summary (sessions, records, bytes, blobs). Exit code 0 when
every session was copied or already there, 1 when any was refused or failed, 2 for usage.

Options:
  --from DIR|URL           the source store (a directory, or a PostgreSQL URL)
  --to URL|DIR             the destination store (created when missing; a PostgreSQL schema
                           is created or upgraded as by serve)
  --from-store-env NAME    --from read from the environment variable NAME, and
  --to-store-env NAME      --to likewise: a URL's password stays off the command line (or
                           use PGPASSWORD, PGPASSFILE or ~/.pgpass)
  --pg-schema NAME         the PostgreSQL schema of the PostgreSQL side(s) (default
                           session_sidecar)
  --from-pg-schema NAME    the source's schema, when both sides are PostgreSQL
  --to-pg-schema NAME      the destination's schema, when both sides are PostgreSQL
  --from-key-env NAME      the source is encrypted at rest: its key, base64 in $NAME
  --from-key-file PATH     the source's key read from PATH (mode 0600, owned by you)
  --to-key-env NAME        encrypt the destination with this key (base64 in $NAME): a new
                           or empty store is encrypted from its first byte; an existing
                           encrypted one must be under this key
  --to-key-file PATH       the destination's key read from PATH (mode 0600, owned by you)
                           (Either side, directory or PostgreSQL, may be encrypted; sessions
                           are opened at the source and sealed again at the destination.)
  --yes                    copy into a destination that already holds sessions without
                           asking (needed off a terminal; a rerun of an interrupted migrate
                           needs it too)
  -h, --help               this help
`,
  async run(argv) {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv, allowPositionals: false, strict: true,
        options: OPTIONS,
      }));
    } catch (e) {
      throw new UsageError(String((e as Error).message).split(/\.\s|\n/)[0] ?? 'invalid arguments', 'migrate');
    }
    if (values.help) return out(this.usage), 0;
    const usage = (m: string) => new UsageError(m, 'migrate');
    let fromText: string | undefined;
    let toText: string | undefined;
    try {
      fromText = storeOption(values.from, values['from-store-env'], { value: '--from', env: '--from-store-env' });
      toText = storeOption(values.to, values['to-store-env'], { value: '--to', env: '--to-store-env' });
    } catch (e) {
      throw e instanceof StoreEnvError ? usage(e.message) : e;
    }
    if (fromText === undefined || toText === undefined) throw usage('--from and --to are required (or --from-store-env, --to-store-env)');
    if (values['pg-schema'] !== undefined && (values['from-pg-schema'] !== undefined || values['to-pg-schema'] !== undefined)) {
      throw usage('--pg-schema excludes --from-pg-schema and --to-pg-schema');
    }
    const pgFrom = /^postgres(ql)?:\/\//i.test(fromText);
    const pgTo = /^postgres(ql)?:\/\//i.test(toText);
    const schemaOf = (isPg: boolean, own: string | undefined) => (isPg ? own ?? values['pg-schema'] : own);
    const from = targetOf(fromText, schemaOf(pgFrom, values['from-pg-schema']), usage);
    const to = targetOf(toText, schemaOf(pgTo, values['to-pg-schema']), usage);
    if (from.display === to.display) throw usage('--from and --to name the same store');
    try {
      const fromKey = loadKey({ env: values['from-key-env'], file: values['from-key-file'] }, process.env, '--from-key');
      const toKey = loadKey({ env: values['to-key-env'], file: values['to-key-file'] }, process.env, '--to-key');
      return await migrate(fromKey ? { ...from, key: fromKey } : from, toKey ? { ...to, key: toKey } : to, consentOf(values));
    } catch (e) {
      throw e instanceof KeyOptionError ? new CliError(e.message) : e;
    }
  },
};

async function openEnd(t: StoreTarget, source: boolean): Promise<TransferEnd> {
  if (t.kind === 'postgres') return pgEnd(t.url, t.schema, t.display, source, t.key);
  if (source) {
    if (!fs.lstatSync(path.join(t.root, 'sessions'), { throwIfNoEntry: false })?.isDirectory()) {
      throw new CliError(`no session store at ${t.root} (it has no sessions/ directory)`);
    }
    return fileEnd(t.root, readOnlyFs(), t.key, true);
  }
  return fileEnd(t.root, nodeFs, t.key);
}

/** The passwords of the PostgreSQL ends, wherever they come from (URL, PGPASSWORD, password file). */
async function databasePasswordsOf(targets: StoreTarget[]): Promise<string[]> {
  const pg = targets.filter((t): t is Extract<StoreTarget, { kind: 'postgres' }> => t.kind === 'postgres');
  if (pg.length === 0) return [];
  const [{ databasePasswords }, { parsePostgresUrl }] = await Promise.all([import('../backends/postgres/passwords.js'), import('../backends/postgres/url.js')]);
  return (await Promise.all(pg.map((t) => databasePasswords(parsePostgresUrl(t.url)).catch(() => [])))).flat();
}

async function migrate(fromT: StoreTarget, toT: StoreTarget, consent: Consent): Promise<number> {
  const from = await openEnd(fromT, true);
  let to: TransferEnd | undefined;
  try {
    to = await openEnd(toT, false);
    // into a store that already has sessions (another store's, or this migrate's own partial copy): only when asked
    const there = (await to.ids()).length;
    if (there > 0 && !(await goAhead(consent, `${to.display} already holds ${there} session(s); copy into it?`, `session-sidecar migrate: nothing was copied into ${to.display} (it holds ${there} session(s))`))) return 1;
    out(`migrating ${from.display} -> ${to.display}\n`);
    const into = to;
    const processSecrets = await databasePasswordsOf([fromT, toT]);
    return await longWork('migrate', 'run the same command again (with --yes): the sessions already copied are skipped', async (job) => {
      const s = await migrateStores(from, into, {
        env: process.env, vocabulary: protocolVocabulary(), processSecrets, work: job.work,
        progress: (line) => job.progress.above(() => out(`${line}\n`)), refuse: (line) => job.progress.above(() => err(`session-sidecar: migrate: ${line}`)),
      });
      job.progress.above(() => out(`\n${s.sessions} session${s.sessions === 1 ? '' : 's'} copied (${s.records} records, ${humanBytes(s.bytes)} of record text, `
        + `${s.blobs} blob${s.blobs === 1 ? '' : 's'} ${humanBytes(s.blobBytes)}), ${s.alreadyThere} already there, ${s.refused} refused\n`));
      if (toT.kind === 'file') {
        await into.close();
        to = undefined;
        // The copies' index entries, written from their journals: the new store lists as fast as one a sidecar wrote.
        const r = await reindexDirectory(toT, job.work).catch((e: unknown) => {
          if (e instanceof WorkInterrupted) return undefined; // entries are a cache: the copy is whole
          throw e;
        });
        if (!r) return 130;
      }
      job.progress.finish(`${s.sessions} of ${s.sessions + s.alreadyThere + s.refused} session(s) copied`);
      return s.refused > 0 ? 1 : 0;
    });
  } finally {
    await to?.close();
    await from.close();
  }
}

