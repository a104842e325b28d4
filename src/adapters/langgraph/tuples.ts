/**
 * Checkpoint tuples rebuilt from a thread session's records: the checkpoint record, the records
 * holding its channels' versions, and its pending writes — read by `seq` from the index, nothing
 * else. Merging and ordering of pending writes follow LangGraph's MemorySaver exactly.
 */
import {
  compareWritesSortKeys, maxChannelVersion, TASKS, writesSortKey,
  type Checkpoint, type CheckpointMetadata, type CheckpointPendingWrite, type CheckpointTuple, type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { CHECKPOINT_EVENT, WRITES_EVENT, type CheckpointPayload, type WritesPayload } from './records.js';
import { decodeSerialized, type Serialized } from './serialized.js';
import type { ThreadIndex } from './threadIndex.js';
import type { ThreadSession } from './threadSession.js';

const load = (serde: SerializerProtocol, s: Serialized) => serde.loadsTyped(...decodeSerialized(s));

/** The checkpoint's record, or undefined when the index does not know the id. */
export async function checkpointRecord(session: ThreadSession, index: ThreadIndex, id: string): Promise<CheckpointPayload | undefined> {
  const entry = index.checkpoints.get(id);
  if (!entry) return undefined;
  const r = (await session.records([entry.seq])).get(entry.seq);
  return r?.type === CHECKPOINT_EVENT ? r.payload : undefined;
}

export async function loadMetadata(serde: SerializerProtocol, p: CheckpointPayload): Promise<CheckpointMetadata> {
  return load(serde, p.metadata) as Promise<CheckpointMetadata>;
}

export async function buildTuple(serde: SerializerProtocol, session: ThreadSession, index: ThreadIndex, p: CheckpointPayload, firstVersion: number | string, metadata?: CheckpointMetadata): Promise<CheckpointTuple> {
  const checkpoint = (await load(serde, p.checkpoint)) as Checkpoint;
  checkpoint.channel_values = await channelValues(serde, session, index, checkpoint.channel_versions);
  const pendingWrites = await orderedWrites(serde, session, index, p.id);
  if (checkpoint.v < 4 && p.parentId !== null) await migratePendingSends(serde, session, index, checkpoint, p.parentId, firstVersion);
  const tuple: CheckpointTuple = {
    config: { configurable: { thread_id: p.threadId, checkpoint_ns: p.ns, checkpoint_id: p.id } },
    checkpoint,
    metadata: metadata ?? (await loadMetadata(serde, p)),
    pendingWrites: pendingWrites.map(([taskId, channel, value]) => [taskId, channel, value]),
  };
  if (p.parentId !== null) tuple.parentConfig = { configurable: { thread_id: p.threadId, checkpoint_ns: p.ns, checkpoint_id: p.parentId } };
  return tuple;
}

/** Each channel's value at its version, from the record that stored that version (absent: no value). */
async function channelValues(serde: SerializerProtocol, session: ThreadSession, index: ThreadIndex, versions: Record<string, number | string>): Promise<Record<string, unknown>> {
  const wanted = Object.entries(versions ?? {}).map(([ch, ver]) => ({ ch, ver, seq: index.valueSeq(ch, ver) }));
  const records = await session.records(wanted.flatMap((w) => (w.seq === undefined ? [] : [w.seq])));
  const values: Record<string, unknown> = {};
  for (const { ch, ver, seq } of wanted) {
    const r = seq === undefined ? undefined : records.get(seq);
    if (r?.type !== CHECKPOINT_EVENT) continue;
    const stored = r.payload.values.find(([c, v]) => c === ch && v === ver);
    if (stored && stored[2] !== null) values[ch] = await load(serde, stored[2]);
  }
  return values;
}

/**
 * The checkpoint's pending writes in `writesSortKey` order. A write is keyed by (task, idx): a
 * regular write (idx ≥ 0) already stored is kept, a special one (negative idx: errors,
 * interrupts…) is replaced — as MemorySaver does.
 */
async function orderedWrites(serde: SerializerProtocol, session: ThreadSession, index: ThreadIndex, checkpointId: string): Promise<CheckpointPendingWrite[]> {
  const seqs = index.writeSeqs(checkpointId);
  const records = await session.records(seqs);
  const byKey = new Map<string, { taskId: string; idx: number; channel: string; value: Serialized; taskPath: string }>();
  for (const seq of seqs) {
    const r = records.get(seq);
    if (r?.type !== WRITES_EVENT) continue;
    const p: WritesPayload = r.payload;
    for (const [idx, channel, value] of p.writes) {
      const key = JSON.stringify([p.taskId, idx]);
      if (idx >= 0 && byKey.has(key)) continue;
      byKey.set(key, { taskId: p.taskId, idx, channel, value, taskPath: p.taskPath });
    }
  }
  const sorted = [...byKey.values()].sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
  return Promise.all(sorted.map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await load(serde, w.value)]));
}

/** Checkpoints before v4 kept pending sends as the parent's TASKS writes: move them into the checkpoint (as MemorySaver). */
async function migratePendingSends(serde: SerializerProtocol, session: ThreadSession, index: ThreadIndex, checkpoint: Checkpoint, parentId: string, nextVersion: number | string): Promise<void> {
  const sends = (await orderedWrites(serde, session, index, parentId)).filter(([, channel]) => channel === TASKS).map(([, , value]) => value);
  checkpoint.channel_values ??= {};
  checkpoint.channel_values[TASKS] = sends;
  checkpoint.channel_versions ??= {};
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : nextVersion;
}
