import { summaryOf } from './commands.js';
import { PAGER_HELP, PAGER_OPTIONS, usePager } from './pager.js';
import type { StoredRecord, SessionStore } from '../domain/types.js';
import { type Command, openSession, openStore, parseCommand, STORE_HELP, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { out, stdoutStyle } from './output.js';
import { fullHistory, recordsOf } from './records.js';
import { showSalvaged } from './salvage.js';
import { TranscriptRenderer } from './render.js';
import { usageLine } from './usageText.js';
import { CHOICE_HELP, CHOICE_OPTIONS, choiceOf, chosenId, chosenIdIn } from './sessionChoice.js';

/** Every option show accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, raw: { type: 'boolean' }, all: { type: 'boolean' }, full: { type: 'boolean' }, salvage: { type: 'boolean' }, ...CHOICE_OPTIONS, ...PAGER_OPTIONS } as const satisfies CommandOptions;

export const showCommand: Command = {
  name: 'show',
  summary: summaryOf('show'),
  options: OPTIONS,
  usage: `Usage: session-sidecar show <session-id> | --last | --cwd DIR [--json | --raw] [options]

Prints a session as a readable transcript: messages by role (text content; other parts named),
tool calls (name and abbreviated arguments), tool results, interruptions, turn records,
checkpoints (their summary), rewinds and events; the header shows the token usage totals. Colors only on a terminal, and never with NO_COLOR set.
A unique prefix of a session id is enough.

Options:
  --json                   the stored records as one JSON array
  --raw                    the stored records as JSON Lines, one per line
  --all                    include the records of archived generations (before compactions)
  --full                   do not abbreviate tool outputs, arguments and payloads
  --salvage                (a damaged session of a directory store) every record that still
                           verifies, and where the damaged lines are; reads only
${CHOICE_HELP}
${PAGER_HELP}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 1, names: 'session id' });
    if (!p) return out(this.usage), 0;
    if (p.values.json && p.values.raw) throw new UsageError('--json and --raw exclude each other');
    const choice = choiceOf(p, this.name);
    usePager(p.values);
    if (p.values.salvage) return showSalvaged(p.target, await chosenIdIn(p.target, choice), { json: p.values.json === true, raw: p.values.raw === true, full: p.values.full === true });
    const store = await openStore(p.target);
    const session = await openSession(store, await chosenId(store, choice));
    const id = session.sessionId;
    const renderer = new TranscriptRenderer({ style: stdoutStyle(), full: p.values.full === true });
    const marks = new Map<StoredRecord, string>();
    const records = p.values.all ? withoutSuperseded(fullHistory(store, id), (r) => marks.set(r, renderer.compactionMark(r))) : recordsOf(store, id);
    if (p.values.json) {
      let first = true;
      for await (const r of records) {
        out(`${first ? '[\n' : ',\n'}${JSON.stringify(r)}`);
        first = false;
      }
      out(first ? '[]\n' : '\n]\n');
    } else if (p.values.raw) {
      for await (const r of records) out(`${JSON.stringify(r)}\n`);
    } else {
      const usage = usageLine(await store.usage(id));
      out(renderer.header(session, [...(p.values.all ? [] : await archivedNote(store, id)), ...(usage ? [usage] : [])]));
      for await (const r of records) {
        for (const [rec, mark] of marks) {
          out(mark);
          marks.delete(rec);
        }
        out(renderer.record(r));
      }
      for (const mark of marks.values()) out(mark);
    }
    await store.closeAll();
    return 0;
  },
};

/** The records of a full history; the checkpoints it supersedes go to `onMark` (where a compaction happened). */
async function* withoutSuperseded(
  history: AsyncGenerator<{ record: StoredRecord; superseded: boolean }>, onMark: (r: StoredRecord) => void,
): AsyncGenerator<StoredRecord> {
  for await (const { record, superseded } of history) {
    if (superseded) onMark(record);
    else yield record;
  }
}

async function archivedNote(store: SessionStore, id: string): Promise<string[]> {
  const history = await store.history(id);
  if (history.length === 0) return [];
  const last = history[history.length - 1];
  return [`compacted ${history.length} time${history.length === 1 ? '' : 's'}: records through #${last?.throughSeq} are summarized by the checkpoint (--all shows the archived records)`];
}
