import { summaryOf } from './commands.js';
import { CliError, type Command, type CommandOptions, parseCommand, STORE_HELP, STORE_OPTIONS } from './common.js';
import { consentOf, goAhead } from './consent.js';
import { err, out } from './output.js';
import { damagedText, salvaged } from './salvage.js';
import { nodeFs } from '../durable/fsLayer.js';
import { StoreLayout } from '../backends/file/layout.js';
import { repairSession } from '../backends/file/repair.js';
import { reindexDirectory } from './reindex.js';

const OPTIONS = { ...STORE_OPTIONS, yes: { type: 'boolean' }, json: { type: 'boolean' } } as const satisfies CommandOptions;

/** `repair SESSION`: a damaged journal rewritten of its intact records, the damaged one kept as evidence (backends/file/repair.ts). */
export const repairCommand: Command = {
  name: 'repair',
  summary: summaryOf('repair'),
  options: OPTIONS,
  usage: `Usage: session-sidecar repair <session-id> [--yes] [--json] [options]

Rewrites a session whose journal is damaged in its middle (a line that does not verify, with
intact lines after it: the store refuses to open such a session, and verify reports it) so that
it opens again. The damaged journal is kept, untouched, as recovery/<id>/<ms>-damaged-journal.jsonl;
the new one holds the header and every intact record byte for byte, with the same seqs. Each
seq whose record was lost is taken by an event record of type session-sidecar.repair naming it,
and a last such event lists every damaged span (lines, offset, bytes, why) and the evidence
file. Nothing else changes. A torn tail alone (the end of a write that was never acknowledged)
needs no repair: the next sidecar to open the session cuts it, keeping its bytes.

It says what it would remove and asks first on a terminal; off a terminal it needs --yes.
A session open in a running sidecar is refused. Read what is intact without changing anything
with the show command's salvage option. A directory store only.

Options:
  --yes                    go ahead without asking (needed off a terminal)
  --json                   the result as JSON: {sessionId, repaired, kept, damaged, lostSeqs, evidence}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 1, max: 1, names: 'session id' });
    if (!p) return out(this.usage), 0;
    if (p.target.kind !== 'file') throw new CliError('repair rewrites a directory store\'s journal: a PostgreSQL store checks every row on its own (session-sidecar verify)');
    const { id, salvage } = await salvaged(p.target, p.positionals[0] as string);
    const damaged = salvage.entries.flatMap((e) => ('damaged' in e ? [e.damaged] : []));
    if (damaged.length === 0) {
      if (p.values.json) out(`${JSON.stringify({ sessionId: id, repaired: false, kept: salvage.entries.length, damaged: [], lostSeqs: [] }, null, 2)}\n`);
      else out(`session ${id}: nothing is damaged; nothing to repair\n`);
      return 0;
    }
    for (const d of damaged) err(`session-sidecar repair: ${damagedText(id, d)}`);
    const kept = salvage.entries.length - damaged.length;
    const question = `Rewrite session ${id} of its ${kept} intact record(s), keeping the damaged journal under recovery/?`;
    if (!(await goAhead(consentOf(p.values), question, `session-sidecar repair: nothing was changed (session ${id})`))) return 1;
    const key = p.target.key;
    const result = await repairSession({ ...nodeFs }, new StoreLayout(p.target.root), id, key ? { key } : {});
    // The index entry, written by a writable open: also the proof that the store opens it now.
    const opened = await reindexDirectory(p.target, undefined, [id]);
    if (p.values.json) out(`${JSON.stringify(result, null, 2)}\n`);
    else out(`repaired session ${id}: ${result.kept} record(s) kept, ${result.damaged.length} damaged span(s) removed${result.lostSeqs.length ? ` (seq ${result.lostSeqs.join(', ')} now a repair event)` : ''}; the damaged journal is ${result.evidence}\n`);
    const failed = opened.failed[0];
    if (failed) throw new CliError(`session ${id} was rewritten but does not open: ${failed.message} (the damaged journal is ${result.evidence})`);
    return 0;
  },
};
