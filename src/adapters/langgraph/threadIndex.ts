/**
 * The index of one thread session: where each checkpoint, each stored channel version and each
 * checkpoint's pending writes are (their `seq`s), so `getTuple`/`list` read exactly the records
 * they return instead of scanning the journal.
 *
 * Invariant: the index describes every record with `seq <= this.seq` and nothing else. It is a
 * cache of the journal, never the truth: it is rebuilt by reading the records after `seq`
 * (`catchUp`), and a copy is saved now and then as the session's state key `langgraph-index`
 * (state/set replaces it atomically). A crash between an append and the save only leaves the
 * saved copy behind the journal; the next load reads the few records after it.
 */
import { CHECKPOINT_EVENT, type ChannelVersion, type IndexEntry } from './records.js';

export const INDEX_STATE_KEY = 'langgraph-index';

export interface SavedIndex {
  v: 1;
  threadId: string | null;
  ns: string | null;
  seq: number;
  checkpoints: Array<[string, number, string | null]>;
  values: Array<[string, ChannelVersion, number]>;
  writes: Array<[string, number[]]>;
}

const valueKey = (channel: string, version: ChannelVersion) => JSON.stringify([channel, version]);

export class ThreadIndex {
  threadId: string | null = null;
  ns: string | null = null;
  seq = 0;
  readonly checkpoints = new Map<string, { seq: number; parentId: string | null }>();
  private readonly values = new Map<string, number>();
  private readonly writes = new Map<string, number[]>();
  private sorted: string[] | undefined;

  static fromSaved(v: unknown): ThreadIndex {
    const index = new ThreadIndex();
    const s = v as SavedIndex | null;
    // Anything unexpected (absent, older or damaged copy): start from seq 0, i.e. read the journal.
    if (!s || s.v !== 1 || typeof s.seq !== 'number' || !Array.isArray(s.checkpoints) || !Array.isArray(s.values) || !Array.isArray(s.writes)) return index;
    index.threadId = s.threadId;
    index.ns = s.ns;
    index.seq = s.seq;
    for (const [id, seq, parentId] of s.checkpoints) index.checkpoints.set(id, { seq, parentId });
    for (const [channel, version, seq] of s.values) index.values.set(valueKey(channel, version), seq);
    for (const [id, seqs] of s.writes) index.writes.set(id, [...seqs]);
    return index;
  }

  toSaved(): SavedIndex {
    return {
      v: 1,
      threadId: this.threadId,
      ns: this.ns,
      seq: this.seq,
      checkpoints: [...this.checkpoints].map(([id, c]) => [id, c.seq, c.parentId]),
      values: [...this.values].map(([k, seq]) => {
        const [channel, version] = JSON.parse(k) as [string, ChannelVersion];
        return [channel, version, seq];
      }),
      writes: [...this.writes],
    };
  }

  /** Records one of ours at `entry.seq` (records are applied in seq order). */
  apply(entry: IndexEntry): void {
    this.threadId ??= entry.threadId;
    this.ns ??= entry.ns;
    if (entry.type === CHECKPOINT_EVENT) {
      this.checkpoints.set(entry.id, { seq: entry.seq, parentId: entry.parentId });
      this.sorted = undefined;
      for (const [channel, version] of entry.channels) this.values.set(valueKey(channel, version), entry.seq);
    } else {
      const seqs = this.writes.get(entry.checkpointId) ?? [];
      seqs.push(entry.seq);
      this.writes.set(entry.checkpointId, seqs);
    }
  }

  /** Checkpoint ids, newest first (LangGraph's ids are time-ordered uuid6: descending string order). */
  idsNewestFirst(): string[] {
    this.sorted ??= [...this.checkpoints.keys()].sort().reverse();
    return this.sorted;
  }

  valueSeq(channel: string, version: ChannelVersion): number | undefined {
    return this.values.get(valueKey(channel, version));
  }

  writeSeqs(checkpointId: string): number[] {
    return this.writes.get(checkpointId) ?? [];
  }
}
