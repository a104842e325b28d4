import type { OpenedSession, StoredRecord } from '../domain/types.js';
import { AGENTS_ITEM_TYPE, agentsItemAsMessage } from './agentsItem.js';
import { langGraphView, MessageLedger } from './langgraphView.js';
import { humanBytes, localTime, oneLine, safeText, type Style } from './output.js';
import { argsText, blobLabel, contentText, shortJson } from './renderText.js';
import { langGraphBlock } from './renderLangGraph.js';

/**
 * The human transcript of `show` and `tail`: one block per record, a header line
 * (`#seq  time  who`) and the content indented under it. Text from records is made safe for
 * terminals (control characters shown, never interpreted). Kinds it does not know are shown
 * as their members in short JSON, so new record kinds are never hidden.
 */
export interface RenderOptions {
  style: Style;
  /** Long tool outputs and payloads in full (default: abbreviated). */
  full?: boolean;
}

const INDENT = '    ';
const ARGS_CHARS = 160;
const PAYLOAD_CHARS = 200;

const OUTPUT_LINES = 12;
const OUTPUT_CHARS = 1500;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A record's time, local (the header line gives the zone's offset). */
function timeOf(ts: unknown): string {
  return typeof ts === 'string' ? localTime(ts) : '';
}

export class TranscriptRenderer {
  /** Tool names by call id, to label tool results. */
  private readonly toolNames = new Map<string, string>();
  /** The LangGraph messages shown so far (a checkpoint shows only the new ones). */
  private readonly ledger = new MessageLedger();

  constructor(private readonly opts: RenderOptions) {}

  get style(): Style {
    return this.opts.style;
  }

  header(session: OpenedSession, extra: string[] = []): string {
    const s = this.opts.style;
    const lines = [`${s.bold(safeText(session.title ?? '(untitled)'))}  ${s.dim(session.sessionId)}`];
    const facts: string[] = [`created ${localTime(session.createdAt, true)}`, `${session.lastSeq} records`];
    if (session.cwd) facts.push(`cwd ${safeText(session.cwd)}`);
    const llm = [session.llm?.provider, session.llm?.model].filter(Boolean).join('/');
    if (llm) facts.push(`model ${safeText(llm)}`);
    if (session.parent) {
      facts.push(`${session.parent.relation} of ${session.parent.sessionId}${session.parent.atSeq !== undefined ? ` at #${session.parent.atSeq}` : ''}`);
    }
    if (session.turn) facts.push(`turn ${session.turn.status}${session.turn.status === 'active' ? ` (${session.turn.phase})` : ''}`);
    if (session.tags?.length) facts.push(`tags ${session.tags.map(safeText).join(', ')}`);
    lines.push(s.dim(facts.join(' · ')));
    if (session.metadata && Object.keys(session.metadata).length > 0) lines.push(s.dim(`metadata ${safeText(JSON.stringify(session.metadata))}`));
    for (const e of extra) lines.push(s.dim(e));
    if (session.systemPrompt) {
      lines.push(`${s.magenta('system prompt')}`);
      lines.push(this.body(session.systemPrompt, false).replace(/\n$/, ''));
    }
    return `${lines.join('\n')}\n\n`;
  }

  record(rec: StoredRecord): string {
    const render = this.kinds.get(rec.kind);
    return render ? render(rec) : this.other(rec);
  }

  /** One renderer per record kind; a kind not in it is shown by `other`. */
  private readonly kinds = new Map<string, (rec: StoredRecord) => string>([
    ['message', (rec) => this.message(rec)],
    ['interruption', (rec) => this.interruption(rec)],
    ['turn', (rec) => this.turn(rec)],
    ['checkpoint', (rec) => this.checkpoint(rec)],
    ['rewind', (rec) => this.rewind(rec)],
    ['api', (rec) => this.api(rec)],
    ['toolStart', (rec) => this.toolStart(rec)],
    ['toolStream', (rec) => this.toolStream(rec)],
    ['toolFinish', (rec) => this.toolFinish(rec)],
    ['event', (rec) => this.event(rec)],
  ]);

  /** A record's header line: `#seq  time  who  rest`. */
  head(rec: StoredRecord, who: string, rest = ''): string {
    const s = this.opts.style;
    return `${s.dim(`#${rec.seq}`)} ${s.dim(timeOf(rec.ts))}  ${who}${rest ? `  ${rest}` : ''}\n`;
  }

  private message(rec: StoredRecord): string {
    const m = isObj(rec.message) ? rec.message : {};
    return this.head(rec, this.who(m)) + this.messageBody(m);
  }

  /** A message inside another record (a LangGraph checkpoint's or task's): its role line and body, indented. */
  nestedMessage(m: Obj): string {
    return `${this.who(m)}\n${this.messageBody(m)}`.replace(/\n$/, '').split('\n').map((l) => `${INDENT}${l}`.trimEnd()).join('\n') + '\n';
  }

  private who(m: Obj): string {
    const s = this.opts.style;
    const role = str(m.role) ?? '?';
    const who = this.role(role);
    if (role === 'tool') {
      const id = str(m.toolCallId);
      const name = str(m.name) ?? (id ? this.toolNames.get(id) : undefined);
      return who + s.dim(` ← ${safeText(name ?? 'result')}${id ? ` [${safeText(id)}]` : ''}`);
    }
    return str(m.name) ? who + s.dim(` (${safeText(m.name as string)})`) : who;
  }

  private messageBody(m: Obj): string {
    const text = contentText(m.content);
    return (text !== '' ? this.body(text, m.role === 'tool') : '') + this.toolCalls(m.toolCalls);
  }

  private interruption(rec: StoredRecord): string {
    const s = this.opts.style;
    let out = this.head(rec, s.red('interruption'), `${safeText(String(rec.reason ?? ''))}${rec.phase ? s.dim(` (during ${safeText(String(rec.phase))})`) : ''}`);
    if (typeof rec.assistantText === 'string' && rec.assistantText !== '') out += this.body(rec.assistantText, false);
    out += this.toolCalls(rec.toolCalls);
    for (const r of Array.isArray(rec.toolResults) ? rec.toolResults : []) {
      if (!isObj(r)) continue;
      out += `${INDENT}${s.yellow('←')} ${safeText(str(r.name) ?? '?')}${r.id ? s.dim(` [${safeText(String(r.id))}]`) : ''}: ${this.abbreviated(r.result)}\n`;
    }
    return out;
  }

  private turn(rec: StoredRecord): string {
    const s = this.opts.style;
    const what = [rec.event, rec.turnKind, rec.phase, rec.outcome].filter((v) => typeof v === 'string').map((v) => safeText(v as string)).join(' ');
    return this.head(rec, s.blue('turn'), `${what}${rec.turnId ? s.dim(`  ${safeText(String(rec.turnId))}`) : ''}`) + this.error(rec.error);
  }

  private rewind(rec: StoredRecord): string {
    const s = this.opts.style;
    const to = Number(rec.toSeq);
    const range = to + 1 < rec.seq ? `records #${to + 1}–#${rec.seq - 1} rewound` : 'nothing rewound';
    return this.head(rec, s.yellow('rewind'), s.dim(`back to #${to}: ${range}`));
  }

  private checkpoint(rec: StoredRecord): string {
    const s = this.opts.style;
    const n = isObj(rec.counters) ? rec.counters.summarizedRecords : undefined;
    const summarized = typeof n === 'number' ? `, ${n} record${n === 1 ? '' : 's'} summarized` : '';
    const out = this.head(rec, s.magenta('checkpoint'), s.dim(`generation ${String(rec.generation)}, through #${String(rec.throughSeq ?? rec.seq)}${summarized}`));
    return typeof rec.summary === 'string' ? out + this.body(rec.summary, false) : out;
  }

  private api(rec: StoredRecord): string {
    const what = `${safeText(String(rec.direction ?? ''))}${typeof rec.apiSeq === 'number' ? ` #${rec.apiSeq}` : ''}`;
    return this.head(rec, this.opts.style.cyan('api'), `${what}${rec.payload === undefined ? '' : `  ${this.opts.style.dim(this.payload(rec.payload))}`}`);
  }

  private toolStart(rec: StoredRecord): string {
    const s = this.opts.style;
    return this.head(rec, s.yellow('tool run'), `#${String(rec.toolSeq)} ${s.bold(safeText(String(rec.tool ?? '?')))} started${rec.toolUseId ? s.dim(` [${safeText(String(rec.toolUseId))}]`) : ''}${rec.agent ? s.dim(` by ${safeText(String(rec.agent))}`) : ''}`);
  }

  private toolStream(rec: StoredRecord): string {
    const out = this.head(rec, this.opts.style.yellow('tool run'), `#${String(rec.toolSeq)} ${safeText(String(rec.stream ?? 'output'))}`);
    const text = typeof rec.text === 'string' ? rec.text : blobLabel(rec.text)
      ?? (typeof rec.dataBase64 === 'string' ? `[${humanBytes(Math.floor((rec.dataBase64.length * 3) / 4))} of binary data]` : blobLabel(rec.dataBase64) ?? '');
    return text !== '' ? out + this.body(text, true) : out;
  }

  private toolFinish(rec: StoredRecord): string {
    const s = this.opts.style;
    const exit = typeof rec.exitCode === 'number' ? ` (exit ${rec.exitCode})` : '';
    const outLen = typeof rec.outputLen === 'number' ? s.dim(`, ${humanBytes(rec.outputLen)} of output`) : '';
    return this.head(rec, s.yellow('tool run'), `#${String(rec.toolSeq)} finished ${rec.success === false ? s.red('failed') : 'ok'}${exit}${outLen}`) + this.error(rec.error);
  }

  private event(rec: StoredRecord): string {
    const item = rec.type === AGENTS_ITEM_TYPE ? agentsItemAsMessage(rec.payload) : undefined;
    if (item) return this.message({ ...rec, message: item } as StoredRecord);
    const graph = langGraphView(rec);
    if (graph) return langGraphBlock(this, rec, graph, this.ledger);
    const s = this.opts.style;
    return this.head(rec, s.cyan('event'), `${safeText(String(rec.type ?? ''))}${rec.payload === null || rec.payload === undefined ? '' : `  ${s.dim(this.payload(rec.payload))}`}`);
  }

  /** A kind this version does not know: its members in short JSON, so it is never hidden. */
  private other(rec: StoredRecord): string {
    const { seq: _s, ts: _t, kind, turnId: _turn, ...rest } = rec;
    return this.head(rec, this.opts.style.cyan(safeText(String(kind))), this.opts.style.dim(this.payload(rest)));
  }

  /** The `error:` line of a turn or tool run, when it has an error. */
  private error(error: unknown): string {
    return typeof error === 'string' ? `${INDENT}${this.opts.style.red('error:')} ${oneLine(safeText(error), 400)}\n` : '';
  }

  private toolCalls(calls: unknown): string {
    return (Array.isArray(calls) ? calls : []).map((call) => this.toolCall(call)).join('');
  }

  /** Where a compaction happened, in a transcript that shows the archived records too. */
  compactionMark(rec: StoredRecord): string {
    const s = this.opts.style;
    return `${s.magenta(`── compacted here (generation ${String(rec.generation)}): records through #${String(rec.throughSeq ?? rec.seq)} were summarized ──`)}\n`;
  }

  private role(role: string): string {
    const s = this.opts.style;
    const text = safeText(role);
    if (role === 'user') return s.green(s.bold(text));
    if (role === 'assistant') return s.cyan(s.bold(text));
    if (role === 'tool') return s.yellow(text);
    if (role === 'system') return s.magenta(text);
    return s.bold(text);
  }

  private toolCall(call: unknown): string {
    if (!isObj(call)) return '';
    const s = this.opts.style;
    const name = str(call.name) ?? '?';
    const id = str(call.id);
    if (id) this.toolNames.set(id, name);
    const args = this.opts.full ? argsText(call.arguments, Number.MAX_SAFE_INTEGER) : argsText(call.arguments);
    return `${INDENT}${s.yellow('→')} ${s.bold(safeText(name))}(${args})${id ? s.dim(` [${safeText(id)}]`) : ''}\n`;
  }

  /** A value in short JSON (in full with --full). */
  payload(value: unknown): string {
    return shortJson(value, this.opts.full ? Number.MAX_SAFE_INTEGER : PAYLOAD_CHARS);
  }

  private abbreviated(value: unknown): string {
    return shortJson(value, this.opts.full ? Number.MAX_SAFE_INTEGER : ARGS_CHARS);
  }

  /** Indented text; tool output is cut to a few lines unless --full. */
  private body(text: string, isOutput: boolean): string {
    let lines = safeText(text).replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
    let note = '';
    if (isOutput && !this.opts.full) {
      const total = lines.length;
      let chars = 0;
      let keep = 0;
      while (keep < lines.length && keep < OUTPUT_LINES && chars + (lines[keep] as string).length <= OUTPUT_CHARS) chars += (lines[keep++] as string).length + 1;
      if (keep === 0) {
        lines = [`${(lines[0] as string).slice(0, OUTPUT_CHARS)}…`];
        keep = 1;
      } else lines = lines.slice(0, keep);
      if (keep < total) note = `${INDENT}${this.opts.style.dim(`… ${total - keep} more line${total - keep === 1 ? '' : 's'} (--full shows all)`)}\n`;
    }
    return lines.map((l) => `${INDENT}${l}`.trimEnd()).join('\n') + '\n' + note;
  }
}
