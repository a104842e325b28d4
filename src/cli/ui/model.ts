import type { HistoryEntry, OpenedSession, StoredRecord, SessionStore, UsageReport } from '../../domain/types.js';
import { safeText, makeStyle } from '../output.js';
import { fullHistory } from '../records.js';
import { AGENTS_ITEM_TYPE, agentsItemAsMessage } from '../agentsItem.js';
import { TranscriptRenderer } from '../render.js';
import { argsText, contentText } from '../renderText.js';
import { usageLine } from '../usageText.js';

/**
 * The transcript model the viewer's page draws: one entry per record, made from the same
 * reading as `show` (render.ts: contentText, argsText, TranscriptRenderer's plain text for the
 * kinds without a message) — never HTML. Every string is session text, hostile: the page puts
 * it in the DOM as textContent only. Control characters are shown (safeText), as on a terminal.
 */
export interface ToolCallView {
  id?: string;
  name: string;
  args: string;
}

export interface EntryView {
  seq: number;
  ts: string;
  kind: string;
  /** 'message': its role; otherwise the record's kind. */
  who: string;
  /** A tool result: the call's tool name and id. */
  result?: { name?: string; id?: string };
  text: string;
  toolCalls?: ToolCallView[];
  /** Shown folded (api records: the provider's raw traffic). */
  collapsed?: true;
  /** An archived generation's checkpoint, shown as where a compaction happened. */
  compaction?: true;
}

export interface SessionView {
  header: {
    sessionId: string; title: string | null; createdAt: string; lastSeq: number; cwd: string | null;
    model: string | null; parent: string | null; tags: string[]; systemPrompt: string | null;
  };
  turn: OpenedSession['turn'];
  usage: { line: string | null; report: UsageReport };
  generations: HistoryEntry[];
  records: EntryView[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? safeText(v) : undefined);

/** Makes the entries of one session's records, in order (tool names carried from calls to results). */
export class TranscriptModel {
  private readonly plain = new TranscriptRenderer({ style: makeStyle(false) });
  private readonly toolNames = new Map<string, string>();

  entry(rec: StoredRecord): EntryView {
    const base = { seq: rec.seq, ts: typeof rec.ts === 'string' ? rec.ts : '', kind: rec.kind };
    const item = rec.kind === 'event' && rec.type === AGENTS_ITEM_TYPE ? agentsItemAsMessage(rec.payload) : undefined;
    const m = rec.kind === 'message' && isObj(rec.message) ? rec.message : item;
    if (m) return { ...base, ...this.message(m) };
    // every other kind: the line `show` prints for it, without its `#seq  time` head
    const text = this.plain.record(rec).replace(/^#\d+ [^\n]*?  /, '').replace(/\n$/, '');
    return { ...base, who: rec.kind, text, ...(rec.kind === 'api' ? { collapsed: true as const } : {}) };
  }

  compaction(rec: StoredRecord): EntryView {
    return { seq: rec.seq, ts: typeof rec.ts === 'string' ? rec.ts : '', kind: 'checkpoint', who: 'compaction', text: this.plain.compactionMark(rec).replace(/\n$/, ''), compaction: true };
  }

  private message(m: Obj): Omit<EntryView, 'seq' | 'ts' | 'kind'> {
    const role = str(m.role) ?? '?';
    const calls = (Array.isArray(m.toolCalls) ? m.toolCalls : []).filter(isObj).map((c): ToolCallView => {
      const name = str(c.name) ?? '?';
      if (typeof c.id === 'string') this.toolNames.set(c.id, name);
      return { ...(typeof c.id === 'string' ? { id: safeText(c.id) } : {}), name, args: argsText(c.arguments, 4000) };
    });
    let result: EntryView['result'];
    if (role === 'tool') {
      const id = typeof m.toolCallId === 'string' ? m.toolCallId : undefined;
      const name = str(m.name) ?? (id ? this.toolNames.get(id) : undefined);
      result = { ...(name ? { name } : {}), ...(id ? { id: safeText(id) } : {}) };
    }
    return { who: role, text: safeText(contentText(m.content)), ...(calls.length ? { toolCalls: calls } : {}), ...(result ? { result } : {}) };
  }
}

/** A session's view: its header, turn state, usage, generations and whole history (archived generations included, as export reads it). */
export async function sessionView(store: SessionStore, session: OpenedSession): Promise<SessionView> {
  const id = session.sessionId;
  const model = new TranscriptModel();
  const records: EntryView[] = [];
  for await (const { record, superseded } of fullHistory(store, id)) records.push(superseded ? model.compaction(record) : model.entry(record));
  const report = await store.usage(id);
  const llm = [session.llm?.provider, session.llm?.model].filter(Boolean).join('/');
  return {
    header: {
      sessionId: id, title: session.title === undefined ? null : safeText(session.title), createdAt: session.createdAt, lastSeq: session.lastSeq,
      cwd: session.cwd ? safeText(session.cwd) : null, model: llm ? safeText(llm) : null,
      parent: session.parent ? `${session.parent.relation} of ${session.parent.sessionId}${session.parent.atSeq !== undefined ? ` at #${session.parent.atSeq}` : ''}` : null,
      tags: (session.tags ?? []).map(safeText), systemPrompt: session.systemPrompt ? safeText(session.systemPrompt) : null,
    },
    turn: session.turn,
    usage: { line: usageLine(report) ?? null, report },
    generations: await store.history(id),
    records,
  };
}
