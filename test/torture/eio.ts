import fs from 'node:fs';
import path from 'node:path';
import { type FsLayer, nodeFs } from '../../src/durable/fsLayer.js';
import { StoreError } from '../../src/domain/errors.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import {
  addStats, type CheckStats, checkSession, fail, fastTmp, Ledger, newCheckStats, type Op, SessionModel, sessionsOnDisk, TortureFailure,
} from './model.js';
import { execOp, storeView } from './powerLoss.js';
import { Rng } from './rng.js';

/**
 * Scenario 4 — EIO from a sync, injected through the fs seam at the store level (the binary
 * has no fault-injection hook). A seeded workload is run once per sync call it makes; run k
 * fails the k-th sync (fdatasync of an append, of a compaction's archive or new journal — also
 * the ones every 4 MiB of their copies — or of a fork's journal; fsync of a created journal or of
 * a directory) with EIO. An fdatasync failure either keeps the
 * written bytes, drops them (the kernel discarded the dirty pages) or keeps a torn part.
 * Checked: nothing whose sync failed is acknowledged; an append (or turn transition, or a
 * compaction after its rename) hit by it answers Uncertain and the session fail-stops — every
 * later write is refused ReadOnly/failStop, a write open too, and reads show only what was
 * committed; failures before a commit point (NotWritten) leave the session writable; other
 * sessions carry on; finally a fresh store opens every session with no Corrupt and exactly the
 * acknowledged records (plus, when the bytes were kept, the uncertain batch whole).
 */

export type EioMode = 'keep' | 'drop' | 'torn';

export interface EioOptions {
  seed: number;
  workloads: number;
  /** Operations per workload (default 30). */
  ops?: number;
  tmp?: string;
  progress?: (line: string) => void;
}

export interface EioStats extends CheckStats {
  /** Runs with one injected EIO (one per sync call of each workload). */
  injections: number;
  byCall: { fdatasync: number; fsync: number };
  byMode: Record<EioMode, number>;
  uncertain: number;
  notWritten: number;
  /** Writes refused ReadOnly/failStop after an Uncertain, as they must be. */
  refusedAfterFailStop: number;
  freshOpens: number;
}

function eio(): Error {
  return Object.assign(new Error('injected EIO'), { code: 'EIO' });
}

/** Counts sync calls; the `failAt`-th (1-based) fails with EIO. */
function faultLayer(failAt: number, mode: EioMode, rng: Rng) {
  const state = { syncs: 0, fired: undefined as undefined | 'fdatasync' | 'fsync' };
  const syncedSize = new Map<number, number>();
  const layer: FsLayer = {
    ...nodeFs,
    openSync(p, flags, mode) {
      const fd = nodeFs.openSync(p, flags, mode);
      const st = fs.fstatSync(fd);
      if (st.isFile()) syncedSize.set(fd, st.size); // what a file held when opened was made durable by whoever wrote it
      return fd;
    },
    closeSync(fd) {
      syncedSize.delete(fd);
      nodeFs.closeSync(fd);
    },
    async close(fd) {
      syncedSize.delete(fd);
      await nodeFs.close(fd);
    },
    async fdatasync(fd) {
      if (++state.syncs === failAt) {
        state.fired = 'fdatasync';
        const synced = syncedSize.get(fd);
        const size = fs.fstatSync(fd).size;
        if (synced !== undefined && synced < size && mode !== 'keep') {
          // the kernel dropped the dirty pages (all of them, or all but a torn part)
          nodeFs.ftruncateSync(fd, mode === 'drop' ? synced : synced + rng.range(1, size - synced));
        }
        throw eio();
      }
      await nodeFs.fdatasync(fd);
      syncedSize.set(fd, fs.fstatSync(fd).size);
    },
    fsyncSync(fd) {
      if (++state.syncs === failAt) {
        state.fired = 'fsync';
        throw eio();
      }
      nodeFs.fsyncSync(fd);
      const st = fs.fstatSync(fd);
      if (st.isFile()) syncedSize.set(fd, st.size);
    },
  };
  return { layer, state };
}

interface RunResult { syncs: number; fired: undefined | 'fdatasync' | 'fsync' }

/** One workload with the failAt-th sync failing (0: none). */
async function runOnce(root: string, seed: number, ops: number, failAt: number, mode: EioMode, stats: EioStats): Promise<RunResult> {
  const rng = new Rng(seed);
  const { layer, state } = faultLayer(failAt, mode, new Rng(seed ^ failAt));
  await new FileSessionStore(root, { leases: false }).closeAll(); // the store's folders exist before the faults start
  const s = new FileSessionStore(root, { fs: layer, leases: false });
  const ledger = new Ledger();
  const models: SessionModel[] = [];
  const failStopped = new Set<string>();
  const exact = new Set<string>(); // sessions whose failed bytes were dropped: exactly the acknowledged records remain
  const kindOf = (err: unknown) => (err instanceof StoreError ? err.kind : `unexpected ${(err as Error)?.name}: ${(err as Error)?.message}`);

  /** The model of a session from what the store committed (after a failure made the prediction wrong). */
  const resync = async (m: SessionModel) => {
    const page = await s.read(m.id, { afterSeq: 0, limit: 1 });
    m.lastSeq = page.lastSeq;
    const first = page.records[0];
    m.firstSeq = first?.kind === 'checkpoint' ? first.seq : 1;
    const turn = await s.getTurn(m.id);
    m.turn = turn && (turn.status === 'active' || turn.status === 'retryable') ? { status: turn.status, turnId: turn.turnId } : null;
  };

  /** A fail-stopped session refuses every write and shows only what was committed. */
  const checkFailStop = async (m: SessionModel) => {
    for (const attempt of [
      () => s.append(m.id, [{ kind: 'event', type: 't.after', payload: null }]),
      () => s.startTurn(m.id, 'user'),
      () => s.open(m.id, 'write'),
    ]) {
      const err = await attempt().then(() => undefined, (e: unknown) => e);
      if (!(err instanceof StoreError) || err.kind !== 'ReadOnly' || err.details.reason !== 'failStop') {
        fail(`session ${m.id} after Uncertain: a write was not refused ReadOnly/failStop (${err === undefined ? 'it succeeded' : kindOf(err)})`);
      }
      stats.refusedAfterFailStop += 1;
    }
    const committed = ledger.session(m.id).maxSeq;
    const page = await s.read(m.id, { afterSeq: committed, limit: 10 });
    if (page.lastSeq !== committed || page.records.length !== 0) {
      fail(`session ${m.id} after Uncertain: this process reads lastSeq ${page.lastSeq}, committed ${committed}`);
    }
  };

  const create = async () => {
    try {
      const { sessionId } = await s.create({ title: `eio ${models.length}` });
      ledger.session(sessionId);
      models.push(new SessionModel(sessionId, 0, 1, null));
    } catch (err) {
      // STORAGE.md, Outcomes: NotWritten before the rename of the journal into place (no journal
      // left), Uncertain after it (the journal stays; the id is fail-stopped in this process).
      const id = (err as { details?: { sessionId?: string } }).details?.sessionId;
      const kept = id !== undefined && fs.existsSync(path.join(root, 'sessions', id, 'journal.jsonl'));
      const want = kept ? 'Uncertain' : 'NotWritten';
      if (kindOf(err) !== want) fail(`a create hit by EIO answered ${kindOf(err)}, expected ${want}`);
      if (kept) stats.uncertain += 1;
      else stats.notWritten += 1;
    }
  };

  try {
    for (let t = 0; t < 3 && models.length < 2; t++) await create();
    for (let i = 0; i < ops && models.length > 0; ) {
      if (models.length < 3 && rng.chance(0.05)) await create();
      const group = rng.chance(0.5) ? 1 : rng.range(2, 4);
      const running: Array<Promise<{ m: SessionModel; op: Op; err?: unknown }>> = [];
      for (let g = 0; g < group; g++, i++) {
        const m = rng.pick(models);
        const op = m.plan(rng, { compactP: 0.1, turnP: 0.2 });
        running.push(execOp(s, op).then((r) => ({ m, op, r }), (err: unknown) => ({ m, op, err })));
      }
      // In send order, which is each session's commit order.
      const results: Array<{ m: SessionModel; op: Op; r?: unknown; err?: unknown }> = await Promise.all(running);
      const failedInThisGroup = new Set<SessionModel>();
      const uncertainIn = new Set<string>();
      for (const { m, op, r, err } of results) {
        const kind = err === undefined ? 'ok' : kindOf(err);
        const details = err instanceof StoreError ? err.details : {};
        if (err === undefined) {
          if (failStopped.has(m.id) || uncertainIn.has(m.id)) fail(`session ${m.id}: ${op.type} succeeded after the session fail-stopped`);
          ledger.ack(op, r);
          if (op.type === 'turn' && op.method === 'turn/start') m.started((r as { turnId: string }).turnId);
          continue;
        }
        failedInThisGroup.add(m);
        if (kind === 'Uncertain') {
          if (details.errno !== undefined && details.errno !== 'EIO') fail(`Uncertain with errno ${String(details.errno)}`);
          stats.uncertain += 1;
          uncertainIn.add(m.id);
          failStopped.add(m.id);
          ledger.maybe(op);
          if (mode !== 'keep' && op.type === 'append' && state.fired === 'fdatasync') exact.add(m.id);
        } else if (kind === 'ReadOnly' && details.reason === 'failStop') {
          // queued behind the failed commit (or sent after it): must be a fail-stopped session
          if (!failStopped.has(m.id)) fail(`session ${m.id}: ReadOnly/failStop without an Uncertain before it`);
          stats.refusedAfterFailStop += 1;
        } else if (kind === 'NotWritten' || kind === 'RolledBack') {
          if (op.type !== 'compact' && state.fired === 'fdatasync') fail(`${op.type} answered ${kind} for a failed fdatasync: the bytes were written, the outcome is Uncertain`);
          stats.notWritten += 1;
        } else {
          fail(`${op.type}${op.type === 'turn' ? ` ${op.method}` : ''} failed with ${kind} (injected EIO at sync ${failAt}, ${state.fired ?? 'not fired'})`);
        }
      }
      for (const m of failedInThisGroup) {
        if (failStopped.has(m.id)) {
          await checkFailStop(m);
          models.splice(models.indexOf(m), 1); // read-only for good in this store instance
        } else {
          await resync(m);
        }
      }
      if (rng.chance(0.04) && models.length > 0) {
        const m = rng.pick(models);
        await s.close(m.id);
        try {
          await s.open(m.id, 'write');
        } catch (err) {
          // the open's sync of the journal failed: the session is simply not open here now
          if (state.fired !== 'fsync') fail(`a write open failed with ${kindOf(err)} without an injected fault`);
          models.splice(models.indexOf(m), 1);
        }
      }
    }
  } finally {
    await s.closeAll();
  }
  if (failAt > 0 && state.fired === undefined) return { syncs: state.syncs, fired: undefined };

  // A new process: opens every session cleanly, with every acknowledged record.
  const fresh = new FileSessionStore(root, { leases: false });
  try {
    for (const id of new Set([...ledger.sessions.keys(), ...sessionsOnDisk(root)])) {
      const { stats: one, opened } = await checkSession(storeView(fresh, root), id, ledger.sessions.get(id));
      addStats(stats, one);
      stats.freshOpens += 1;
      const acked = ledger.sessions.get(id)?.maxSeq ?? 0;
      if (exact.has(id) && mode === 'drop' && opened.lastSeq !== acked) fail(`session ${id}: the dropped batch's seqs are back (lastSeq ${opened.lastSeq}, acknowledged ${acked})`);
    }
    await fresh.list();
  } finally {
    await fresh.closeAll();
  }
  return { syncs: state.syncs, fired: state.fired };
}

export async function runEio(opts: EioOptions): Promise<EioStats> {
  const stats: EioStats = {
    ...newCheckStats(), injections: 0, byCall: { fdatasync: 0, fsync: 0 }, byMode: { keep: 0, drop: 0, torn: 0 }, uncertain: 0, notWritten: 0,
    refusedAfterFailStop: 0, freshOpens: 0,
  };
  const master = new Rng(opts.seed);
  const tmp = opts.tmp ?? fastTmp();
  const modes: EioMode[] = ['keep', 'drop', 'torn'];
  for (let w = 0; w < opts.workloads; w++) {
    const seed = master.fork().seed;
    const ops = opts.ops ?? 30;
    const dry = fs.mkdtempSync(path.join(tmp, 'torture-eio-'));
    const { syncs } = await runOnce(dry, seed, ops, 0, 'keep', stats);
    fs.rmSync(dry, { recursive: true, force: true });
    for (let k = 1; k <= syncs; k++) {
      const mode = modes[k % modes.length] as EioMode;
      const root = fs.mkdtempSync(path.join(tmp, 'torture-eio-'));
      try {
        const r = await runOnce(root, seed, ops, k, mode, stats);
        if (r.fired) {
          stats.injections += 1;
          stats.byCall[r.fired] += 1;
          if (r.fired === 'fdatasync') stats.byMode[mode] += 1;
        }
      } catch (err) {
        throw new TortureFailure(`${(err as Error).message}\n  EIO torture: seed ${opts.seed}, workload ${w} (workload seed ${seed}), EIO at sync call ${k} of ${syncs}, mode ${mode}; store kept at ${root}`);
      }
      fs.rmSync(root, { recursive: true, force: true });
    }
    opts.progress?.(`eio: workload ${w + 1}/${opts.workloads}: ${syncs} sync calls, each failed once`);
  }
  return stats;
}
