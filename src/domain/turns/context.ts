import type { ContextMessage, PruneOptions, SessionHeader } from '../types.js';
import { liveSeqs } from '../rewind.js';
import { stringifyExact } from '../exactJson.js';

export const CANCELLED_RESULT = '[cancelled: the tool call did not complete; no result was recorded]';
const DEFAULT_KEEP_RECENT = 3;
const DEFAULT_MAX_CHARS = 2000;

type Rec = Record<string, unknown> & { kind: string };

/** The kinds a context is built from: every other line is skipped unparsed (runtime records). */
export const CONVERSATION_KINDS: ReadonlySet<string> = new Set(['message', 'interruption', 'checkpoint', 'rewind']);
type Call = { id: string; name: string };

/**
 * Rebuilds the conversation to send to a provider: the system prompt, then the messages in
 * journal order, such that every assistant tool call is answered before the next non-tool
 * message (a provider refuses anything else). An interrupted turn's observed tool results
 * answer their calls; partial tool calls are never replayed; calls left without a result
 * (the agent died mid-tool) get a synthetic "cancelled" result. Records a rewind undid (after
 * its toSeq, before it: domain/rewind.ts) are left out, so the context is that of the session
 * as of toSeq plus what followed the rewind.
 */
export class ContextBuilder {
  private readonly messages: ContextMessage[] = [];
  private open: Call[] = [];
  /** Every tool call id an assistant message in the context declared. */
  private readonly declared = new Set<string>();

  /** Records in seq order, kept until finish: a later rewind may leave some of them out. */
  private readonly records: Rec[] = [];
  private readonly rewinds: Array<{ seq: number; toSeq: number }> = [];

  constructor(header: SessionHeader) {
    if (header.systemPrompt) this.messages.push({ role: 'system', content: header.systemPrompt });
  }

  add(rec: Rec): void {
    if (rec.kind === 'rewind') {
      if (typeof rec.seq === 'number' && typeof rec.toSeq === 'number') this.rewinds.push({ seq: rec.seq, toSeq: rec.toSeq });
      return;
    }
    this.records.push(rec);
  }

  finish(prune?: PruneOptions): ContextMessage[] {
    const live = liveSeqs(this.rewinds, Number.MAX_SAFE_INTEGER);
    for (const rec of this.records) if (typeof rec.seq !== 'number' || live(rec.seq)) this.apply(rec);
    this.answerOpenCalls();
    return prune ? pruneToolOutputs(this.messages, prune) : this.messages;
  }

  private apply(rec: Rec): void {
    if (rec.kind === 'checkpoint' && typeof rec.summary === 'string') {
      // The summary stands in place of every record it covers (they are in the archive).
      this.addMessage({ role: 'user', content: rec.summary });
    } else if (rec.kind === 'message') this.addMessage(rec.message as ContextMessage);
    else if (rec.kind === 'interruption') this.addInterruption(rec);
  }

  private addMessage(m: ContextMessage): void {
    if (m.role === 'tool') {
      const id = m.toolCallId;
      // A result whose call is not in the context (a checkpoint summarized the call) would be
      // refused by a provider: it goes with the summarized part.
      if (typeof id === 'string' && !this.declared.has(id)) return;
      this.open = this.open.filter((c) => c.id !== id);
      this.messages.push(m);
      return;
    }
    this.answerOpenCalls();
    this.messages.push(m);
    if (m.role === 'assistant' && Array.isArray(m.toolCalls)) {
      this.open = m.toolCalls.flatMap((c: { id?: unknown; name?: unknown }) =>
        typeof c?.id === 'string' ? [{ id: c.id, name: typeof c.name === 'string' ? c.name : '' }] : []);
      for (const c of this.open) this.declared.add(c.id);
    }
  }

  private addInterruption(rec: Rec): void {
    if (rec.phase === 'executingTools' && Array.isArray(rec.toolResults)) {
      for (const r of rec.toolResults as Array<{ id?: unknown; name?: unknown; result?: unknown }>) {
        const call = this.open.find((c) => c.id === r.id);
        if (!call) continue; // only calls an assistant message declared and nothing answered yet
        this.addMessage({ role: 'tool', toolCallId: call.id, name: call.name, content: typeof r.result === 'string' ? r.result : stringifyExact(r.result ?? null) });
      }
    }
    if (typeof rec.assistantText === 'string' && rec.assistantText.trim() !== '') {
      this.addMessage({ role: 'assistant', content: rec.assistantText }); // partial text, never its partial tool calls
    }
  }

  private answerOpenCalls(): void {
    for (const c of this.open) this.messages.push({ role: 'tool', toolCallId: c.id, name: c.name, content: CANCELLED_RESULT });
    this.open = [];
  }
}

/**
 * Shortens old tool outputs: all but the newest `keepRecentToolOutputs` tool messages keep at
 * most `maxToolOutputChars` characters of string content. A pure function of its input: the
 * same history gives the same context after any number of restarts.
 */
export function pruneToolOutputs(messages: ContextMessage[], opts: PruneOptions): ContextMessage[] {
  const keep = opts.keepRecentToolOutputs ?? DEFAULT_KEEP_RECENT;
  const max = opts.maxToolOutputChars ?? DEFAULT_MAX_CHARS;
  const toolIdx = messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const old = new Set(toolIdx.slice(0, Math.max(0, toolIdx.length - keep)));
  return messages.map((m, i) => {
    if (!old.has(i) || typeof m.content !== 'string' || m.content.length <= max) return m;
    const cut = cutAt(m.content, max);
    return { ...m, content: `${m.content.slice(0, cut)}\n[… ${m.content.length - cut} characters pruned]` };
  });
}

/** `max`, or one less when that would split a surrogate pair (a lone surrogate is not valid UTF-8 for a provider). */
function cutAt(text: string, max: number): number {
  if (max === 0) return 0;
  const last = text.charCodeAt(max - 1);
  const next = text.charCodeAt(max);
  return last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? max - 1 : max;
}
