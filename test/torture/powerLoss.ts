import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileSessionStore } from '../../src/store/fileStore.js';
import { CrashRecorder, replay, type Variant } from './crashFs.js';
import {
  addStats, type CheckStats, checkSession, countBlobFiles, fail, fastTmp, Ledger, newCheckStats, type Op, SessionModel, sessionsOnDisk, type StoreView, type Stored,
  TortureFailure,
} from './model.js';
import { Rng } from './rng.js';

/**
 * Scenario 2 — simulated power loss. The store library runs a workload (creates, pipelined
 * append batches, turn transitions, compactions, close/reopen) on a CrashRecorder layer; then,
 * for EVERY sync point of that run, the directory state a power cut there would leave (only
 * what was synced; renames and creates only if their directory was synced after them) is
 * materialized into a fresh directory — also with the index cache as it was, with a torn
 * prefix of the last unsynced write, or with zeros in its place — and opened by a fresh store,
 * which must hold every record acknowledged before that point and report no corruption.
 */

export interface PowerLossOptions {
  workloads: number;
  seed: number;
  /** Operations per workload (default 40). */
  ops?: number;
  /** Where crash images are made (default: a tmpfs when there is one). */
  tmp?: string;
  /** Where the live store runs (default: the OS temp dir, on a disk that reuses inode numbers). */
  liveTmp?: string;
  progress?: (line: string) => void;
}

export interface PowerLossStats extends CheckStats {
  workloads: number;
  /** Sync points crashed at (each a distinct instant of a workload), plus each workload's end. */
  crashPoints: number;
  /** Crash images opened and checked (a point gives up to four variants). */
  images: number;
  variants: Record<Variant, number>;
  /** Distinct acknowledged records over all workloads. */
  uniqueRecords: number;
  /** state/set and state/delete acknowledged. */
  stateOps: number;
  /** Blob files the live stores ended with. */
  blobFiles: number;
}

export function storeView(s: FileSessionStore, root: string): StoreView {
  return {
    root,
    open: (id) => s.open(id, 'write'),
    read: (id, afterSeq, generation) => s.read(id, { afterSeq, limit: 1000, inline: true, ...(generation === undefined ? {} : { generation }) }) as Promise<{ records: Stored[]; nextAfterSeq: number | null }>,
    history: (id) => s.history(id),
    getState: (id, key) => s.getState(id, key),
  };
}

/** Runs one operation against the store library. */
export async function execOp(s: FileSessionStore, op: Op): Promise<unknown> {
  switch (op.type) {
    case 'append': return s.append(op.sessionId, op.records);
    case 'compact': return s.compact(op.sessionId, { summary: op.summary, throughSeq: op.throughSeq });
    case 'allocate': return s.allocateScratch(op.sessionId, op.requestId);
    case 'state': return op.value === undefined ? s.deleteState(op.sessionId, op.key) : s.setState(op.sessionId, op.key, op.value);
    case 'turn': {
      if (op.method === 'turn/start') return s.startTurn(op.sessionId, op.params.kind);
      const p = op.params as { turnId: string; phase?: string; error?: string; outcome?: string };
      switch (op.method) {
        case 'turn/setPhase': return s.transitionTurn(op.sessionId, p.turnId, { event: 'phase', phase: p.phase as 'providerStream' });
        case 'turn/fail': return s.transitionTurn(op.sessionId, p.turnId, { event: 'fail', error: p.error as string });
        case 'turn/resume': return s.transitionTurn(op.sessionId, p.turnId, { event: 'resume' });
        case 'turn/finish': return s.transitionTurn(op.sessionId, p.turnId, { event: 'finish', outcome: p.outcome as 'completed' });
      }
    }
  }
}

/** The workload: logs every acknowledgement into the recorder's event log as it happens. */
async function workload(s: FileSessionStore, rng: Rng, rec: CrashRecorder, ops: number, stats: PowerLossStats, runtime: boolean): Promise<void> {
  const models: SessionModel[] = [];
  const thresholds = new Map<string, number>();
  const pool: string[] = [];
  const create = async () => {
    const small = runtime && rng.chance(0.7);
    const blobThreshold = small ? rng.range(1024, 4096) : 256 * 1024;
    const { sessionId } = await s.create({ title: `power ${models.length}`, ...(rng.chance(0.3) ? { systemPrompt: 'sys' } : {}), ...(small ? { blobThreshold } : {}) });
    thresholds.set(sessionId, blobThreshold);
    rec.ack((l) => l.session(sessionId));
    models.push(new SessionModel(sessionId, 0, 1, null));
  };
  await create();
  await create();
  for (let i = 0; i < ops;) {
    if (models.length < 3 && rng.chance(0.03)) await create();
    if (rng.chance(0.04)) {
      const m = rng.pick(models);
      await s.close(m.id);
      await s.open(m.id, 'write');
    }
    const group = rng.chance(0.5) ? 1 : rng.range(2, 5);
    const running: Array<Promise<void>> = [];
    for (let g = 0; g < group; g++, i++) {
      const m = rng.pick(models);
      const op = m.plan(rng, runtime
        ? { compactP: 0.06, turnP: 0.15, stateP: 0.25, allocateP: 0.04, runtimeP: 0.15, blobP: 0.12, pool }
        : { compactP: 0.08, turnP: 0.2 });
      rec.ack((l) => l.stateSent(op));
      running.push(execOp(s, op).then((r) => {
        rec.ack((l) => l.ack(op, r, thresholds.get(op.sessionId)));
        m.settled(op);
        if (op.type === 'state') stats.stateOps += 1;
        if (op.type === 'allocate') m.allocated.push({ toolSeq: (r as { toolSeq: number }).toolSeq, requestId: op.requestId });
        if (op.type === 'turn' && op.method === 'turn/start') m.started((r as { turnId: string }).turnId);
      }));
    }
    await Promise.all(running);
  }
}

export async function runPowerLoss(opts: PowerLossOptions): Promise<PowerLossStats> {
  const stats: PowerLossStats = {
    ...newCheckStats(), workloads: 0, crashPoints: 0, images: 0, uniqueRecords: 0, stateOps: 0, blobFiles: 0,
    variants: { synced: 0, 'synced+index': 0, torn: 0, zeros: 0 },
  };
  const master = new Rng(opts.seed);
  for (let w = 0; w < opts.workloads; w++) {
    const seed = master.fork().seed;
    const rng = new Rng(seed);
    // The live store on the real disk: its file system reuses inode numbers (tmpfs never does),
    // and a reused number is what a stale index entry may meet after a crash.
    const base = fs.mkdtempSync(path.join(opts.tmp ?? fastTmp(), 'torture-power-'));
    const liveBase = fs.mkdtempSync(path.join(opts.liveTmp ?? os.tmpdir(), 'torture-power-live-'));
    const live = path.join(liveBase, 'live');
    const scratch = path.join(base, 'images');
    fs.mkdirSync(live, { mode: 0o700 });
    fs.mkdirSync(scratch, { mode: 0o700 });
    const where = (extra: string) => `power-loss torture: seed ${opts.seed}, workload ${w} (workload seed ${seed}); ${extra}`;
    const rec = new CrashRecorder(live);
    const s = new FileSessionStore(live, { fs: rec.layer, leases: false });
    try {
      // Every other workload (the first included) also writes state values, runtime records and
      // blobs (sessions with a blobThreshold of 1024-4096, large strings and $attach values, some
      // of them sent again).
      await workload(s, rng, rec, opts.ops ?? 40, stats, w % 2 === 0);
    } catch (err) {
      throw new TortureFailure(`${(err as Error).message}\n  the workload itself failed: ${where(`live store kept at ${live}`)}`);
    } finally {
      await s.closeAll();
    }
    stats.blobFiles += countBlobFiles(live);
    let last: Ledger | undefined;
    const { points, images } = await replay(rec, {
      scratch,
      tornLength: (n) => (rng.chance(0.2) ? n : rng.range(1, n)),
      newLedger: () => (last = new Ledger()),
      check: async (image, point) => {
        const fresh = new FileSessionStore(image, { leases: false });
        try {
          const ids = new Set([...point.ledger.sessions.keys(), ...sessionsOnDisk(image)]);
          for (const id of ids) {
            const ledger = point.ledger.sessions.get(id);
            if (ledger && !fs.existsSync(path.join(image, 'sessions', id, 'journal.jsonl'))) fail(`the acknowledged session ${id} is gone`);
            const { stats: one } = await checkSession(storeView(fresh, image), id, ledger);
            addStats(stats, one);
          }
          await fresh.list();
          await fresh.closeAll();
        } catch (err) {
          await fresh.closeAll().catch(() => undefined);
          const e = err as Error & { kind?: string };
          throw new TortureFailure(`${e.kind ? `${e.kind}: ` : ''}${e.message}\n  ${where(`crash before event ${point.at} of ${rec.events.length}, variant ${point.variant}${point.tornBytes !== undefined ? ` (${point.tornBytes} bytes of the last unsynced write)` : ''}; image kept at ${image}`)}`);
        }
        stats.variants[point.variant] += 1;
      },
    });
    stats.workloads += 1;
    stats.crashPoints += points;
    stats.images += images;
    for (const sl of last?.sessions.values() ?? []) stats.uniqueRecords += sl.records.size;
    opts.progress?.(`power loss: workload ${w + 1}/${opts.workloads}: ${points} crash points, ${images} images`);
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(liveBase, { recursive: true, force: true });
  }
  return stats;
}
