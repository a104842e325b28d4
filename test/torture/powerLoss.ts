import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { readOnlyFs } from '../../src/cli/readOnlyFs.js';
import { fullHistory, recordsOf } from '../../src/cli/records.js';
import { verifyStore } from '../../src/backends/file/verify/index.js';
import { CrashRecorder, replay, type Variant } from './crashFs.js';
import { LifecycleLedger, type Move, settle, trashedOnDisk, type Where } from './lifecycle.js';
import {
  addStats, type CheckStats, checkSession, countBlobFiles, fastTmp, type Ledger, newCheckStats, type Op, SessionModel, sessionsOnDisk, type StoreView, type Stored,
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
  /** session/update acknowledged. */
  updateOps: number;
  /** Blob files the live stores ended with. */
  blobFiles: number;
  /** Forks, deletes, restores and purges acknowledged. */
  moves: Record<Move | 'fork', number>;
  /** Writers killed inside an append's fdatasync (then a reader, then a new writer). */
  abandons: number;
  /** Requests of the read-only store beside the writers, by kind. */
  readerOps: Record<string, number>;
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
    case 'update': return s.update(op.sessionId, op.params);
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

/**
 * The writer store of a workload (a new one after a simulated kill) and two readers beside it:
 * a read-only store as the CLI opens one, and a second ordinary store (another sidecar) that
 * only lists, reads and opens for reading — the reader of issue 14's hole 1.
 */
interface Stores { s: FileSessionStore; reader: FileSessionStore; peer: FileSessionStore }

/** The scheduled steps of every workload, at this share of its operations (each once). */
const STEPS: ReadonlyArray<[number, Step]> = [[0.2, 'fork'], [0.35, 'delete'], [0.5, 'abandon'], [0.6, 'restore'], [0.75, 'purge'], [0.85, 'delete']];
type Step = 'fork' | 'delete' | 'restore' | 'purge' | 'abandon';

const lifecycle = (l: Ledger) => l as LifecycleLedger;

/** The workload: logs every acknowledgement into the recorder's event log as it happens. */
async function workload(st: Stores, rng: Rng, rec: CrashRecorder, live: string, ops: number, stats: PowerLossStats, runtime: boolean): Promise<void> {
  let models: SessionModel[] = [];
  const trashed: SessionModel[] = [];
  const thresholds = new Map<string, number>();
  const pool: string[] = [];
  const compacted = new Set<string>();
  const create = async () => {
    const small = runtime && rng.chance(0.7);
    const blobThreshold = small ? rng.range(1024, 4096) : 256 * 1024;
    const { sessionId } = await st.s.create({ title: `power ${models.length}`, ...(rng.chance(0.3) ? { systemPrompt: 'sys' } : {}), ...(small ? { blobThreshold } : {}) });
    thresholds.set(sessionId, blobThreshold);
    rec.ack((l) => l.session(sessionId));
    models.push(new SessionModel(sessionId, 0, 1, null));
  };
  /** Moves a session (delete, restore, purge): logged as in flight, then as acknowledged. */
  const move = async (m: SessionModel, how: Move, to: Where, run: () => Promise<void>) => {
    rec.ack((l) => lifecycle(l).moving(m.id, how));
    await run();
    rec.ack((l) => lifecycle(l).moved(m.id, to));
    stats.moves[how] += 1;
  };
  const step = async (what: Step) => {
    switch (what) {
      case 'fork': {
        // a compacted session forks from its checkpoint, without archives (not what checkSession expects)
        const uncompacted = models.filter((m) => !compacted.has(m.id));
        if (uncompacted.length === 0) await create();
        const source = uncompacted.sort((a, b) => b.lastSeq - a.lastSeq)[0] ?? models[models.length - 1] as SessionModel;
        const { sessionId } = await st.s.fork(source.id);
        const records = await readAllLive(st.s, sessionId);
        rec.ack((l) => lifecycle(l).forked(sessionId, records));
        thresholds.set(sessionId, thresholds.get(source.id) ?? 256 * 1024);
        const o = await st.s.open(sessionId, 'write');
        const m = SessionModel.fromOpen(sessionId, o.lastSeq, 1, o.turn);
        Object.assign(m, { openApi: source.openApi, toolHigh: source.toolHigh, toolSent: source.toolSent, openTools: [...source.openTools] });
        models.push(m);
        stats.moves.fork += 1;
        return;
      }
      case 'delete': {
        if (models.length < 2) await create();
        // a compacted session when there is one: its archives (history/<id>/) move too
        const archived = models.filter((m) => compacted.has(m.id));
        const pick = archived.length > 0 ? models.indexOf(rng.pick(archived)) : rng.int(models.length);
        const m = models.splice(pick, 1)[0] as SessionModel;
        await move(m, 'delete', 'trashed', () => st.s.delete(m.id));
        m.allocated = []; // a deleted session's open scratch allocations are not carried over a restore
        trashed.push(m);
        return;
      }
      case 'restore': {
        const m = trashed.shift();
        if (!m) return;
        await move(m, 'restore', 'live', () => st.s.restore(m.id));
        await st.s.open(m.id, 'write');
        models.push(m);
        return;
      }
      case 'purge': {
        // a trashed session, or (every other time) a live one: purge moves it to the trash first
        const fromLive = trashed.length === 0 || (stats.moves.purge % 2 === 1 && models.length > 2);
        const m = fromLive ? models.splice(rng.int(models.length), 1)[0] as SessionModel : trashed.shift() as SessionModel;
        await move(m, 'purge', 'purged', () => st.s.delete(m.id, true));
        if (models.length < 2) await create();
        return;
      }
      case 'abandon': {
        // A writer killed inside the fdatasync of an append: its bytes are written, never
        // synced, never acknowledged. A read-only process then lists and reads the session
        // (it must not write the index, nor sync on the writer's behalf, nor fail), and a new
        // writer takes over (its write open syncs the journal before anything vouches for it).
        const m = rng.pick(models);
        const op = m.plan(rng, { compactP: 0, turnP: 0 });
        // Killed in a sync of the session's journal (a blob the batch holds is synced before it).
        const hang = { of: (file: string) => /^journal\.jsonl/.test(path.basename(file)) && file.includes(m.id), then: () => {} };
        const hung = new Promise<void>((resolve) => { hang.then = resolve; rec.hangNextFdatasync = hang; });
        rec.ack((l) => l.maybe(op));
        // never answers; should it end without a journal sync, the writer is killed after it
        void execOp(st.s, op).catch(() => undefined).finally(() => {
          if (rec.hangNextFdatasync === hang) rec.hangNextFdatasync = undefined;
          hang.then();
        });
        await hung;
        st.s.abandon();
        // (the second sidecar lists — the reader of hole 1 —, the CLI's store reads, then both the other way)
        await readerStep(st, rng, live, rec, [m.id], stats, 'list', true);
        await readerStep(st, rng, live, rec, [m.id], stats, 'read', false);
        await readerStep(st, rng, live, rec, [m.id], stats, 'read', true);
        await readerStep(st, rng, live, rec, [m.id], stats, 'tail', false);
        st.s = new FileSessionStore(live, { fs: rec.layer, leases: false });
        const reopened: SessionModel[] = [];
        for (const old of models) {
          const o = await st.s.open(old.id, 'write');
          old.lastSeq = o.lastSeq;
          old.allocated = []; // allocations and tools of the killed process are gone with it (as after a SIGKILL)
          old.openTools = [];
          old.turn = SessionModel.fromOpen(old.id, o.lastSeq, old.firstSeq, o.turn).turn;
          reopened.push(old);
        }
        models = reopened;
        stats.abandons += 1;
        return;
      }
    }
  };
  await create();
  await create();
  let next = 0;
  for (let i = 0; i < ops;) {
    while (next < STEPS.length && i >= (STEPS[next] as [number, Step])[0] * ops) await step((STEPS[next++] as [number, Step])[1]);
    if (models.length < 3 && rng.chance(0.03)) await create();
    if (rng.chance(0.04)) {
      const m = rng.pick(models);
      await st.s.close(m.id);
      await st.s.open(m.id, 'write');
      m.allocated = []; // a reservation does not survive session/close (protocol §15.1): allocate again
    }
    const group = rng.chance(0.5) ? 1 : rng.range(2, 5);
    const running: Array<Promise<void>> = [];
    // a read-only process beside the writer: list, read, open for reading, the CLI's show/tail/verify paths
    if (rng.chance(0.3)) running.push(readerStep(st, rng, live, rec, [...models, ...trashed].map((m) => m.id), stats));
    for (let g = 0; g < group; g++, i++) {
      const m = rng.pick(models);
      const op = m.plan(rng, runtime
        ? { compactP: 0.06, turnP: 0.15, stateP: 0.25, allocateP: 0.04, updateP: 0.04, runtimeP: 0.15, blobP: 0.12, pool }
        : { compactP: 0.08, turnP: 0.2 });
      if (op.type === 'compact') compacted.add(op.sessionId);
      rec.ack((l) => {
        l.stateSent(op);
        l.updateSent(op);
        l.seqsSent(op);
      });
      running.push(execOp(st.s, op).then((r) => {
        rec.ack((l) => l.ack(op, r, thresholds.get(op.sessionId)));
        m.settled(op);
        if (op.type === 'state') stats.stateOps += 1;
        if (op.type === 'update') stats.updateOps += 1;
        if (op.type === 'allocate') m.allocated.push({ toolSeq: (r as { toolSeq: number }).toolSeq, requestId: op.requestId });
        if (op.type === 'turn' && op.method === 'turn/start') m.started((r as { turnId: string }).turnId);
      }));
    }
    await Promise.all(running);
  }
  while (next < STEPS.length) await step((STEPS[next++] as [number, Step])[1]);
}

/** Every record of a session, read by the live store (what a fork was acknowledged with). */
async function readAllLive(s: FileSessionStore, id: string): Promise<Stored[]> {
  const out: Stored[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await s.read(id, { afterSeq, limit: 1000, inline: true }) as { records: Stored[]; nextAfterSeq: number | null };
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

type ReaderKind = 'list' | 'read' | 'open' | 'show' | 'tail' | 'verify';

/**
 * One request of a read-only process (the store opened as the CLI opens it: `readOnly` over
 * the read-only FsLayer, here over the recording layer so its syncs, if any, count). It may
 * see a session move away (SessionNotFound) but must never fail otherwise: the read-only
 * layer refuses every write with EROFS, so a reader that tried to write the index fails here.
 */
async function readerStep(st: Stores, rng: Rng, live: string, rec: CrashRecorder, ids: string[], stats: PowerLossStats, kind?: ReaderKind, asPeer?: boolean): Promise<void> {
  const what = kind ?? rng.pick<ReaderKind>(['list', 'read', 'read', 'open', 'show', 'tail', 'tail', 'verify']);
  const id = rng.pick(ids);
  // list, read and open also from the second sidecar (its writes, if any, go into the recording)
  const peer = (what === 'list' || what === 'read' || what === 'open') && (asPeer ?? rng.chance(0.5));
  const reader = peer ? st.peer : st.reader;
  try {
    switch (what) {
      case 'list': {
        let cursor: string | undefined;
        do {
          const page = await reader.list({ limit: 2, ...(cursor ? { cursor } : {}) });
          cursor = page.nextCursor;
        } while (cursor);
        break;
      }
      case 'read': await reader.read(id, { afterSeq: 0, limit: 50, inline: rng.chance(0.5) }); break;
      case 'open': await reader.open(id, 'read'); break;
      case 'show': for await (const _ of fullHistory(reader, id)) { /* every record of every generation */ } break;
      case 'tail': {
        const o = await reader.open(id, 'read');
        for await (const _ of recordsOf(reader, id, { afterSeq: Math.max(0, o.lastSeq - 20) })) { /* the last records */ }
        break;
      }
      case 'verify': await verifyStore(live, { fs: readOnlyFs({ base: rec.layer }), sessionId: id }); break;
    }
    stats.readerOps[`${peer ? 'peer ' : ''}${what}`] = (stats.readerOps[`${peer ? 'peer ' : ''}${what}`] ?? 0) + 1;
  } catch (err) {
    if ((err as { kind?: string }).kind !== 'SessionNotFound') {
      throw new TortureFailure(`a ${peer ? 'second sidecar\'s' : 'read-only'} ${what} of session ${id} failed: ${(err as { kind?: string }).kind ?? ''} ${(err as Error).message}`);
    }
  } finally {
    await reader.closeAll();
  }
}

export async function runPowerLoss(opts: PowerLossOptions): Promise<PowerLossStats> {
  const stats: PowerLossStats = {
    ...newCheckStats(), workloads: 0, crashPoints: 0, images: 0, uniqueRecords: 0, stateOps: 0, updateOps: 0, blobFiles: 0,
    variants: { synced: 0, 'synced+index': 0, torn: 0, 'torn+index': 0, zeros: 0 },
    moves: { fork: 0, delete: 0, restore: 0, purge: 0 }, abandons: 0, readerOps: {},
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
    const st: Stores = {
      s: new FileSessionStore(live, { fs: rec.layer, leases: false }),
      reader: new FileSessionStore(live, { fs: readOnlyFs({ base: rec.layer }), readOnly: true }),
      peer: new FileSessionStore(live, { fs: rec.layer, leases: false }),
    };
    try {
      // Every other workload (the first included) also writes state values, runtime records and
      // blobs (sessions with a blobThreshold of 1024-4096, large strings, at a BlobRef position and
      // elsewhere, some of them sent again).
      await workload(st, rng, rec, live, opts.ops ?? 40, stats, w % 2 === 0);
    } catch (err) {
      throw new TortureFailure(`${(err as Error).message}\n  the workload itself failed: ${where(`live store kept at ${live}`)}`);
    } finally {
      await st.s.closeAll();
      await st.reader.closeAll();
      await st.peer.closeAll();
    }
    rec.finish();

    stats.blobFiles += countBlobFiles(live);
    let last: LifecycleLedger | undefined;
    const { points, images } = await replay(rec, {
      scratch,
      tornLength: (n) => (rng.chance(0.2) ? n : rng.range(1, n)),
      newLedger: () => (last = new LifecycleLedger()),
      check: async (image, point) => {
        const fresh = new FileSessionStore(image, { leases: false });
        try {
          const ledger = point.ledger as LifecycleLedger;
          const ids = new Set([...ledger.sessions.keys(), ...ledger.where.keys(), ...sessionsOnDisk(image), ...trashedOnDisk(image)]);
          for (const id of ids) {
            const sl = ledger.sessions.get(id);
            // where the session's moves put it (a trashed one is restored here: the trash holds it whole)
            if (!(await settle(fresh, image, id, ledger, sl))) continue;
            const { stats: one } = await checkSession(storeView(fresh, image), id, sl);
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
