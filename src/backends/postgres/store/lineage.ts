import type { SealedRecord } from '../../../backend/port.js';
import { checkpointMembers, EMPTY_PREFIX, reducePrefix } from '../../../engine/reduce.js';
import { baseState, effectiveHeader } from '../../../domain/sessionUpdate.js';
import { stateOfRow } from './session.js';
import { StoreError } from '../../../domain/errors.js';
import { sanitizeSummary } from '../../../domain/summary.js';
import { checkSessionId } from '../../../domain/ids.js';
import { guardValue } from '../../../domain/secrets/gate.js';
import type { CompactRequest, PurgeOutcome, RecordInput, RewindResult, SessionHeader, TrashEntry } from '../../../domain/types.js';
import { checkCompactionThrough, checkRewindTarget, type RewindRecord, rewindRecord } from '../../../domain/rewind.js';
import { prepareBatch, rewindPlan } from '../../../engine/appendPlan.js';
import { pg } from './errors.js';
import { PgReadStore } from './reads.js';

/** Compaction (one transaction: rotate), fork, and delete/restore/purge over PostgreSQL. */
export class PgLineageStore extends PgReadStore {
  async compact(sessionId: string, req: CompactRequest): Promise<{ generation: number; checkpointSeq: number; archived: { generation: number; records: number; bytes: number } }> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    const summary = sanitizeSummary(req.summary);
    const extra = { summary, ...(req.provider ? { provider: req.provider } : {}), ...(req.model ? { model: req.model } : {}) };
    return this.commitInOrder(s, () => s.queue.exclusive(async () => {
      const lastSeq = s.queue.lastSeq;
      if (req.expectedLastSeq !== undefined && req.expectedLastSeq !== lastSeq) {
        throw new StoreError('Conflict', `expectedLastSeq ${req.expectedLastSeq} does not match lastSeq ${lastSeq}; nothing was compacted`, {
          expectedLastSeq: req.expectedLastSeq, lastSeq, stage: 'preCommit',
        });
      }
      const row = await this.loadLive(sessionId);
      if (req.throughSeq < row.firstSeq || req.throughSeq > lastSeq) {
        throw new StoreError('InvalidArgument', `throughSeq must be between ${row.firstSeq} and ${lastSeq}`, { path: 'throughSeq' });
      }
      const kept = (await this.activeRecords(sessionId, lastSeq, ['rewind'])).filter((r) => r.seq > req.throughSeq);
      checkCompactionThrough(req.throughSeq, kept.map((r) => ({ seq: r.seq, toSeq: Number((JSON.parse(r.text) as { toSeq?: unknown }).toSeq) })));
      let prefix = EMPTY_PREFIX;
      const base = baseState(s.header);
      for (const r of await this.activeRecords(sessionId, req.throughSeq)) {
        prefix = reducePrefix(prefix, { ...(JSON.parse(r.text) as Record<string, unknown>), seq: r.seq, kind: r.kind }, base);
      }
      const archived = { generation: row.generation, records: row.records, bytes: row.storedBytes };
      const guarded = guardValue({ ...checkpointMembers(req.throughSeq, row.generation + 1, prefix, archived), ...extra }, this.allSecrets, 'checkpoint');
      if (Buffer.byteLength(guarded.text) > this.maxRecordBytes) throw new StoreError('PayloadTooLarge', `the checkpoint is larger than ${this.maxRecordBytes} bytes`);
      const rule = this.gate([guarded.text]);
      if (rule) throw new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { path: '(checkpoint)', rule });
      const checkpoint: SealedRecord = { seq: req.throughSeq, ts: new Date(this.clock()).toISOString(), kind: 'checkpoint', text: guarded.text };
      const done = await pg(() => this.db.rotate(sessionId, { throughSeq: req.throughSeq, checkpoint, expect: { lastSeq, generation: row.generation }, fence: s.fence }));
      s.generation = done.generation;
      return { generation: done.generation, checkpointSeq: req.throughSeq, archived };
    }));
  }

  /** The state as of toSeq is reduced when the rewind's turn in the queue comes (everything before it committed). */
  async rewind(sessionId: string, toSeq: number, opts: { expectedLastSeq?: number } = {}): Promise<RewindResult> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    let rec: RewindRecord | undefined;
    const committed = await this.commitInOrder(s, () => s.queue.appendPrepared(async () => {
      // Under the lease, with nothing else of this session committing: firstSeq cannot move meanwhile.
      const row = await this.loadLive(sessionId);
      checkRewindTarget(toSeq, row.firstSeq, s.queue.lastSeq);
      let prefix = EMPTY_PREFIX;
      for (const r of toSeq === 0 ? [] : await this.activeRecords(sessionId, toSeq)) {
        prefix = reducePrefix(prefix, { ...(JSON.parse(r.text) as Record<string, unknown>), seq: r.seq, kind: r.kind });
      }
      rec = rewindRecord(toSeq, prefix);
      const [text] = prepareBatch([rec as unknown as RecordInput], this.allSecrets, this.maxRecordBytes).texts;
      return { texts: [], expectedLastSeq: opts.expectedLastSeq, plan: rewindPlan(text as string, rec) };
    }));
    return { seq: committed.firstSeq, toSeq, turn: (rec as RewindRecord).turn };
  }

  async fork(sessionId: string, atSeq?: number): Promise<{ sessionId: string }> {
    await this.settled(sessionId);
    const row = await this.loadLive(sessionId);
    const at = atSeq ?? row.lastSeq;
    if (at < row.firstSeq - (row.firstSeq === 1 ? 1 : 0) || at > row.lastSeq) {
      throw new StoreError('InvalidArgument', `atSeq must be between ${row.firstSeq} and ${row.lastSeq} (older records are archived)`, { path: 'atSeq' });
    }
    const copies = at === 0 ? [] : await this.activeRecords(sessionId, at);
    const { sessionId: _id, createdAt: _c, secretEnv, parent: _p, ...fields } = JSON.parse(row.headerText) as SessionHeader;
    const created = await this.createWith({ ...fields, parent: { sessionId, relation: 'fork', atSeq: at } }, { env: secretEnv }, copies);
    return { sessionId: created.sessionId };
  }

  /** Trashed rows; deletedAt is the row's updated_at, which the trash move sets (sessions.ts). */
  async listTrash(): Promise<TrashEntry[]> {
    const out: TrashEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await pg(() => this.db.list({ ...(after !== undefined ? { after } : {}), limit: 1000, trashed: true }));
      for (const row of page.sessions) {
        const title = (JSON.parse(row.headerText) as SessionHeader).title;
        out.push({ sessionId: row.sessionId, ...(title !== undefined ? { title } : {}), deletedAt: row.updatedAt, bytes: row.storedBytes });
      }
      if (page.nextAfter === null) break;
      after = page.nextAfter;
    }
    return out.sort((a, b) => (a.deletedAt < b.deletedAt ? 1 : a.deletedAt > b.deletedAt ? -1 : a.sessionId < b.sessionId ? 1 : -1));
  }

  async header(sessionId: string): Promise<SessionHeader> {
    // the effective header (after session/update): prune's tag filter sees the tags as they are now
    const row = await this.loadLive(checkSessionId(sessionId));
    return effectiveHeader(JSON.parse(row.headerText) as SessionHeader, stateOfRow(row).header);
  }

  async delete(sessionId: string, purge = false, opts: { ifIdle?: boolean } = {}): Promise<void> {
    checkSessionId(sessionId);
    this.refuseIfReadOnly('delete a session');
    const row = await pg(() => this.db.load(sessionId));
    if (row.trashed && !purge) {
      throw new StoreError('Conflict', `session ${sessionId} is already in the trash: restore or purge it`, { reason: 'inTrash', sessionId });
    }
    const open = this.sessions.get(sessionId);
    if (opts.ifIdle && open?.queue) {
      throw new StoreError('SessionLocked', `session ${sessionId} is open for writing in this process`, { sessionId, reason: 'openHere' });
    }
    if (open) {
      this.sessions.delete(sessionId);
      await open.close();
    }
    // A session open for writing elsewhere cannot be deleted: its lease is taken first.
    const fence = await pg(() => this.db.leases.acquire(sessionId));
    try {
      await pg(() => this.db.remove(sessionId, purge ? 'purge' : 'trash', fence));
    } finally {
      if (!purge) await this.db.leases.release(fence).catch(() => undefined);
    }
  }

  /**
   * trash empty's purge: one statement deletes the row only while it is trashed, under the
   * session's lease (a writer or a restore holding it: 'open'); a row restored first is 'live'.
   */
  async purgeTrashed(sessionId: string): Promise<PurgeOutcome> {
    checkSessionId(sessionId);
    this.refuseIfReadOnly('purge a session');
    const state = async (): Promise<PurgeOutcome> => {
      const row = await pg(() => this.db.load(sessionId)).catch((err: unknown) => {
        if (err instanceof StoreError && err.kind === 'SessionNotFound') return undefined;
        throw err;
      });
      return row === undefined ? 'gone' : row.trashed ? 'open' : 'live';
    };
    let fence;
    try {
      fence = await pg(() => this.db.leases.acquire(sessionId));
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'SessionLocked') return state(); // held: by a writer of a live row, or a restore at work
      throw err;
    }
    try {
      await pg(() => this.db.remove(sessionId, 'purgeTrashed', fence));
      return 'purged';
    } catch (err) {
      await this.db.leases.release(fence).catch(() => undefined);
      if (err instanceof StoreError && err.kind === 'SessionNotFound') return state();
      throw err;
    }
  }

  async restore(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    this.refuseIfReadOnly('restore a session');
    const row = await pg(() => this.db.load(sessionId));
    // One row per session here: a session not in the trash has nothing to restore.
    if (!row.trashed) throw new StoreError('SessionNotFound', `session ${sessionId} is not in the trash`, { sessionId });
    const fence = await pg(() => this.db.leases.acquire(sessionId));
    try {
      await pg(() => this.db.remove(sessionId, 'restore', fence));
    } finally {
      await this.db.leases.release(fence).catch(() => undefined);
    }
  }
}
