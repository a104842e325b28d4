import { summaryOf } from './commands.js';
import fs from 'node:fs';
import { type Finding, type SessionReport, type VerifyReport, verifyStore } from '../backends/file/verify/index.js';
import { CliError, type Command, parseCommand, STORE_HELP, type CommandOptions, STORE_OPTIONS } from './common.js';
import { humanBytes, out, stdoutStyle, type Style } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';
import { longWork } from './longWork.js';
import { verifyPostgres } from './verifyPg.js';


/** Every option verify accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, strict: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' } } as const satisfies CommandOptions;

export const verifyCommand: Command = {
  name: 'verify',
  summary: summaryOf('verify'),
  options: OPTIONS,
  usage: `Usage: session-sidecar verify [<session-id>] [options]

Checks every session of the store (or one): each journal's header, checksums, canonical lines,
seq continuity and batches; each archived generation (history/<id>/<gen>.jsonl) and the chain
of compactions; each index entry against its journal (drift); the blobs that records reference
(there, of the size referenced, sha256 matching the name: each blob is read whole); file modes
(0600 files, 0700 directories) and ownership; recovery evidence and leases. Over the whole
store it also lists blobs nothing references and temp files of unfinished blob writes.
Read-only: nothing is repaired (a torn tail is reported, never cut) and a running sidecar is
not disturbed.

On a PostgreSQL store (--store postgres://...) it checks, read-only at the server: every
session's header checksum; every record of every generation (archived ones included): its
checksum, seqs following one by one, the session's lastSeq and record count; state value
checksums; every blob's sha256 and size, the blobs records reference (present, of the size
referenced) and the blobs nothing references; leases (a live holder or a stale one is named:
host, pid, sidecar id).

Prints one line per session (OK, or its problems), the store's own findings and a summary.
Exit code 0 when no errors were found, 1 otherwise (warnings too with --strict).

Options:
  --json                   the report as JSON
  --strict                 warnings make the exit code 1 too
  -v, --verbose            also print notes (recovery evidence, leases, index lag, unreferenced
                           blobs) where there is no problem
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 1, names: 'session id' });
    if (!p) return out(this.usage), 0;
    if (p.target.kind === 'postgres') {
      const report = await verifyPostgres(p.target, p.positionals[0]);
      return finish(report, p.values);
    }
    if (!fs.lstatSync(p.root, { throwIfNoEntry: false })?.isDirectory()) throw new CliError(`no session store at ${p.root} (use --store DIR or --workspace DIR)`);
    const key = p.target.key;
    return longWork('verify', "nothing was reported; run 'session-sidecar verify' again", async (job) => {
      const report = await verifyStore(p.root, { fs: readOnlyFs(), sessionId: p.positionals[0], work: job.work, ...(key ? { encryptionKey: key } : {}) });
      job.progress.clear();
      return finish(report, p.values);
    });
  },
};

function finish(report: VerifyReport, values: Record<string, string | boolean | undefined>): number {
  const failed = !report.ok || (values.strict === true && report.totals.warnings > 0);
  if (values.json) out(`${JSON.stringify(report, null, 2)}\n`);
  else out(renderReport(report, stdoutStyle(), values.verbose === true));
  return failed ? 1 : 0;
}

function renderReport(r: VerifyReport, s: Style, verbose: boolean): string {
  const lines: string[] = [];
  const mark = (f: Finding) => (f.severity === 'error' ? s.red('error') : f.severity === 'warning' ? s.yellow('warning') : s.dim('note'));
  const finding = (f: Finding, indent: string) => {
    const where = f.file ? s.dim(` (${f.file}${f.line !== undefined ? `, line ${f.line}` : ''})`) : '';
    return `${indent}${mark(f)}: ${f.message}${where}`;
  };
  let shownNotes = 0;
  const shown = (findings: Finding[]) => {
    const problems = findings.some((f) => f.severity !== 'note');
    const list = findings.filter((f) => f.severity !== 'note' || verbose || problems);
    shownNotes += list.filter((f) => f.severity === 'note').length;
    return list;
  };
  const store = shown(r.store);
  if (store.length > 0) {
    lines.push(s.bold(`store ${r.root}`));
    for (const f of store) lines.push(finding(f, '  '));
  }
  for (const sess of r.sessions) {
    const errors = sess.findings.filter((f) => f.severity === 'error').length;
    const warnings = sess.findings.filter((f) => f.severity === 'warning').length;
    const label = `${sess.sessionId}${sess.location === 'trash' ? ' (deleted, in trash)' : ''}`;
    const status = errors > 0 ? s.red(s.bold('FAIL')) : warnings > 0 ? s.yellow('WARN') : s.green('OK  ');
    lines.push(`${status} ${label}  ${s.dim(summary(sess))}`);
    for (const f of shown(sess.findings)) lines.push(finding(f, '       '));
  }
  const t = r.totals;
  const counts = [`${t.errors} error${t.errors === 1 ? '' : 's'}`, `${t.warnings} warning${t.warnings === 1 ? '' : 's'}`];
  const hidden = t.notes - shownNotes;
  if (hidden > 0) counts.push(`${hidden} note${hidden === 1 ? '' : 's'} (-v shows ${hidden === 1 ? 'it' : 'them'})`);
  lines.push('');
  lines.push(`${r.ok ? s.green('OK') : s.red(s.bold('PROBLEMS FOUND'))}: ${t.sessions} session${t.sessions === 1 ? '' : 's'}, ${t.journals} journals, `
    + `${t.archives} archived generations, ${t.indexEntries} index entries, ${humanBytes(t.bytes)} verified; ${counts.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

function summary(r: SessionReport): string {
  if (!r.journal) return r.findings.some((f) => f.check === 'journal' && f.severity === 'error') ? 'journal damaged' : 'no journal';
  const j = r.journal;
  const parts = [`${j.lastSeq} records`, humanBytes(r.bytes)];
  if (j.generation > 0) parts.push(`generation ${j.generation}, ${r.archives} archived`);
  return parts.join(', ');
}

/** A progress bar on stderr, only when stderr is a terminal and the store is large. */
