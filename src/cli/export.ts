import { summaryOf } from './commands.js';
import { longWork } from './longWork.js';
import { PAGER_HELP, PAGER_OPTIONS, usePager } from './pager.js';
import type { OpenedSession, StoredRecord } from '../domain/types.js';
import { type Command, openSession, openStore, parseCommand, STORE_HELP, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { out } from './output.js';
import { fullHistory } from './records.js';
import { damagedText, salvaged } from './salvage.js';
import { localTime, safeText } from './output.js';
import { argsText, blobLabel, contentText } from './renderText.js';
import { CHOICE_HELP, CHOICE_OPTIONS, choiceOf, chosenId, chosenIdIn } from './sessionChoice.js';
import { AGENTS_ITEM_TYPE, agentsItemAsMessage } from './agentsItem.js';
import { type LangGraphView, langGraphView, MessageLedger, stepText } from './langgraphView.js';

/** Every option export accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, format: { type: 'string' }, salvage: { type: 'boolean' }, ...CHOICE_OPTIONS, ...PAGER_OPTIONS } as const satisfies CommandOptions;

export const exportCommand: Command = {
  name: 'export',
  summary: summaryOf('export'),
  options: OPTIONS,
  usage: `Usage: session-sidecar export <session-id> | --last | --cwd DIR --format jsonl|markdown [--salvage] [options]

Writes a session's whole history to stdout: the records of its archived generations (from
before compactions) and of its journal, each seq once, in order.
  jsonl      one stored record per line (a checkpoint appears only where its archive is gone)
  markdown   a readable document: the session's details, then a heading per turn and message,
             tool calls and results in code blocks, compactions marked where they happened

Options:
  --format FORMAT          jsonl or markdown (required)
  --salvage                (a damaged session of a directory store) its journal's records that
                           still verify, each damaged span marked ({"damaged": ...} in jsonl)
${CHOICE_HELP}
${PAGER_HELP}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 1, names: 'session id' });
    if (!p) return out(this.usage), 0;
    const format = p.values.format;
    if (format === undefined) throw new UsageError('--format is required (jsonl or markdown)');
    if (format !== 'jsonl' && format !== 'markdown' && format !== 'md') throw new UsageError('--format must be jsonl or markdown');
    const choice = choiceOf(p, this.name);
    usePager(p.values);
    if (p.values.salvage) {
      // a damaged session: its active journal's records that verify, the damaged spans marked
      const { id, salvage, session } = await salvaged(p.target, await chosenIdIn(p.target, choice));
      if (format === 'jsonl') for (const e of salvage.entries) out(`${JSON.stringify('record' in e ? e.record : { damaged: e.damaged })}\n`);
      else {
        const md = new MarkdownWriter(session);
        out(safeText(md.head()));
        for (const e of salvage.entries) out(safeText('record' in e ? md.record(e.record as unknown as StoredRecord, false) : `> **${damagedText(id, e.damaged)}**\n\n`));
      }
      return 0;
    }
    const store = await openStore(p.target);
    const session = await openSession(store, await chosenId(store, choice));
    // A large session takes a while: N of M records on a terminal's stderr; Ctrl-C stops between records.
    return longWork('export', 'the output is incomplete: run the same command again', async (job) => {
      job.work.phase?.('exporting', session.lastSeq, 'records');
      try {
        let n = 0;
        const history = fullHistory(store, session.sessionId);
        const md = format === 'jsonl' ? undefined : new MarkdownWriter(session);
        // Control characters (an escape sequence in a tool's output) are shown, never kept raw.
        if (md) out(safeText(md.head()));
        for await (const { record, superseded } of history) {
          if (md) out(safeText(md.record(record, superseded)));
          else if (!superseded) out(`${JSON.stringify(record)}\n`);
          job.work.step?.();
          if (++n % 500 === 0 && await job.work.shouldStop?.()) return 130;
        }
        return 0;
      } finally {
        await store.closeAll();
      }
    });
  },
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A fenced code block whose fence is longer than any run of backticks inside. */
export function fence(text: string, lang = ''): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const f = '`'.repeat(Math.max(3, longest + 1));
  return `${f}${lang}\n${text.replace(/\n+$/, '')}\n${f}\n`;
}

/** Text on one line for a heading or an inline mention: no newlines, no markup that breaks it. */
function inline(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[`*_[\]<>#|]/g, (c) => `\\${c}`).trim();
}

function code(text: string): string {
  const t = text.replace(/\s+/g, ' ');
  const longest = Math.max(0, ...Array.from(t.matchAll(/`+/g), (m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return longest > 0 ? `${f} ${t} ${f}` : `${f}${t}${f}`;
}

/** A time in the Markdown export: local, with its offset (the document may be read elsewhere). */
function when(ts: unknown): string {
  return typeof ts === 'string' ? localTime(ts, true) : '';
}

const ROLE_TITLE: Record<string, string> = { user: 'User', assistant: 'Assistant', tool: 'Tool result', system: 'System' };

/** A checkpoint: where a compaction happened, or (superseded: false) a summary whose originals are gone. */
function checkpoint(rec: StoredRecord, meta: string, superseded: boolean): string {
  const summary = typeof rec.summary === 'string' ? rec.summary : '';
  const title = superseded
    ? `Compacted here: records through #${String(rec.throughSeq ?? rec.seq)} were summarized (generation ${String(rec.generation)})`
    : `Summary of records through #${String(rec.throughSeq ?? rec.seq)} (their originals are not in the store)`;
  return `---\n\n**${title}** — ${meta}\n\n${summary.split('\n').map((l) => `> ${l}`.trimEnd()).join('\n')}\n\n---\n\n`;
}

class MarkdownWriter {
  private turns = 0;
  private inTurn = false;
  private readonly toolNames = new Map<string, string>();
  /** The LangGraph messages written so far (a checkpoint shows only the new ones). */
  private readonly ledger = new MessageLedger();

  constructor(private readonly session: OpenedSession) {}

  head(): string {
    const s = this.session;
    const lines = [`# ${inline(s.title ?? `Session ${s.sessionId}`)}`, ''];
    lines.push(`- **Session:** ${code(s.sessionId)}`);
    lines.push(`- **Created:** ${when(s.createdAt)}`);
    lines.push(`- **Records:** ${s.lastSeq}`);
    if (s.cwd) lines.push(`- **Working directory:** ${code(s.cwd)}`);
    const llm = [s.llm?.provider, s.llm?.model].filter(Boolean).join(' / ');
    if (llm) lines.push(`- **Model:** ${inline(llm)}`);
    if (s.parent) {
      lines.push(`- **${s.parent.relation === 'fork' ? 'Forked from' : 'Continues'}:** ${code(s.parent.sessionId)}${s.parent.atSeq !== undefined ? ` at #${s.parent.atSeq}` : ''}`);
    }
    lines.push('');
    if (s.systemPrompt) lines.push('## System prompt', '', fence(s.systemPrompt, 'text'));
    return `${lines.join('\n')}\n`;
  }

  record(rec: StoredRecord, superseded: boolean): string {
    const meta = `*#${rec.seq} · ${when(rec.ts)}*`;
    const render = this.kinds.get(rec.kind);
    return render ? render(rec, meta, superseded) : this.other(rec, meta);
  }

  /** One writer per record kind; a kind not in it is written as its members in JSON. */
  private readonly kinds = new Map<string, (rec: StoredRecord, meta: string, superseded: boolean) => string>([
    ['message', (rec, meta) => this.message(rec, meta)],
    ['turn', (rec, meta) => this.turn(rec, meta)],
    ['checkpoint', (rec, meta, superseded) => checkpoint(rec, meta, superseded)],
    ['interruption', (rec, meta) => this.interruption(rec, meta)],
    ['toolStream', (rec, meta) => this.toolStream(rec, meta)],
    ['event', (rec, meta) => this.event(rec, meta)],
  ]);

  /** A turn's start opens a section; its other transitions are quoted lines in it. */
  private turn(rec: StoredRecord, meta: string): string {
    if (rec.event === 'start') {
      this.turns += 1;
      this.inTurn = true;
      return `## Turn ${this.turns}${typeof rec.turnKind === 'string' && rec.turnKind !== 'user' ? ` (${inline(rec.turnKind)})` : ''}\n\n${meta}\n\n`;
    }
    const what = [rec.event, rec.phase, rec.outcome].filter((v) => typeof v === 'string').map((v) => inline(v as string)).join(' ');
    if (rec.event === 'finish') this.inTurn = false;
    return `> Turn ${what}${typeof rec.error === 'string' ? `: ${inline(rec.error)}` : ''} — ${meta}\n\n`;
  }

  private interruption(rec: StoredRecord, meta: string): string {
    let text = `${this.heading(`Interruption: ${inline(String(rec.reason ?? ''))}`)}${meta}${rec.phase ? ` · during ${inline(String(rec.phase))}` : ''}\n\n`;
    if (typeof rec.assistantText === 'string' && rec.assistantText !== '') text += `Partial answer:\n\n${rec.assistantText}\n\n`;
    text += this.toolCalls(rec.toolCalls);
    for (const r of Array.isArray(rec.toolResults) ? rec.toolResults : []) {
      if (!isObj(r)) continue;
      const result = typeof r.result === 'string' ? r.result : JSON.stringify(r.result, null, 2);
      text += `**Result of ${code(String(r.name ?? '?'))}**${r.id ? ` (${code(String(r.id))})` : ''}\n\n${fence(result ?? '')}\n`;
    }
    return text;
  }

  private toolStream(rec: StoredRecord, meta: string): string {
    const text = typeof rec.text === 'string' ? rec.text : blobLabel(rec.text) ?? blobLabel(rec.dataBase64) ?? (typeof rec.dataBase64 === 'string' ? '[binary data]' : '');
    return `${this.heading(`Tool run #${String(rec.toolSeq)} ${inline(String(rec.stream ?? 'output'))}`)}${meta}\n\n${fence(text)}\n`;
  }

  private event(rec: StoredRecord, meta: string): string {
    const item = rec.type === AGENTS_ITEM_TYPE ? agentsItemAsMessage(rec.payload) : undefined;
    if (item) return this.message({ ...rec, message: item } as StoredRecord, meta);
    const graph = langGraphView(rec);
    if (graph) return this.langGraph(graph, meta);
    return `${this.heading(`Event ${code(String(rec.type ?? ''))}`)}${meta}\n\n${rec.payload === null || rec.payload === undefined ? '' : fence(JSON.stringify(rec.payload, null, 2), 'json')}\n`;
  }

  /** A LangGraph checkpoint or task: a quoted line, then the messages no earlier record showed, and other channels as JSON. */
  private langGraph(v: LangGraphView, meta: string): string {
    const thread = `thread ${code(v.threadId)}${v.ns !== '' ? `, namespace ${code(v.ns)}` : ''}`;
    let text = v.kind === 'checkpoint'
      ? `> **Graph checkpoint, ${inline(stepText(v))}** ${code(v.checkpointId)}${v.parentId ? ` (parent ${code(v.parentId)})` : ''} · ${thread} — ${meta}\n\n`
      : `> **Graph task ${code(v.node ?? '?')}** wrote for checkpoint ${code(v.checkpointId)} · ${thread} — ${meta}\n\n`;
    for (const c of v.values) {
      if (c.messages) {
        for (const m of this.ledger.fresh(c.messages, v.kind === 'writes')) text += this.messageText(m, meta);
      } else text += `**Channel ${code(c.channel)}**\n\n${fence(typeof c.value === 'string' ? c.value : JSON.stringify(c.value, null, 2), 'json')}\n`;
    }
    return text;
  }

  private other(rec: StoredRecord, meta: string): string {
    const { seq: _s, ts: _t, kind, turnId: _turn, ...rest } = rec;
    return `${this.heading(`Record ${code(String(kind))}`)}${meta}\n\n${fence(JSON.stringify(rest, null, 2), 'json')}\n`;
  }

  private heading(text: string): string {
    return `${this.inTurn ? '###' : '##'} ${text}\n\n`;
  }

  private message(rec: StoredRecord, meta: string): string {
    return this.messageText(isObj(rec.message) ? rec.message : {}, meta);
  }

  private messageText(m: Obj, meta: string): string {
    const role = typeof m.role === 'string' ? m.role : '?';
    let title = ROLE_TITLE[role] ?? inline(role.charAt(0).toUpperCase() + role.slice(1));
    if (role === 'tool') {
      const id = typeof m.toolCallId === 'string' ? m.toolCallId : undefined;
      const name = typeof m.name === 'string' ? m.name : id ? this.toolNames.get(id) : undefined;
      if (name) title += `: ${code(name)}`;
    }
    let text = `${this.heading(title)}${meta}\n\n`;
    const content = contentText(m.content);
    if (content !== '') text += role === 'tool' ? fence(content) + '\n' : `${content.replace(/\n+$/, '')}\n\n`;
    return text + this.toolCalls(m.toolCalls);
  }

  private toolCalls(calls: unknown): string {
    return (Array.isArray(calls) ? calls : []).map((call) => this.toolCall(call)).join('');
  }

  private toolCall(call: unknown): string {
    if (!isObj(call)) return '';
    const name = typeof call.name === 'string' ? call.name : '?';
    if (typeof call.id === 'string') this.toolNames.set(call.id, name);
    let args: string;
    if (typeof call.arguments === 'string') {
      try {
        args = JSON.stringify(JSON.parse(call.arguments), null, 2);
      } catch {
        args = call.arguments;
      }
    } else args = typeof call.arguments === 'object' && call.arguments !== null ? JSON.stringify(call.arguments, null, 2) : argsText(call.arguments, Number.MAX_SAFE_INTEGER);
    return `**Tool call ${code(name)}**${typeof call.id === 'string' ? ` (${code(call.id)})` : ''}\n\n${fence(args, 'json')}\n`;
  }
}
