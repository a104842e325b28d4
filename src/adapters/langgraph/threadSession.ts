/**
 * One thread (+ namespace) = one sidecar session. This object owns the session's index and is
 * the only path by which the checkpointer reads or appends its records.
 *
 * Invariants:
 * - Every operation that touches the index runs in `exclusive` (one at a time), so a catch-up and
 *   an append never interleave and no record is applied twice.
 * - Once the session is open for writing here, this process is its only writer (the store's lease:
 *   another process's write open is refused with `SessionLocked`), so the index stays exact
 *   without reading the journal again; before that, every read first catches up (others may write).
 * - An append resolves only after the sidecar answered it, i.e. after the records were fdatasync'ed
 *   (file) or committed (PostgreSQL): `put` and `putWrites` are durable when they resolve.
 */
import type { SecretsParam, SessionReadResult } from '../../../protocol/index.js';
import type { SidecarClient } from '../../client/index.js';
import { asIndexEntry, asLangGraphRecord, type LangGraphRecord } from './records.js';
import { INDEX_STATE_KEY, ThreadIndex } from './threadIndex.js';

/** Save the index copy once it is this many records behind the journal (a load then reads at most that many). */
const SAVE_EVERY = 64;
/** Records kept decoded per session (they never change once written; a list re-reads the same few). */
const CACHE_RECORDS = 256;

export class ThreadSession {
  index = new ThreadIndex();
  private writable = false;
  private savedSeq = 0;
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly cache = new Map<number, LangGraphRecord>();

  constructor(
    private readonly client: SidecarClient,
    readonly sessionId: string,
    private readonly secrets: SecretsParam | undefined,
  ) {}

  /** A session this saver just created (open for writing, empty). */
  static created(client: SidecarClient, sessionId: string, secrets: SecretsParam | undefined, threadId: string, ns: string): ThreadSession {
    const s = new ThreadSession(client, sessionId, secrets);
    s.writable = true;
    s.index.threadId = threadId;
    s.index.ns = ns;
    s.loaded = Promise.resolve();
    return s;
  }

  get isWritable(): boolean {
    return this.writable;
  }

  /** The index, current with the journal. */
  sync(): Promise<ThreadIndex> {
    return this.exclusive(async () => {
      await this.load();
      if (!this.writable) await this.catchUp();
      return this.index;
    });
  }

  /** Appends one record; resolves after the sidecar acknowledged it (durable). */
  append(record: { kind: 'event'; type: string; payload: unknown }): Promise<number> {
    return this.exclusive(async () => {
      await this.load();
      if (!this.writable) {
        await this.client.open({ sessionId: this.sessionId, mode: 'write', ...(this.secrets ? { secrets: this.secrets } : {}) });
        this.writable = true;
        await this.catchUp(); // anything another process appended before our lease
      }
      const { lastSeq } = await this.client.append({ sessionId: this.sessionId, records: [record as never] });
      const entry = asIndexEntry({ ...record, seq: lastSeq });
      if (entry) this.index.apply(entry);
      this.index.seq = lastSeq;
      if (this.index.seq - this.savedSeq >= SAVE_EVERY) await this.save();
      return lastSeq;
    });
  }

  /** Our records at these seqs, blobs inlined (absent: a seq that is not one of ours). */
  async records(seqs: number[]): Promise<Map<number, LangGraphRecord>> {
    const out = new Map<number, LangGraphRecord>();
    await Promise.all([...new Set(seqs)].map(async (seq) => {
      let r = this.cache.get(seq);
      if (!r) {
        r = (await this.readOne(seq)) ?? (await this.readArchived(seq));
        if (!r) return;
        if (this.cache.size >= CACHE_RECORDS) this.cache.delete(this.cache.keys().next().value as number);
        this.cache.set(seq, r);
      }
      out.set(seq, r);
    }));
    return out;
  }

  private async readOne(seq: number, generation?: number): Promise<LangGraphRecord | undefined> {
    const page = await this.client.read({ sessionId: this.sessionId, afterSeq: seq - 1, limit: 1, inline: true, ...(generation === undefined ? {} : { generation }) });
    const stored = page.records[0] as Record<string, unknown> | undefined;
    return stored && stored.seq === seq ? asLangGraphRecord(stored) : undefined;
  }

  /**
   * A record compaction moved out of the active journal (someone ran session/compact on the
   * thread's session: the records up to its `throughSeq` now live in an archived generation).
   */
  private async readArchived(seq: number): Promise<LangGraphRecord | undefined> {
    const generations = await this.generations();
    const holder = generations.find((g) => g.throughSeq >= seq);
    return holder === undefined ? undefined : this.readOne(seq, holder.generation);
  }

  private async generations(): Promise<Array<{ generation: number; throughSeq: number }>> {
    const { generations } = await this.client.request<{ generations: Array<{ generation: number; throughSeq: number }> }>('session/history', { sessionId: this.sessionId });
    return generations;
  }

  /** Saves the index copy if it is behind (a cache: a failure only means the next load reads more). */
  flush(): Promise<void> {
    return this.exclusive(async () => {
      if (this.writable && this.index.seq > this.savedSeq) await this.save();
    });
  }

  private async save(): Promise<void> {
    const seq = this.index.seq;
    try {
      await this.client.setState(this.sessionId, INDEX_STATE_KEY, this.index.toSaved());
      this.savedSeq = seq;
    } catch {
      // Too large (over state's 1 MiB), or the session fail-stopped: the journal stays the truth and
      // the next load catches up from the older copy; the next append reports a fail-stop itself.
      this.savedSeq = seq;
    }
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const saved = await this.client.getState(this.sessionId, INDEX_STATE_KEY);
      this.index = ThreadIndex.fromSaved(saved);
      this.savedSeq = this.index.seq;
      // The records after the copy are read by the caller (sync, or append after its write open).
    })().catch((err: unknown) => {
      this.loaded = undefined; // retry on the next call
      throw err;
    });
    return this.loaded;
  }

  /**
   * Applies the records after `index.seq` (only event and checkpoint records are parsed; blobs
   * stay references). A compaction's `checkpoint` record at seq S stands for every record up to S,
   * archived: met after `index.seq`, those are read from the archives first.
   */
  private async catchUp(): Promise<void> {
    for (;;) {
      const page: SessionReadResult = await this.client.read({ sessionId: this.sessionId, afterSeq: this.index.seq, kinds: ['event', 'checkpoint'], limit: 1000 });
      for (const r of page.records) {
        if (r.kind === 'checkpoint' && r.seq > this.index.seq) await this.catchUpArchived(r.seq);
        const entry = asIndexEntry(r as Record<string, unknown>);
        if (entry) this.index.apply(entry);
      }
      if (page.nextAfterSeq === null) {
        this.index.seq = Math.max(this.index.seq, page.lastSeq);
        return;
      }
      this.index.seq = page.nextAfterSeq;
    }
  }

  /** Applies the archived records after `index.seq` up to `throughSeq`, oldest generation first. */
  private async catchUpArchived(throughSeq: number): Promise<void> {
    for (const g of await this.generations()) {
      if (g.throughSeq <= this.index.seq) continue;
      for (let afterSeq = this.index.seq; ;) {
        const page = await this.client.read({ sessionId: this.sessionId, generation: g.generation, afterSeq, kinds: ['event'], limit: 1000 });
        for (const r of page.records) {
          const entry = r.seq <= Math.min(g.throughSeq, throughSeq) ? asIndexEntry(r as Record<string, unknown>) : undefined;
          if (entry) this.index.apply(entry);
        }
        if (page.nextAfterSeq === null || page.nextAfterSeq >= g.throughSeq) break;
        afterSeq = page.nextAfterSeq;
      }
      this.index.seq = Math.min(g.throughSeq, throughSeq);
      if (this.index.seq >= throughSeq) return;
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
