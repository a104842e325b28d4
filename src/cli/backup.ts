import fs from 'node:fs';
import path from 'node:path';
import { summaryOf } from './commands.js';
import { CliError, type Command, type CommandOptions, parseCommand, STORE_HELP, STORE_OPTIONS } from './common.js';
import { backupStore, type BackupResult, INCOMPLETE_MARKER, publishBackup } from '../backends/file/backup.js';
import { verifyStore } from '../backends/file/verify/index.js';
import { longWork } from './longWork.js';
import { humanBytes, out } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';

const OPTIONS = { ...STORE_OPTIONS, to: { type: 'string' }, json: { type: 'boolean' } } as const satisfies CommandOptions;

/** `backup --to DIR`: a consistent, verified copy of a live directory store (backends/file/backup.ts). */
export const backupCommand: Command = {
  name: 'backup',
  summary: summaryOf('backup'),
  options: OPTIONS,
  usage: `Usage: session-sidecar backup --to DIR [--json] [options]

Copies a directory store, while its sidecars keep running, into DIR (which must not exist, or
be an empty directory, and must be outside the store). Each session is copied up to its last
complete, synced batch (a batch being written meanwhile is left for the next backup), then its
archives, state values, the trash, recovery evidence and the blobs; index entries are copied
only where they vouch for the copied bytes, so the copy lists as fast as the store. Every file
is written 0600 and fdatasynced, every directory 0700 and fsynced, all under DIR.incomplete,
which is verified (as 'session-sidecar verify' does) and only then renamed to DIR. A crash, a
failed verify or Ctrl-C leaves no DIR (run the same command again: it clears its own
DIR.incomplete). Sealed bytes stay sealed: the copy needs the same key.

To restore: stop the sidecars of the workspace, move its store aside, and move DIR to
<workspace>/.session-sidecar (or point --store at it). A PostgreSQL store is backed up with
pg_dump, or copied into a directory with 'session-sidecar migrate'.

Options:
  --to DIR                 where the backup goes (required)
  --json                   the result as JSON: {to, sessions, trashed, files, bytes, unreadable}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    if (p.target.kind !== 'file') throw new CliError('backup copies a directory store: back up PostgreSQL with pg_dump, or copy it into a directory with session-sidecar migrate');
    if (typeof p.values.to !== 'string' || p.values.to === '') throw new CliError('backup needs --to DIR (where the copy goes)');
    const root = path.resolve(p.target.root);
    const to = path.resolve(p.values.to);
    checkStore(root);
    checkDestination(root, to);
    const partial = `${to}.incomplete`;
    clearIncomplete(partial);
    const key = p.target.key;
    return longWork('backup', `nothing was kept; run 'session-sidecar backup --to ${p.values.to}' again`, async (job) => {
      let result: BackupResult;
      try {
        // Both stop at a safe point when asked (WorkInterrupted): nothing is published then.
        result = await backupStore(root, partial, { ...(key ? { key } : {}), work: job.work });
        const report = await verifyStore(partial, { fs: readOnlyFs(), work: job.work, ...(key ? { encryptionKey: key } : {}) });
        if (!report.ok) {
          const first = [...report.store, ...report.sessions.flatMap((s) => s.findings)].filter((f) => f.severity === 'error').slice(0, 5);
          throw new CliError(`the copy does not verify (${report.totals.errors} error(s); nothing was kept):\n${first.map((f) => `  ${f.message}`).join('\n')}\n(run 'session-sidecar verify' on the store itself)`);
        }
        publishBackup(partial, to);
      } catch (e) {
        fs.rmSync(partial, { recursive: true, force: true });
        throw e;
      }
      if (p.values.json) out(`${JSON.stringify({ to, ...result }, null, 2)}\n`);
      for (const u of result.unreadable) job.progress.above(() => process.stderr.write(`session-sidecar backup: ${u.sessionId} copied as it is (its journal cannot be read: ${u.message})\n`));
      job.progress.finish(`${result.sessions} session(s)${result.trashed ? ` and ${result.trashed} in the trash` : ''} copied to ${to}, ${humanBytes(result.bytes)} in ${result.files} files, verified`);
      return 0;
    });
  },
};

function checkStore(root: string): void {
  if (!fs.lstatSync(path.join(root, 'sessions'), { throwIfNoEntry: false })?.isDirectory()) throw new CliError(`no session store at ${root} (use --store DIR or --workspace DIR)`);
}

/** DIR must be new (or an empty directory, which is replaced), and not inside the store (nor the store inside it). */
function checkDestination(root: string, to: string): void {
  const inside = (a: string, b: string) => { const r = path.relative(a, b); return r === '' || (!r.startsWith('..') && !path.isAbsolute(r)); };
  if (inside(root, to)) throw new CliError(`--to ${to} is inside the store: choose a directory outside ${root}`);
  if (inside(to, root)) throw new CliError(`--to ${to} holds the store itself: choose a new directory`);
  const st = fs.lstatSync(to, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory() || fs.readdirSync(to).length > 0) throw new CliError(`--to ${to} already exists and is not an empty directory: nothing was copied (choose a new directory)`);
  fs.rmdirSync(to); // empty: the rename puts the backup in its place
}

/** A DIR.incomplete of an earlier run (its marker in it) is removed; anything else there is refused. */
function clearIncomplete(partial: string): void {
  const st = fs.lstatSync(partial, { throwIfNoEntry: false });
  if (!st) return;
  const ours = st.isDirectory() && (fs.lstatSync(path.join(partial, INCOMPLETE_MARKER), { throwIfNoEntry: false })?.isFile() || fs.readdirSync(partial).length === 0);
  if (!ours) throw new CliError(`${partial} exists and is not an unfinished backup: move it away first`);
  fs.rmSync(partial, { recursive: true, force: true });
}
