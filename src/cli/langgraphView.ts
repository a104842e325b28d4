/**
 * How `show`, `tail` and `export --format markdown` read the records of the LangGraph
 * checkpointers (session-sidecar/adapters/langgraph and clients/python's SidecarSaver, which
 * write the same shapes: src/adapters/langgraph/records.ts): an `event` record of type
 * `langgraph.checkpoint` {threadId, ns, id, parentId, checkpoint, metadata, values} or
 * `langgraph.writes` {threadId, ns, checkpointId, taskId, taskPath, writes}, every value a
 * serde's output {type, text | base64}. The view decodes what JSON it can: the checkpoint's step
 * and source (its metadata), the node that wrote (the task path's last part), the messages of a
 * channel (LangChain's serialized messages, `{lc: 1, type: "constructor", ...}`, or plain
 * {role|type, content} objects) as the `message` view the transcript renders, and other
 * channels as short JSON. Values only Python reads (msgpack) are named with their size. Display
 * only: the stored record is not changed, and --json/--raw print it as stored.
 */
import { CHECKPOINT_EVENT, WRITES_EVENT } from '../adapters/langgraph/records.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export interface ChannelValue {
  channel: string;
  /** The messages of a channel holding a message or a list of them. */
  messages?: Obj[];
  /** Any other value, decoded (JSON) or named (`[msgpack, 120 bytes]`). */
  value?: unknown;
}

export interface LangGraphView {
  kind: 'checkpoint' | 'writes';
  threadId: string;
  ns: string;
  /** The checkpoint's id (checkpoint), or the checkpoint the writes are for (writes). */
  checkpointId: string;
  parentId?: string | null;
  step?: number;
  source?: string;
  /** writes: the node of the task (its path's last part) and the task's id. */
  node?: string;
  taskId?: string;
  values: ChannelValue[];
}

const ROLES: Record<string, string> = {
  HumanMessage: 'user', HumanMessageChunk: 'user', human: 'user', user: 'user',
  AIMessage: 'assistant', AIMessageChunk: 'assistant', ai: 'assistant', assistant: 'assistant',
  ToolMessage: 'tool', ToolMessageChunk: 'tool', FunctionMessage: 'tool', tool: 'tool', function: 'tool',
  SystemMessage: 'system', SystemMessageChunk: 'system', system: 'system', developer: 'system',
};

/** A LangChain message (serialized constructor or plain object) as the transcript's message view, or undefined. */
export function messageOf(v: unknown): Obj | undefined {
  if (!isObj(v)) return undefined;
  let fields: Obj = v;
  let role: string | undefined;
  if (v.lc === 1 && v.type === 'constructor' && Array.isArray(v.id) && isObj(v.kwargs)) {
    const cls = str(v.id[v.id.length - 1]) ?? '';
    fields = v.kwargs;
    role = cls === 'ChatMessage' || cls === 'ChatMessageChunk' ? str(fields.role) : ROLES[cls];
  } else if (v.content !== undefined) role = ROLES[str(v.role) ?? str(v.type) ?? ''];
  if (role === undefined) return undefined;
  const calls = (Array.isArray(fields.tool_calls) ? fields.tool_calls : Array.isArray(fields.toolCalls) ? fields.toolCalls : []).filter(isObj);
  const toolCallId = str(fields.tool_call_id) ?? str(fields.toolCallId);
  return {
    role,
    content: fields.content ?? null,
    ...(str(fields.name) ? { name: fields.name } : {}),
    ...(toolCallId ? { toolCallId } : {}),
    ...(calls.length > 0 ? { toolCalls: calls.map((c) => ({ ...(str(c.id) ? { id: c.id } : {}), name: str(c.name) ?? '?', arguments: c.args ?? c.arguments ?? '' })) } : {}),
  };
}

/** A serialized value decoded: JSON parsed; other bytes named with their size. */
export function decodeValue(s: unknown): unknown {
  if (!isObj(s) || typeof s.type !== 'string') return s;
  const text = s.text;
  if (s.type === 'json' && typeof text === 'string') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if (isObj(text) && typeof text.$blob === 'string') return `[${s.type}, stored as a blob of ${String(text.bytes ?? '?')} bytes]`;
  const bytes = typeof text === 'string' ? Buffer.byteLength(text) : typeof s.base64 === 'string' ? Buffer.from(s.base64, 'base64').length : 0;
  return `[${s.type}, ${bytes} bytes]`;
}

function channelValue(channel: string, serialized: unknown): ChannelValue {
  const value = decodeValue(serialized);
  const list = Array.isArray(value) ? value : [value];
  const messages = list.map(messageOf);
  if (list.length > 0 && messages.every((m) => m !== undefined)) return { channel, messages: messages as Obj[] };
  if (isObj(value) && Array.isArray(value.messages)) {
    // the input of a graph ({messages: [...]}, written to __start__)
    const inner = value.messages.map(messageOf);
    if (inner.every((m) => m !== undefined)) return { channel, messages: inner as Obj[] };
  }
  return { channel, value };
}

/**
 * Channels that are LangGraph's bookkeeping, not the graph's state: branches, and `__...__`
 * ones but interrupts — `__start__` too (a graph's input: the `__start__` task's writes show it).
 */
export const isInternalChannel = (channel: string) => channel.startsWith('branch:') || (channel.startsWith('__') && channel !== '__interrupt__');

/** The view of a LangGraph record, or undefined when the record is not one (or not of these shapes). */
export function langGraphView(rec: Obj): LangGraphView | undefined {
  if (rec.kind !== 'event' || !isObj(rec.payload)) return undefined;
  const p = rec.payload;
  const threadId = str(p.threadId);
  const ns = str(p.ns);
  if (threadId === undefined || ns === undefined) return undefined;
  if (rec.type === CHECKPOINT_EVENT && typeof p.id === 'string' && Array.isArray(p.values)) {
    const meta = decodeValue(p.metadata);
    const step = isObj(meta) && typeof meta.step === 'number' ? meta.step : undefined;
    const source = isObj(meta) ? str(meta.source) : undefined;
    const values = p.values.filter((v): v is [string, unknown, unknown] => Array.isArray(v) && typeof v[0] === 'string')
      .filter((v) => v[2] !== null && !isInternalChannel(v[0])).map((v) => channelValue(v[0], v[2]));
    return { kind: 'checkpoint', threadId, ns, checkpointId: p.id, parentId: str(p.parentId) ?? null, ...(step !== undefined ? { step } : {}), ...(source ? { source } : {}), values };
  }
  if (rec.type === WRITES_EVENT && typeof p.checkpointId === 'string' && Array.isArray(p.writes)) {
    const node = str(p.taskPath)?.split(',').at(-1)?.trim();
    const values = p.writes.filter((w): w is [number, string, unknown] => Array.isArray(w) && typeof w[1] === 'string')
      .filter((w) => !isInternalChannel(w[1])).map((w) => channelValue(w[1], w[2]));
    return { kind: 'writes', threadId, ns, checkpointId: p.checkpointId, ...(node ? { node } : {}), ...(str(p.taskId) ? { taskId: p.taskId as string } : {}), values };
  }
  return undefined;
}

/**
 * The messages already shown, so that a checkpoint (which holds the whole message list) shows
 * only those no earlier record of the transcript showed: counted by content (role, text, tool
 * calls), since a message's id may be given only once it is in the state.
 */
export class MessageLedger {
  private readonly shown = new Map<string, number>();

  /** The messages of `list` to show: all of a task's writes (new by definition); of a checkpoint, those beyond what was shown. */
  fresh(list: Obj[], writes: boolean): Obj[] {
    const seen = new Map<string, number>();
    const out: Obj[] = [];
    for (const m of list) {
      const key = JSON.stringify([m.role, m.content, m.toolCalls, m.toolCallId]);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (writes || n > (this.shown.get(key) ?? 0)) {
        out.push(m);
        this.shown.set(key, (this.shown.get(key) ?? 0) + 1);
      }
    }
    return out;
  }
}

/** `step 1 (loop)`, or `input`, for a checkpoint's heading. */
export function stepText(v: LangGraphView): string {
  const source = v.source ? ` (${v.source})` : '';
  return v.step !== undefined ? `step ${v.step}${source}` : (v.source ?? 'checkpoint');
}
