/**
 * The records the checkpointer appends: both are `event` records (protocol/README.md §5.3), so
 * they pass the sidecar's record validation and secret checks like any other.
 *
 * - `langgraph.checkpoint`: one `put`. The checkpoint is serialized without its
 *   `channel_values`; the values of the channels in `newVersions` travel beside it, one per
 *   (channel, version) — a channel whose version did not change is not stored again but found in
 *   the earlier record that stored that version (the "blob per channel version" layout of
 *   LangGraph's own savers).
 * - `langgraph.writes`: one `putWrites` (the pending writes of a task against a checkpoint).
 *
 * Both carry the thread id and namespace, so a session's records say which thread they belong to.
 */
import { isSerialized, type Serialized } from './serialized.js';

export const CHECKPOINT_EVENT = 'langgraph.checkpoint';
export const WRITES_EVENT = 'langgraph.writes';

export type ChannelVersion = number | string;

export interface CheckpointPayload {
  threadId: string;
  ns: string;
  id: string;
  parentId: string | null;
  checkpoint: Serialized;
  metadata: Serialized;
  /** [channel, version, value]; value `null`: the channel has this version but no value. */
  values: Array<[string, ChannelVersion, Serialized | null]>;
}

export interface WritesPayload {
  threadId: string;
  ns: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  /** [idx, channel, value]; idx as LangGraph's WRITES_IDX_MAP gives it (negative: special channels). */
  writes: Array<[number, string, Serialized]>;
}

export type LangGraphRecord =
  | { seq: number; type: typeof CHECKPOINT_EVENT; payload: CheckpointPayload }
  | { seq: number; type: typeof WRITES_EVENT; payload: WritesPayload };

const isVersion = (v: unknown): v is ChannelVersion => typeof v === 'number' || typeof v === 'string';

function checkpointPayload(p: Record<string, unknown>): p is CheckpointPayload & Record<string, unknown> {
  return typeof p.threadId === 'string' && typeof p.ns === 'string' && typeof p.id === 'string'
    && (p.parentId === null || typeof p.parentId === 'string') && isSerialized(p.checkpoint) && isSerialized(p.metadata)
    && Array.isArray(p.values) && p.values.every((v) => Array.isArray(v) && typeof v[0] === 'string' && isVersion(v[1]) && (v[2] === null || isSerialized(v[2])));
}

function writesPayload(p: Record<string, unknown>): p is WritesPayload & Record<string, unknown> {
  return typeof p.threadId === 'string' && typeof p.ns === 'string' && typeof p.checkpointId === 'string'
    && typeof p.taskId === 'string' && typeof p.taskPath === 'string' && Array.isArray(p.writes)
    && p.writes.every((w) => Array.isArray(w) && typeof w[0] === 'number' && typeof w[1] === 'string' && isSerialized(w[2]));
}

/** A stored record as one of ours, or undefined (another kind, another event type, or malformed). */
export function asLangGraphRecord(r: Record<string, unknown>): LangGraphRecord | undefined {
  if (r.kind !== 'event' || typeof r.seq !== 'number' || typeof r.payload !== 'object' || r.payload === null) return undefined;
  const payload = r.payload as Record<string, unknown>;
  if (r.type === CHECKPOINT_EVENT && checkpointPayload(payload)) return { seq: r.seq, type: CHECKPOINT_EVENT, payload };
  if (r.type === WRITES_EVENT && writesPayload(payload)) return { seq: r.seq, type: WRITES_EVENT, payload };
  return undefined;
}

/** What the per-thread index needs from a record; read without inlining blobs (large serialized values stay references). */
export type IndexEntry =
  | { seq: number; type: typeof CHECKPOINT_EVENT; threadId: string; ns: string; id: string; parentId: string | null; channels: Array<[string, ChannelVersion]> }
  | { seq: number; type: typeof WRITES_EVENT; threadId: string; ns: string; checkpointId: string };

export function asIndexEntry(r: Record<string, unknown>): IndexEntry | undefined {
  if (r.kind !== 'event' || typeof r.seq !== 'number' || typeof r.payload !== 'object' || r.payload === null) return undefined;
  const p = r.payload as Record<string, unknown>;
  if (typeof p.threadId !== 'string' || typeof p.ns !== 'string') return undefined;
  if (r.type === CHECKPOINT_EVENT && typeof p.id === 'string' && (p.parentId === null || typeof p.parentId === 'string') && Array.isArray(p.values)) {
    const channels = p.values.filter((v): v is [string, ChannelVersion] => Array.isArray(v) && typeof v[0] === 'string' && isVersion(v[1])).map((v) => [v[0], v[1]] as [string, ChannelVersion]);
    return { seq: r.seq, type: CHECKPOINT_EVENT, threadId: p.threadId, ns: p.ns, id: p.id, parentId: p.parentId, channels };
  }
  if (r.type === WRITES_EVENT && typeof p.checkpointId === 'string') return { seq: r.seq, type: WRITES_EVENT, threadId: p.threadId, ns: p.ns, checkpointId: p.checkpointId };
  return undefined;
}
