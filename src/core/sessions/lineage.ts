/**
 * Compaction (planned here, one rotate in the backend), rewind, fork, and the trash: delete,
 * restore, purge, the trash listing. The rules are the protocol's, once for every backend.
 */
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';
import { checkCompactionThrough, checkRewindTarget, type RewindRecord, rewindRecord } from '../../domain/rewind.js';
import { guardValue } from '../../domain/secrets/gate.js';
import { baseState } from '../../domain/sessionUpdate.js';
import { sanitizeSummary } from '../../domain/summary.js';
import type { CompactRequest, PurgeOutcome, RecordInput, RewindResult, SessionHeader, TrashEntry } from '../../domain/types.js';
import { prepareBatch, rewindPlan } from '../commit/appendPlan.js';
import { checkpointMembers, EMPTY_PREFIX, reducePrefix, type PrefixState } from '../commit/reduce.js';
import type { Fence, SealedRecord } from '../port.js';
import type { Core } from './context.js';
import { closeLive, createWith } from './open.js';
import { parseExact, stringifyExact } from '../../domain/exactJson.js';

type Compacted = { generation: number; checkpointSeq: number; archived: { generation: number; records: number; bytes: number } };

/** Records reduced between two yields to the event loop (a few ms of parsing). */
const REDUCE_SLICE = 500;

/**
 * The prefix state of `records` (in seq order), reduced record by record, yielding to the event
 * loop every REDUCE_SLICE records: a compaction's plan over a large session never stalls the
 * other sessions this sidecar serves.
 */
async function prefixOf(records: readonly SealedRecord[], base?: ReturnType<typeof baseState>): Promise<PrefixState> {
  let prefix = EMPTY_PREFIX;
  let n = 0;
  for (const r of records) {
    prefix = reducePrefix(prefix, { ...(JSON.parse(r.text) as Record<string, unknown>), seq: r.seq, kind: r.kind }, base);
    if (++n % REDUCE_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return prefix;
}

/** Compacts the records up to throughSeq into a checkpoint, alone in the commit queue, archiving the generation whole. */
export async function compact(c: Core, sessionId: string, req: CompactRequest): Promise<Compacted> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  const summary = sanitizeSummary(req.summary);
  const extra = { summary, ...(req.provider ? { provider: req.provider } : {}), ...(req.model ? { model: req.model } : {}) };
  return c.commitInOrder(s, () => s.queue.exclusive(async () => {
    const lastSeq = s.queue.lastSeq;
    if (req.expectedLastSeq !== undefined && req.expectedLastSeq !== lastSeq) {
      throw new StoreError('Conflict', `expectedLastSeq ${req.expectedLastSeq} does not match lastSeq ${lastSeq}; nothing was compacted`, {
        expectedLastSeq: req.expectedLastSeq, lastSeq, stage: 'preCommit',
      });
    }
    // The plan reads the session (nothing is written yet): a failed read changes nothing.
    const { row, kept, prefix } = await beforeCommit(async () => {
      const row = await c.loadLive(sessionId);
      if (req.throughSeq < row.firstSeq || req.throughSeq > lastSeq) {
        throw new StoreError('OutOfRange', `throughSeq must be between ${row.firstSeq} and ${lastSeq}`, { path: 'throughSeq', min: row.firstSeq, max: lastSeq });
      }
      const kept = (await c.activeRecords(sessionId, lastSeq, ['rewind'])).filter((r) => r.seq > req.throughSeq);
      return { row, kept, prefix: await prefixOf(await c.activeRecords(sessionId, req.throughSeq), baseState(s.header)) };
    });
    if (req.throughSeq < row.firstSeq || req.throughSeq > lastSeq) {
      throw new StoreError('OutOfRange', `throughSeq must be between ${row.firstSeq} and ${lastSeq}`, { path: 'throughSeq', min: row.firstSeq, max: lastSeq });
    }
    checkCompactionThrough(req.throughSeq, kept.map((r) => ({ seq: r.seq, toSeq: Number((JSON.parse(r.text) as { toSeq?: unknown }).toSeq) })));
    const archived = { generation: row.generation, records: row.records, bytes: row.storedBytes };
    const guarded = guardValue({ ...checkpointMembers(req.throughSeq, row.generation + 1, prefix, archived), ...extra }, c.secrets, 'checkpoint');
    if (Buffer.byteLength(guarded.text) > c.maxRecordBytes) throw new StoreError('PayloadTooLarge', `the checkpoint is larger than ${c.maxRecordBytes} bytes`);
    const checkpoint = c.gate.checkpoint({ seq: req.throughSeq, ts: new Date(c.clock()).toISOString(), kind: 'checkpoint', text: guarded.text });
    const done = await c.backend.rotate(s.fence, { throughSeq: req.throughSeq, checkpoint, expect: { lastSeq, generation: row.generation } });
    s.generation = done.generation;
    return { generation: done.generation, checkpointSeq: req.throughSeq, archived };
  }));
}

/** The state as of toSeq is reduced when the rewind's turn in the queue comes (everything before it committed). */
export async function rewind(c: Core, sessionId: string, toSeq: number, opts: { expectedLastSeq?: number } = {}): Promise<RewindResult> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  let rec: RewindRecord | undefined;
  const committed = await c.commitInOrder(s, () => s.queue.appendPrepared(async () => {
    // Under the lease, with nothing else of this session committing: firstSeq cannot move meanwhile.
    const row = await c.loadLive(sessionId);
    checkRewindTarget(toSeq, row.firstSeq, s.queue.lastSeq);
    rec = rewindRecord(toSeq, await prefixOf(toSeq === 0 ? [] : await c.activeRecords(sessionId, toSeq)));
    const [text] = prepareBatch([rec as unknown as RecordInput], c.secrets, c.maxRecordBytes).texts;
    return { texts: [], expectedLastSeq: opts.expectedLastSeq, plan: rewindPlan(text as string, rec) };
  }));
  return { seq: committed.firstSeq, toSeq, turn: (rec as RewindRecord).turn };
}

/** A new session with a copy of the records up to atSeq (of the active generation), linked to its parent; opened for writing. */
export async function fork(c: Core, sessionId: string, atSeq?: number): Promise<{ sessionId: string }> {
  await c.settled(sessionId);
  const row = await c.loadLive(sessionId);
  const at = atSeq ?? row.lastSeq;
  const min = row.firstSeq === 1 ? 0 : row.firstSeq;
  if (at < min || at > row.lastSeq) {
    throw new StoreError('OutOfRange', `atSeq must be between ${min} and ${row.lastSeq} (older records are archived)`, { path: 'atSeq', min, max: row.lastSeq });
  }
  const copies = (at === 0 ? [] : await c.activeRecords(sessionId, at)).map(ownCheckpoint);
  const { sessionId: _id, createdAt: _c, secretEnv, parent: _p, idempotency: _key, ...fields } = JSON.parse(row.headerText) as SessionHeader; // a fork never inherits the create key
  const created = await createWith(c, { ...fields, parent: { sessionId, relation: 'fork', atSeq: at } }, { env: secretEnv }, copies);
  return { sessionId: created.sessionId };
}

/**
 * A fork has no archives of its own: the checkpoint it starts at (a compacted source's) starts
 * its generation 0 and names no archived generation — as the file store's forks always wrote it.
 */
function ownCheckpoint(r: SealedRecord): SealedRecord {
  if (r.kind !== 'checkpoint') return r;
  const body = parseExact(r.text) as Record<string, unknown>;
  delete body.archived;
  body.generation = 0;
  return { ...r, text: stringifyExact(body) };
}

/** The sessions in the trash, most recently deleted first. */
export async function listTrash(c: Core): Promise<TrashEntry[]> {
  const out: TrashEntry[] = (await c.backend.listTrash()).map((t) => {
    const title = (JSON.parse(t.headerText) as SessionHeader).title;
    return { sessionId: t.sessionId, ...(title !== undefined ? { title } : {}), deletedAt: t.deletedAt, bytes: t.storedBytes };
  });
  return out.sort((a, b) => (a.deletedAt < b.deletedAt ? 1 : a.deletedAt > b.deletedAt ? -1 : a.sessionId < b.sessionId ? 1 : -1));
}

/**
 * Moves a session to the trash, or removes it for good (purge, also from the trash). A session
 * open for writing in another process cannot be deleted: its lease is taken first.
 */
export async function remove(c: Core, sessionId: string, purge = false, opts: { ifIdle?: boolean; dryRun?: boolean } = {}): Promise<void> {
  checkSessionId(sessionId);
  c.refuseIfReadOnly('delete a session');
  const row = await c.backend.load(sessionId).catch(async (err: unknown) => {
    // Parts of a delete or purge a crash cut short: the repeated request completes them.
    if (err instanceof StoreError && err.kind === 'SessionNotFound' && await c.backend.leftovers?.(sessionId)) return undefined;
    throw err;
  });
  if (row?.trashed && !purge && !(await c.backend.leftovers?.(sessionId))) {
    throw new StoreError('Conflict', `session ${sessionId} is already in the trash: restore or purge it`, { reason: 'inTrash', sessionId });
  }
  const open = c.sessions.get(sessionId);
  if (opts.ifIdle && open?.queue) {
    throw new StoreError('SessionLocked', `session ${sessionId} is open for writing in this process`, { sessionId, reason: 'openHere' });
  }
  if (opts.dryRun) {
    // What the move would meet, nothing moved: a deleted session of the id in the trash (the
    // backend's trash refuses that), then the writer lease, held by a live process or not.
    if (purge || !opts.ifIdle) throw new Error('remove: dryRun is a prune check (ifIdle, no purge)');
    if (!row?.trashed && await c.backend.inTrash?.(sessionId)) {
      throw new StoreError('Conflict', `a deleted session ${sessionId} is already in the trash: restore or purge it first`, { reason: 'inTrash', sessionId });
    }
    const fence = await c.backend.leases.acquire(sessionId);
    await c.backend.leases.release(fence).catch(() => undefined);
    return;
  }
  if (open) {
    c.sessions.delete(sessionId);
    await closeLive(c, open);
  }
  const fence = await c.backend.leases.acquire(sessionId);
  try {
    await (purge ? c.backend.purge(fence) : c.backend.trash(fence));
  } finally {
    if (!purge) await c.backend.leases.release(fence).catch(() => undefined);
  }
}

/**
 * trash empty's purge (engine/trash.ts): the check that no live session uses the id and the
 * purge are one step under the session's lease. Held (a writer of a live session, a restore at
 * work): 'open' or 'live', nothing done; restored first: 'live'; gone meanwhile: 'gone'.
 */
export async function purgeTrashed(c: Core, sessionId: string): Promise<PurgeOutcome> {
  checkSessionId(sessionId);
  c.refuseIfReadOnly('purge a session');
  const state = async (): Promise<PurgeOutcome> => {
    const row = await c.backend.load(sessionId).catch((err: unknown) => {
      if (err instanceof StoreError && err.kind === 'SessionNotFound') return undefined;
      throw err;
    });
    return row === undefined ? 'gone' : row.trashed ? 'open' : 'live';
  };
  let fence: Fence;
  try {
    fence = await c.backend.leases.acquire(sessionId);
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'SessionLocked') return state();
    throw err;
  }
  try {
    await c.backend.purgeTrashed(fence);
    return 'purged';
  } catch (err) {
    await c.backend.leases.release(fence).catch(() => undefined);
    if (err instanceof StoreError && err.kind === 'SessionNotFound') return state();
    throw err;
  }
}

/** Brings a deleted session back from the trash. */
export async function restore(c: Core, sessionId: string): Promise<void> {
  checkSessionId(sessionId);
  c.refuseIfReadOnly('restore a session');
  const row = await c.backend.load(sessionId);
  if (!row.trashed && !(await c.backend.inTrash?.(sessionId))) throw new StoreError('SessionNotFound', `session ${sessionId} is not in the trash`, { sessionId });
  const fence = await c.backend.leases.acquire(sessionId);
  try {
    await c.backend.restore(fence);
  } finally {
    await c.backend.leases.release(fence).catch(() => undefined);
  }
}

/** A compaction's reads before anything is written: an I/O error there is NotWritten, stage preCommit. */
async function beforeCommit<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof StoreError) throw err;
    const code = (err as { code?: unknown } | null)?.code;
    const errno = typeof code === 'string' ? code : undefined;
    throw new StoreError('NotWritten', `compaction failed before its commit (${errno ?? 'I/O error'}); the journal is unchanged`, { stage: 'preCommit', ...(errno ? { errno } : {}) });
  }
}
