/**
 * Reads: records by seq (read-your-writes: after the writes sent before), the provider
 * context, turn and usage, the header, session/list (order, cursor, filters), history, and
 * subscribe delivery (the watch loop, poked by commits here and by the backend's changes).
 */
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';
import { DEFAULT_READ_LIMIT, PAGE_BYTES } from '../../domain/limits.js';
import { effectiveHeader } from '../../domain/sessionUpdate.js';
import { ContextBuilder, CONVERSATION_KINDS } from '../../domain/turns/context.js';
import type {
  ContextMessage, HistoryEntry, ListOptions, ListPage, PruneOptions, ReadOptions, ReadPage, RecordsText, SessionHeader, SessionSummary, StoredRecord, TurnState,
  UsageReport,
} from '../../domain/types.js';
import { shownUsage } from '../../domain/usage.js';
import { withoutSecretSummaries } from '../commit/header.js';
import { checkFilter, filters, matches, narrowingOf } from '../commit/listFilter.js';
import { DEFAULT_LIST_LIMIT, decodeCursor, pageOf } from '../commit/listPage.js';
import { type Watch, watchRecords } from './watch.js';
import type { ListedRow, SessionRow } from '../port.js';
import { type Core, storedOf } from './context.js';
import { stateOf } from './snapshot.js';

/** One page of stored records, after the writes sent before this call. */
async function page(c: Core, sessionId: string, opts: Omit<ReadOptions, 'inline'>) {
  await c.settled(sessionId);
  const row = await c.loadLive(sessionId);
  if (opts.generation !== undefined && opts.generation > row.generation) {
    throw new StoreError('OutOfRange', `generation ${opts.generation} does not exist (the current one is ${row.generation})`, { path: 'generation', min: 0, max: row.generation });
  }
  const range = await c.backend.readRange(sessionId, {
    ...(opts.generation !== undefined ? { generation: opts.generation } : {}), afterSeq: opts.afterSeq ?? 0,
    limit: opts.limit ?? DEFAULT_READ_LIMIT, ...(opts.kinds ? { kinds: opts.kinds } : {}), maxBytes: PAGE_BYTES,
  });
  const scanned = Math.min(range.scannedSeq, range.lastSeq);
  return { records: range.records, lastSeq: range.lastSeq, nextAfterSeq: scanned < range.lastSeq ? scanned : null };
}

export async function read(c: Core, sessionId: string, opts: ReadOptions = {}): Promise<ReadPage> {
  const { inline, ...rest } = opts;
  const p = await page(c, sessionId, rest);
  const records = p.records.map(storedOf);
  return { records: inline ? await c.inline(records) : records, lastSeq: p.lastSeq, nextAfterSeq: p.nextAfterSeq };
}

const COMMA = Buffer.from(',');

/**
 * The same page as the records' JSON (what session/read returns, byte for byte, without
 * building objects): `{"seq":…,"ts":…` then the members of the record's exact stored text —
 * the bytes JSON.stringify gives for `read`'s record (its text is JSON.stringify's own output).
 */
export async function readText(c: Core, sessionId: string, opts: Omit<ReadOptions, 'inline'> = {}): Promise<RecordsText> {
  const p = await page(c, sessionId, opts);
  const body: Buffer[] = [];
  p.records.forEach((r, i) => {
    if (i > 0) body.push(COMMA);
    const members = r.text === '{}' ? '}' : `,${r.text.slice(1)}`;
    body.push(Buffer.from(`{"seq":${r.seq},"ts":${JSON.stringify(r.ts)}${members}`, 'utf8'));
  });
  return { body, count: p.records.length, lastSeq: p.lastSeq, nextAfterSeq: p.nextAfterSeq };
}

export async function getTurn(c: Core, sessionId: string): Promise<TurnState | null> {
  checkSessionId(sessionId);
  return (await c.view(c.sessions.get(sessionId), sessionId)).turn ?? null;
}

export async function context(c: Core, sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }> {
  await c.settled(sessionId);
  const row = await c.loadLive(sessionId);
  const builder = new ContextBuilder(JSON.parse(row.headerText) as SessionHeader);
  const recs = await c.activeRecords(sessionId, row.lastSeq, [...CONVERSATION_KINDS]);
  for (const rec of await c.inline(recs.map(storedOf))) builder.add(rec);
  const turn = await getTurn(c, sessionId);
  return { messages: builder.finish(prune), turn };
}

/** The totals of the writer's committed view (after the writes sent before), or of the session row. */
export async function usage(c: Core, sessionId: string): Promise<UsageReport> {
  await c.settled(sessionId);
  const s = c.sessions.get(sessionId);
  if (s?.queue) return { lastSeq: s.queue.lastSeq, ...shownUsage(s.queue.state.usage, s.header.llm?.model) };
  const row = await c.withUsage(await c.loadLive(sessionId));
  const header = JSON.parse(row.headerText) as SessionHeader;
  return { lastSeq: row.lastSeq, ...shownUsage(stateOf(row).usage, header.llm?.model) };
}

/** The effective header (after session/update): prune's tag filter sees the tags as they are now. */
export async function header(c: Core, sessionId: string): Promise<SessionHeader> {
  const row = await c.loadLive(checkSessionId(sessionId));
  return effectiveHeader(JSON.parse(row.headerText) as SessionHeader, stateOf(row).header);
}

export function summaryOfRow(row: ListedRow): SessionSummary {
  const h = effectiveHeader(JSON.parse(row.headerText) as SessionHeader, stateOf(row).header);
  const updatedAt = row.lastTs !== null && row.lastTs > row.createdAt ? row.lastTs : row.createdAt;
  return {
    sessionId: row.sessionId, ...(h.title !== undefined ? { title: h.title } : {}), createdAt: row.createdAt, updatedAt, lastSeq: row.lastSeq,
    bytes: row.storedBytes, ...(row.snapshot.firstMessage !== null ? { firstMessage: row.snapshot.firstMessage } : {}),
    ...(row.snapshot.lastMessage !== null ? { lastMessage: row.snapshot.lastMessage } : {}), ...(h.parent ? { parent: h.parent } : {}),
    ...(h.cwd !== undefined ? { cwd: h.cwd } : {}), ...(h.tags ? { tags: h.tags } : {}), ...(row.trashed ? { deleted: true } : {}),
  };
}

/**
 * Rows are read in list order from the cursor on, a batch at a time, until the page is full and
 * one more session shows there is a next page: a page of 100 reads about 101 rows. Filters are
 * matched on the rows' summaries (header text, header state and message summaries; never the
 * records) as they are read, so a narrow filter reads on until it has found the page or the
 * rows end. The filters a backend can apply in its query go with each batch (narrowingOf): on
 * PostgreSQL a narrow filter then reads only the rows that may match, not every row.
 */
export async function list(c: Core, opts: ListOptions = {}): Promise<ListPage> {
  const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor); // refused before the backend is asked
  const filter = checkFilter(opts);
  const narrowed = filters(filter);
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  const batch = narrowed ? Math.max(limit + 1, 500) : limit + 1;
  const narrow = narrowingOf(filter); // applied by the backend's query where it can (PostgreSQL); matches() still decides
  const kept: SessionSummary[] = [];
  let before = after;
  for (;;) {
    const rows = await c.backend.listByUpdate({ ...(before ? { before } : {}), limit: batch, includeTrashed: filter.includeDeleted === true, ...(narrow ? { narrow } : {}) });
    let last: SessionSummary | undefined;
    for (const row of rows) {
      last = summaryOfRow(row);
      if (!narrowed || matches(last, filter)) kept.push(last);
    }
    if (kept.length > limit || rows.length < batch || !last) break;
    before = { updatedAt: last.updatedAt, sessionId: last.sessionId };
  }
  return withoutSecretSummaries(pageOf(kept, { limit, ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}) }), c.secrets);
}

/** The archived generations, oldest first; createdAt is the ts of the checkpoint that replaced each. */
export async function history(c: Core, sessionId: string): Promise<HistoryEntry[]> {
  checkSessionId(sessionId);
  await c.loadLive(sessionId);
  const out: HistoryEntry[] = [];
  for (const g of await c.backend.history(sessionId)) {
    const cp = await c.backend.readRange(sessionId, { generation: g.generation + 1, afterSeq: g.throughSeq - 1, limit: 1 }).catch(() => undefined);
    const createdAt = cp?.records[0]?.ts ?? new Date(0).toISOString();
    out.push({ generation: g.generation, throughSeq: g.throughSeq, records: g.records, bytes: g.storedBytes, createdAt });
  }
  return out;
}

export async function watch(
  c: Core, sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void,
): Promise<Watch> {
  checkSessionId(sessionId);
  const set = c.watchers.get(sessionId) ?? new Set<{ poke(): void }>();
  const source = { read: (id: string, o: ReadOptions) => read(c, id, o), history: (id: string) => history(c, id) };
  const w = await watchRecords((poke) => c.backend.changes(sessionId, poke), sessionId, afterSeq, source, deliver, (reason) => {
    set.delete(w);
    onEnd(reason);
  });
  set.add(w);
  c.watchers.set(sessionId, set);
  return w;
}
