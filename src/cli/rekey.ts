import fs from 'node:fs';
import path from 'node:path';
import { summaryOf } from './commands.js';
import { nodeFs } from '../durable/fsLayer.js';
import { StoreLayout } from '../backends/file/layout.js';
import { rekeyStore } from '../backends/file/rekey.js';
import { CliError, type Command, parseCommand, STORE_HELP, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { consentOf, goAhead } from './consent.js';
import { KeyOptionError, loadKey } from './encryptionKey.js';
import { err, out } from './output.js';
import { type Job, longWork } from './longWork.js';
import { reindexDirectory } from './reindex.js';
import { type Work, WorkInterrupted } from '../domain/work.js';
import type { StoreTarget } from './storeTarget.js';
import type { StoreKey } from '../durable/storeKey.js';

/** Every option rekey accepts (its usage lists each): the store's but --encryption-key-* (it takes --from-* and --to-*). */
const { 'encryption-key-env': _env, 'encryption-key-file': _file, ...STORE_WITHOUT_KEY } = STORE_OPTIONS;
const OPTIONS = { ...STORE_WITHOUT_KEY, 'from-env': { type: 'string' }, 'from-file': { type: 'string' }, 'to-env': { type: 'string' }, 'to-file': { type: 'string' }, decrypt: { type: 'boolean' }, yes: { type: 'boolean' } } as const satisfies CommandOptions;

export const rekeyCommand: Command = {
  name: 'rekey',
  summary: summaryOf('rekey'),
  options: OPTIONS,
  usage: `Usage: session-sidecar rekey --store DIR|URL [--from-env OLD | --from-file PATH] (--to-env NEW | --to-file PATH | --decrypt) [--yes]

Rewrites every journal, archived generation, state value and blob of a file store from the
current encryption key to a new one, crash-safely: an interrupted rekey leaves every file whole
under one of the two keys, the store is refused by servers and commands until the same command
is run again, and that run finishes the job. Index entries and list.cache are removed (rebuilt
from the journals). No sidecar may have the store open: a held writer lease refuses the rekey
before anything is changed. It asks first at a terminal; anywhere else it needs --yes (and
changes nothing without it, exit 1).

With a PostgreSQL store (--store postgres://..., --pg-schema NAME) every sealed text column and
blob is re-sealed in pages of rows, each page one transaction; every value names its key, so an
interrupted rekey leaves each value whole under one of the two keys, the store is refused until
the same command is run again, and that run finishes the job. A sidecar serving the store (or a
command changing it) refuses the rekey before anything is changed.

Options:
  --from-env NAME          the current key, base64 in $NAME (without --from-env and
                           --from-file the store is taken as plaintext, and encrypted)
  --from-file PATH         the current key read from PATH (mode 0600, owned by you)
  --to-env NAME            the new key, base64 in $NAME
  --to-file PATH           the new key read from PATH (mode 0600, owned by you)
  --decrypt                no new key: store every session in plaintext (only when asked so)
  --yes                    go ahead without asking (needed off a terminal)
${STORE_HELP.replace(/ {2}--encryption-key-env[\s\S]*?(?= {2}-h, --help)/, '')}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    let from;
    let to;
    try {
      from = loadKey({ env: p.values['from-env'] as string | undefined, file: p.values['from-file'] as string | undefined }, process.env, '--from');
      to = loadKey({ env: p.values['to-env'] as string | undefined, file: p.values['to-file'] as string | undefined }, process.env, '--to');
    } catch (e) {
      throw e instanceof KeyOptionError ? new CliError(e.message) : e;
    }
    if (!from && !to) throw new UsageError('give the current key (--from-env/--from-file), the new key (--to-env/--to-file), or both', this.name);
    const decrypt = p.values.decrypt === true;
    if (!to && !decrypt) throw new UsageError('give the new key (--to-env/--to-file), or --decrypt to store the sessions in plaintext', this.name);
    if (to && decrypt) throw new UsageError('--decrypt excludes --to-env/--to-file', this.name);
    const what = to ? (from ? 'rekeyed' : 'encrypted') : 'decrypted';
    const question = `Rewrite every session of ${p.root} ${to ? (from ? 'under the new key' : 'encrypted') : 'in plaintext'}?`;
    if (!(await goAhead(consentOf(p.values), question, 'session-sidecar rekey: nothing was changed'))) return 1;
    const target = p.target;
    return longWork('rekey', 'run the same command again (with the same keys) to finish: the store is refused by sidecars until then', async (job) => {
      const report = target.kind === 'postgres'
        ? await rekeyPg(target, from, to, job.work)
        : await rekeyStore(new StoreLayout(target.root), { fs: { ...nodeFs }, ...(from ? { from } : {}), ...(to ? { to } : {}), work: job.work });
      if (report.rewritten === 0 && report.skipped === 0) {
        job.progress.above(() => out(`${p.root} is already ${to ? 'under the new key' : 'plaintext'}: nothing to do\n`));
        return 0;
      }
      const units = target.kind === 'postgres' ? 'value(s)' : 'file(s)';
      job.progress.above(() => out(`${what} ${p.root}: ${report.sessions} session(s), ${report.rewritten} ${units} rewritten, ${report.skipped} already done\n`));
      if (target.kind === 'file' && !(await afterFileRekey(job, target, to))) return 130;
      job.progress.finish(`${report.sessions} session(s) ${what}`);
      return 0;
    });
  },
};

/**
 * A directory store after its rekey: index entries were removed with the old bytes, so they are
 * written anew from the new journals (list stays as fast as before; interrupted here, the store
 * is served: entries are a cache), and torn-tail evidence left unrewritten is pointed out.
 * False when a Ctrl-C stopped the reindex.
 */
async function afterFileRekey(job: Job, target: Extract<StoreTarget, { kind: 'file' }>, to: StoreKey | undefined): Promise<boolean> {
  const { key: _old, ...plain } = target;
  const r = await reindexDirectory(to ? { ...plain, key: to } : plain, job.work).catch((e: unknown) => {
    if (e instanceof WorkInterrupted) return undefined;
    throw e;
  });
  if (!r) return false;
  for (const f of r.failed) job.progress.above(() => err(`session-sidecar rekey: ${f.sessionId}: no index entry written: ${f.message}`));
  const evidence = filesIn(path.join(target.root, 'recovery'));
  if (evidence > 0) {
    job.progress.above(() => out(`note: recovery/ keeps ${evidence} file(s) of torn tails as they were written (not rewritten): remove them once inspected\n`));
  }
  return true;
}

/** A PostgreSQL store's rekey (src/backends/postgres/rekey.ts) on connections of its own; errors mapped, text-free. */
async function rekeyPg(t: Extract<StoreTarget, { kind: 'postgres' }>, from: StoreKey | undefined, to: StoreKey | undefined, work: Work) {
  const [{ PgConnections }, { parsePostgresUrl }, { storeErrorOf }, { rekeyPgStore }] = await Promise.all([
    import('../backends/postgres/pool.js'), import('../backends/postgres/url.js'), import('../backends/postgres/errors.js'), import('../backends/postgres/rekey.js'),
  ]);
  try {
    const conns = await PgConnections.open({ target: parsePostgresUrl(t.url), schema: t.schema, max: 2, applicationName: 'session-sidecar-rekey' });
    try {
      return await rekeyPgStore(conns, t.schema, { ...(from ? { from } : {}), ...(to ? { to } : {}), work });
    } finally {
      await conns.close();
    }
  } catch (e) {
    throw e instanceof WorkInterrupted ? e : storeErrorOf(e);
  }
}

function filesIn(dir: string): number {
  try {
    return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0; // no recovery/ folder
  }
}
