import type { SealedRecord, SessionRow } from '../../../backend/port.js';
import { DEFAULT_LIST_LIMIT, decodeCursor, pageOf } from '../../../engine/listPage.js';
import { checkFilter, filters, matches } from '../../../engine/listFilter.js';
import { withoutSecretSummaries } from '../../../engine/header.js';
import { type Watch, watchRecords } from '../../../engine/watch.js';
import { isBlobRef, inlineBlobs } from '../../../domain/blobRefs.js';
import { digestOf } from '../../../domain/blobRefs.js';
import { StoreError } from '../../../domain/errors.js';
import { checkSessionId } from '../../../domain/ids.js';
import { DEFAULT_READ_LIMIT, PAGE_BYTES } from '../../../domain/limits.js';
import { ContextBuilder, CONVERSATION_KINDS } from '../../../domain/turns/context.js';
import type {
  ContextMessage, HistoryEntry, ListOptions, UsageReport, ListPage, PruneOptions, ReadOptions, ReadPage, SessionHeader, SessionSummary, StoredRecord, TurnState,
} from '../../../domain/types.js';
import { pg } from './errors.js';
import { stateOfRow } from './session.js';
import { shownUsage } from '../../../domain/usage.js';
import { PgStoreCore } from './store.js';
import { effectiveHeader } from '../../../domain/sessionUpdate.js';

/** A stored record as the protocol shows it: seq and ts, then the members of its exact text. */
export function storedOf(r: SealedRecord): StoredRecord {
  return { seq: r.seq, ts: r.ts, ...(JSON.parse(r.text) as { kind: string }) };
}

export function summaryOfRow(row: SessionRow): SessionSummary {
  const h = effectiveHeader(JSON.parse(row.headerText) as SessionHeader, stateOfRow(row).header);
  const updatedAt = row.lastTs !== null && row.lastTs > row.createdAt ? row.lastTs : row.createdAt;
  return {
    sessionId: row.sessionId, ...(h.title !== undefined ? { title: h.title } : {}), createdAt: row.createdAt, updatedAt, lastSeq: row.lastSeq,
    bytes: row.storedBytes, ...(row.snapshot.firstMessage !== null ? { firstMessage: row.snapshot.firstMessage } : {}),
    ...(row.snapshot.lastMessage !== null ? { lastMessage: row.snapshot.lastMessage } : {}), ...(h.parent ? { parent: h.parent } : {}),
    ...(h.cwd !== undefined ? { cwd: h.cwd } : {}), ...(h.tags ? { tags: h.tags } : {}), ...(row.trashed ? { deleted: true } : {}),
  };
}

/** Reads, context, listing, history and watch over PostgreSQL. */
export class PgReadStore extends PgStoreCore {
  protected readonly watchers = new Map<string, Set<{ poke(): void }>>();

  protected override poked(sessionId: string): void {
    for (const w of this.watchers.get(sessionId) ?? []) w.poke();
  }

  /** Committed records after the requests sent before this call (read-your-writes). */
  protected async settled(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    await this.sessions.get(sessionId)?.settled();
  }

  async read(sessionId: string, opts: ReadOptions = {}): Promise<ReadPage> {
    await this.settled(sessionId);
    const row = await this.loadLive(sessionId);
    if (opts.generation !== undefined && opts.generation > row.generation) {
      throw new StoreError('InvalidArgument', `generation ${opts.generation} does not exist (the current one is ${row.generation})`, { path: 'generation' });
    }
    const page = await pg(() => this.db.readRange(sessionId, {
      ...(opts.generation !== undefined ? { generation: opts.generation } : {}), afterSeq: opts.afterSeq ?? 0,
      limit: opts.limit ?? DEFAULT_READ_LIMIT, ...(opts.kinds ? { kinds: opts.kinds } : {}), maxBytes: PAGE_BYTES,
    }));
    const records = page.records.map(storedOf);
    const scanned = Math.min(page.scannedSeq, page.lastSeq);
    return {
      records: opts.inline ? await this.inline(records) : records, lastSeq: page.lastSeq,
      nextAfterSeq: scanned < page.lastSeq ? scanned : null,
    };
  }

  /** Records with every BlobRef replaced by its (verified) string. */
  protected async inline(records: StoredRecord[]): Promise<StoredRecord[]> {
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (v === null || typeof v !== 'object') return;
      if (isBlobRef(v)) refs.add(v.$blob);
      else for (const w of Object.values(v)) walk(w);
    };
    records.forEach(walk);
    const loaded = new Map<string, string>();
    for (const ref of refs) {
      const bytes = await pg(() => this.db.blobs.read(digestOf(ref) ?? ''));
      if (!bytes) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
      loaded.set(ref, bytes.toString('utf8'));
    }
    return records.map((r) => inlineBlobs(r, (ref) => loaded.get(ref) as string) as StoredRecord);
  }

  /** Every record of the active generation up to `through` (all when undefined), in seq order. */
  protected async activeRecords(sessionId: string, through?: number, kinds?: readonly string[]): Promise<SealedRecord[]> {
    const out: SealedRecord[] = [];
    let afterSeq = 0;
    for (;;) {
      const page = await pg(() => this.db.readRange(sessionId, { afterSeq, limit: 10_000, maxBytes: PAGE_BYTES, ...(kinds ? { kinds } : {}) }));
      const end = through ?? page.lastSeq;
      out.push(...page.records.filter((r) => r.seq <= end));
      if (page.scannedSeq >= end || page.scannedSeq === afterSeq) return out;
      afterSeq = page.scannedSeq;
    }
  }

  async context(sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }> {
    await this.settled(sessionId);
    const row = await this.loadLive(sessionId);
    const builder = new ContextBuilder(JSON.parse(row.headerText) as SessionHeader);
    const recs = await this.activeRecords(sessionId, row.lastSeq, [...CONVERSATION_KINDS]);
    for (const rec of await this.inline(recs.map(storedOf))) builder.add(rec);
    const turn = await this.getTurn(sessionId);
    return { messages: builder.finish(prune), turn };
  }

  /** The totals of the writer's committed view (after the writes sent before), or of the session row. */
  async usage(sessionId: string): Promise<UsageReport> {
    await this.settled(sessionId);
    const s = this.sessions.get(sessionId);
    if (s?.queue) return { lastSeq: s.queue.lastSeq, ...shownUsage(s.queue.state.usage, s.header.llm?.model) };
    const row = await this.withUsage(await this.loadLive(sessionId));
    const header = JSON.parse(row.headerText) as SessionHeader;
    return { lastSeq: row.lastSeq, ...shownUsage(stateOfRow(row).usage, header.llm?.model) };
  }

  /**
   * Rows are read in list order from the cursor on (migration 4's index), a batch at a time,
   * until the page is full and one more session shows there is a next page: a page of 100 reads
   * about 101 rows, not the table. Filters are matched on the rows' summaries (header text,
   * header state and message summaries; never the records) as they are read, so a narrow filter
   * reads on until it has found the page or the table ends.
   */
  async list(opts: ListOptions = {}): Promise<ListPage> {
    const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor); // refused before the database is asked
    const filter = checkFilter(opts);
    const narrowed = filters(filter);
    const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
    const batch = narrowed ? Math.max(limit + 1, 500) : limit + 1;
    const kept: SessionSummary[] = [];
    let before = after;
    for (;;) {
      const rows = await pg(() => this.db.listByUpdate({ ...(before ? { before } : {}), limit: batch, includeTrashed: filter.includeDeleted === true }));
      let last: SessionSummary | undefined;
      for (const row of rows) {
        last = summaryOfRow(row);
        if (!narrowed || matches(last, filter)) kept.push(last);
      }
      if (kept.length > limit || rows.length < batch || !last) break;
      before = { updatedAt: last.updatedAt, sessionId: last.sessionId };
    }
    return withoutSecretSummaries(pageOf(kept, { limit, ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}) }), this.allSecrets);
  }

  /** The archived generations, oldest first; createdAt is the ts of the checkpoint that replaced each. */
  async history(sessionId: string): Promise<HistoryEntry[]> {
    checkSessionId(sessionId);
    await this.loadLive(sessionId);
    const gens = await pg(() => this.db.history(sessionId));
    const out: HistoryEntry[] = [];
    for (const g of gens) {
      const cp = await pg(() => this.db.readRange(sessionId, { generation: g.generation + 1, afterSeq: g.throughSeq - 1, limit: 1 }))
        .catch(() => undefined);
      const createdAt = cp?.records[0]?.ts ?? new Date(0).toISOString();
      out.push({ generation: g.generation, throughSeq: g.throughSeq, records: g.records, bytes: g.storedBytes, createdAt });
    }
    return out;
  }

  async watch(
    sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void,
  ): Promise<Watch> {
    checkSessionId(sessionId);
    const set = this.watchers.get(sessionId) ?? new Set<{ poke(): void }>();
    const w = await watchRecords((poke) => this.db.changes(sessionId, poke), sessionId, afterSeq, this, deliver, (reason) => {
      set.delete(w);
      onEnd(reason);
    });
    set.add(w);
    this.watchers.set(sessionId, set);
    return w;
  }
}
