import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SidecarClient, SidecarError } from '../../dist/src/client/index.js';
import {
  activeFirstSeq, addStats, type CheckStats, checkSession, fail, Ledger, newCheckStats, type Op, type PlanOptions, SessionModel, countBlobFiles, sessionsOnDisk,
  type StoreView, TortureFailure,
} from './model.js';
import { sidecarCommand } from './binary.js';
import { Rng } from './rng.js';

/**
 * Scenario 1 — SIGKILL. Random pipelined workloads (appends of random batch sizes, turn
 * transitions, compactions, creates) against the built binary over real pipes, killed with
 * SIGKILL at a random instant. The client keeps every acknowledged answer with the exact
 * records sent; the next sidecar process (which must take over the dead holder's writer lease)
 * opens every session — repairing torn tails — and checks it before running the next workload.
 */

export interface KillOptions {
  runs: number;
  seed: number;
  /** Workloads running at once, each on its own store (default 3). */
  lanes?: number;
  /** Kills per store before it is checked a last time and removed (default 8). */
  chain?: number;
  /** A kill lands uniformly within this many ms of the workload's start (default 100). */
  maxKillMs?: number;
  /** Share of runs that kill inside the write of a ~1 MB batch (default 0.15). */
  tearP?: number;
  /** Where stores are made (default: the OS temp dir). */
  tmp?: string;
  progress?: (line: string) => void;
}

export interface KillStats extends CheckStats {
  runs: number;
  kills: number;
  /** Kills that landed while the new process was still opening and checking sessions. */
  killedWhileOpening: number;
  /** Full checks of a store after a kill (each opens every session). */
  checks: number;
  /** Operations answered (appends, turn transitions, compactions). */
  acknowledged: number;
  /** Distinct acknowledged records (each is checked after every later kill). */
  uniqueRecords: number;
  /** Operations sent but not answered when the process died. */
  inFlightAtKill: number;
  sessions: number;
  /** Kills sent the instant a ~1 MB batch began to reach the journal. */
  killsInWrite: number;
  /** Opens that met a lock left without a holder record by a kill, and waited for its 1 s grace. */
  holderlessLockWaits: number;
  /** state/set and state/delete answered. */
  stateOps: number;
  /** session/update answered. */
  updateOps: number;
  /** Chains run on a store encrypted at rest (checked at their end for plaintext journal lines). */
  encryptedChains: number;
  /** tool/allocateScratch answered. */
  allocations: number;
  /** Sessions created with a small blobThreshold (1024-4096). */
  blobSessions: number;
  /** Blob files in the stores at their last check (each distinct payload is one file). */
  blobFiles: number;
}

/** The highest tool-NNNNNN scratch directory of a session (allocations a killed process answered or not). */
function highestScratch(store: string, id: string): number {
  const dir = path.join(store, 'sessions', id, 'scratch');
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir).reduce((max, name) => Math.max(max, Number(/^tool-(\d+)$/.exec(name)?.[1] ?? 0)), 0);
}

const DEFAULT_BLOB_THRESHOLD = 256 * 1024;
const KEY_ENV = 'SIDECAR_TORTURE_KEY';

function clientView(c: SidecarClient, root: string): StoreView {
  return {
    root,
    open: (sessionId) => c.request('session/open', { sessionId }),
    read: (sessionId, afterSeq, generation) => c.request('session/read', {
      sessionId, afterSeq, limit: 1000, inline: true, ...(generation === undefined ? {} : { generation }),
    }),
    history: async (sessionId) => (await c.request<{ generations: Array<{ generation: number; throughSeq: number }> }>('session/history', { sessionId })).generations,
    getState: (sessionId, key) => c.getState(sessionId, key),
  };
}

/** Polls (yielding to the event loop, which is sending the request) until `file` grows; false on timeout. */
async function grows(file: string, base: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    await new Promise((r) => setImmediate(r));
    if ((fs.statSync(file, { throwIfNoEntry: false })?.size ?? base) !== base) return true;
  }
  return false;
}

function send(c: SidecarClient, op: Op): Promise<unknown> {
  switch (op.type) {
    case 'append': return c.request('session/append', { sessionId: op.sessionId, records: op.records });
    case 'turn': return c.request(op.method, op.params);
    case 'compact': return c.request('session/compact', { sessionId: op.sessionId, throughSeq: op.throughSeq, summary: op.summary });
    case 'allocate': return c.allocateScratch({ sessionId: op.sessionId, requestId: op.requestId });
    case 'state': return op.value === undefined ? c.deleteState(op.sessionId, op.key) : c.setState(op.sessionId, op.key, op.value);
    case 'update': return c.update({ sessionId: op.sessionId, ...op.params });
  }
}

class Chain {
  readonly ledger = new Ledger();
  models: SessionModel[] = [];
  /** blobThreshold of the sessions whose create was answered. */
  readonly thresholds = new Map<string, number>();
  /** Large payloads sent, reused to exercise dedupe. */
  readonly pool: string[] = [];

  constructor(
    readonly store: string,
    readonly rng: Rng,
    readonly stats: KillStats,
    /** A store encrypted at rest: every process of the chain is started with this key (base64). */
    readonly key?: string,
  ) {}

  /** The binary with this chain's key, if it has one (passed by environment variable, as a user would). */
  private spawnOptions(): { command: string; args: string[]; env?: NodeJS.ProcessEnv } {
    if (this.key === undefined) return sidecarCommand();
    return { ...sidecarCommand(['--encryption-key-env', KEY_ENV]), env: { ...process.env, [KEY_ENV]: this.key } };
  }

  /** Opens and checks every session in `c`; rebuilds the models from what the store holds. */
  async checkAll(c: SidecarClient): Promise<void> {
    const ids = new Set([...this.ledger.sessions.keys(), ...sessionsOnDisk(this.store)]);
    const models: SessionModel[] = [];
    const stats = newCheckStats();
    for (const id of ids) {
      const { opened, active, stats: one, runtime, state } = await this.checkOne(c, id);
      addStats(stats, one);
      const model = SessionModel.fromOpen(id, opened.lastSeq, activeFirstSeq(active), opened.turn ?? null);
      const allocated = Math.max(0, ...(this.ledger.sessions.get(id)?.allocated.keys() ?? []));
      model.openApi = runtime.openApi;
      model.toolSent = Math.max(runtime.maxToolSeq, allocated);
      model.toolHigh = Math.max(model.toolSent, highestScratch(this.store, id));
      for (const [key, value] of state) this.ledger.stateRead(id, key, value);
      this.ledger.titleRead(id, opened.title);
      models.push(model);
    }
    this.models = models;
    addStats(this.stats, stats);
    this.stats.checks += 1;
  }

  /**
   * checkSession, waiting out a lock whose acquirer was killed between taking it and writing its
   * holder record: for its first second such a lock cannot be told from one being taken right
   * now, so it is answered SessionLocked without a holder; after that it is taken over.
   */
  private async checkOne(c: SidecarClient, id: string): ReturnType<typeof checkSession> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await checkSession(clientView(c, this.store), id, this.ledger.sessions.get(id));
      } catch (err) {
        const lockDir = path.join(this.store, 'locks', `${id}.lock`);
        const holder = fs.statSync(`${lockDir}.holder.json`, { throwIfNoEntry: false });
        const lock = fs.statSync(lockDir, { throwIfNoEntry: false });
        if (attempt >= 3 || !(err instanceof SidecarError) || err.kind !== 'SessionLocked' || err.data?.holder !== undefined
          || !lock || (holder !== undefined && holder.size > 0)) throw err;
        this.stats.holderlessLockWaits += 1;
        await new Promise((r) => setTimeout(r, Math.max(0, lock.mtimeMs + 1200 - Date.now())));
      }
    }
  }

  /** One run: a new process checks the store, runs a workload and is killed at a random instant. */
  async run(first: boolean, maxKillMs: number, tearP: number): Promise<void> {
    const rng = this.rng;
    const c = new SidecarClient({ ...this.spawnOptions(), store: this.store, framing: rng.pick(['ndjson', 'lsp'] as const) });
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      c.child.kill('SIGKILL');
    };
    let timer: NodeJS.Timeout | undefined;
    const whileOpening = !first && rng.chance(0.08);
    if (whileOpening) timer = setTimeout(kill, rng.range(120, 400));
    let workloadError: unknown;
    let inFlight = 0;
    try {
      await c.initialize();
      await this.checkAll(c);
      while (this.models.length < (first ? 2 : 1) || (this.models.length < 4 && rng.chance(0.05))) {
        const small = rng.chance(0.5);
        const blobThreshold = small ? rng.range(1024, 4096) : DEFAULT_BLOB_THRESHOLD;
        const { sessionId } = await c.create({ title: `torture ${this.models.length}`, ...(small ? { blobThreshold } : {}) });
        this.thresholds.set(sessionId, blobThreshold);
        if (small) this.stats.blobSessions += 1;
        this.ledger.session(sessionId);
        this.models.push(new SessionModel(sessionId, 0, 1, null));
      }
      // Most kills land at a uniformly random instant. In a "tear" run the workload drains,
      // sends one ~1 MB batch alone and kills the process the moment its journal starts
      // to grow: inside the write, which then leaves a torn tail.
      const tear = !whileOpening && rng.chance(tearP);
      const tearAfter = rng.range(0, 12);
      if (!whileOpening && !tear) timer = setTimeout(kill, rng.int(maxKillMs));
      const window = rng.pick([1, 2, 4, 8, 16, 32]);
      const pending = new Set<Promise<void>>();
      const issue = (model: SessionModel, op: Op) => {
        this.ledger.stateSent(op);
        this.ledger.updateSent(op);
        const p: Promise<void> = send(c, op).then(
          (r) => {
            this.ledger.ack(op, r, this.thresholds.get(op.sessionId));
            model.settled(op);
            if (op.type === 'state') this.stats.stateOps += 1;
            if (op.type === 'update') this.stats.updateOps += 1;
            if (op.type === 'allocate') {
              const { toolSeq } = r as { toolSeq: number };
              model.allocated.push({ toolSeq, requestId: op.requestId });
              model.toolSent = Math.max(model.toolSent, toolSeq);
              this.stats.allocations += 1;
            }
            if (op.type === 'turn' && op.method === 'turn/start') model.started((r as { turnId: string }).turnId);
          },
          (e: unknown) => {
            if (e instanceof SidecarError) workloadError ??= new TortureFailure(`${op.type} ${op.type === 'turn' ? op.method : ''} answered ${e.code} ${e.message}`);
            else if (!killed) workloadError ??= e;
          },
        ).finally(() => pending.delete(p));
        pending.add(p);
      };
      let sent = 0;
      while (!killed && workloadError === undefined) {
        if (tear && sent >= tearAfter) {
          await Promise.all(pending);
          if (workloadError) break;
          // a session that keeps the batch's strings in its journal (a small threshold moves them to blobs)
          const inline = this.models.filter((m) => this.thresholds.get(m.id) === DEFAULT_BLOB_THRESHOLD);
          const model = rng.pick(inline.length > 0 ? inline : this.models);
          const journal = path.join(this.store, 'sessions', model.id, 'journal.jsonl');
          const base = fs.statSync(journal).size;
          issue(model, model.plan(rng, { big: true }));
          if (await grows(journal, base, 3000)) this.stats.killsInWrite += 1;
          kill();
          break;
        }
        while (pending.size < window && !killed && !(tear && sent >= tearAfter)) {
          const model = rng.pick(this.models);
          issue(model, model.plan(rng, this.planOptions(model)));
          sent += 1;
        }
        if (pending.size > 0) await Promise.race(pending);
      }
      inFlight = pending.size;
      if (workloadError) throw workloadError;
    } catch (err) {
      if (err instanceof TortureFailure || err instanceof SidecarError || !killed) {
        kill();
        await c.exited;
        const stderr = c.stderr.trim() ? `\n  the sidecar's stderr: ${c.stderr.trim().slice(-1500)}` : '';
        if (err instanceof SidecarError) throw new TortureFailure(`answered ${err.code} ${err.message} ${JSON.stringify(err.data)}${stderr}`);
        if (err instanceof TortureFailure) throw new TortureFailure(`${err.message}${stderr}`);
        throw new TortureFailure(`${(err as Error).message}${stderr}`);
      }
    } finally {
      clearTimeout(timer);
    }
    kill();
    const exit = await c.exited;
    if (exit.signal !== 'SIGKILL') fail(`the sidecar exited on its own (${JSON.stringify(exit)}): ${c.stderr.slice(-1500)}`);
    this.stats.kills += 1;
    this.stats.inFlightAtKill += inFlight;
    if (whileOpening) this.stats.killedWhileOpening += 1;
  }

  private planOptions(model: SessionModel): PlanOptions {
    const small = (this.thresholds.get(model.id) ?? DEFAULT_BLOB_THRESHOLD) < DEFAULT_BLOB_THRESHOLD;
    return { stateP: 0.1, allocateP: 0.05, updateP: 0.04, runtimeP: 0.15, blobP: small ? 0.05 : 0.01, pool: this.pool };
  }

  /** The last check of a chain, by a process that is shut down cleanly. */
  async finish(): Promise<void> {
    const c = new SidecarClient({ ...this.spawnOptions(), store: this.store });
    try {
      await c.initialize();
      await this.checkAll(c);
      if (this.key !== undefined) {
        // sealed through every kill and recovery: no journal line of the store shows a record in plaintext
        for (const id of sessionsOnDisk(this.store)) {
          const journal = fs.readFileSync(path.join(this.store, 'sessions', id, 'journal.jsonl'));
          if (journal.includes('"kind":"') || journal.includes('"role":"')) fail(`encrypted store: session ${id}'s journal holds a plaintext record`);
        }
        this.stats.encryptedChains += 1;
      }
      this.stats.sessions += this.models.length;
      this.stats.acknowledged += this.ledger.acked;
      for (const s of this.ledger.sessions.values()) this.stats.uniqueRecords += s.records.size;
      this.stats.blobFiles += countBlobFiles(this.store);
      await c.shutdown();
    } catch (err) {
      c.child.kill('SIGKILL');
      await c.exited;
      throw new TortureFailure(`${(err as Error).message}${c.stderr.trim() ? `\n  the sidecar's stderr: ${c.stderr.trim().slice(-1500)}` : ''}`);
    }
  }
}

export { countBlobFiles };

export async function runKillTorture(opts: KillOptions): Promise<KillStats> {
  const stats: KillStats = {
    ...newCheckStats(), runs: 0, kills: 0, killedWhileOpening: 0, checks: 0, acknowledged: 0, uniqueRecords: 0, inFlightAtKill: 0, sessions: 0, killsInWrite: 0, holderlessLockWaits: 0,
    stateOps: 0, updateOps: 0, allocations: 0, blobSessions: 0, blobFiles: 0, encryptedChains: 0,
  };
  const lanes = opts.lanes ?? 3;
  const chainLength = opts.chain ?? 8;
  const maxKillMs = opts.maxKillMs ?? 100;
  const master = new Rng(opts.seed);
  const tmp = opts.tmp ?? os.tmpdir();
  let started = 0;
  let chains = 0;
  const lane = async (laneNo: number) => {
    const laneRng = master.fork();
    while (started < opts.runs) {
      const chainNo = chains++;
      const chainSeed = laneRng.fork().seed;
      const store = fs.mkdtempSync(path.join(tmp, 'torture-kill-'));
      // every third chain runs on a store encrypted at rest (a fresh key per chain)
      const chain = new Chain(store, new Rng(chainSeed), stats, chainNo % 3 === 2 ? crypto.randomBytes(32).toString('base64') : undefined);
      let run = 0;
      try {
        for (; run < chainLength && started < opts.runs; run++) {
          started += 1;
          await chain.run(run === 0, maxKillMs, opts.tearP ?? 0.15);
          stats.runs += 1;
          if (stats.runs % 50 === 0) opts.progress?.(`kill: ${stats.runs}/${opts.runs} runs, ${stats.records} acknowledged records checked`);
        }
        await chain.finish();
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        throw new TortureFailure(`${e.message}\n  SIGKILL torture: seed ${opts.seed}, lane ${laneNo}, chain ${chainNo} (chain seed ${chainSeed}), run ${run}; store kept at ${store}`);
      }
      fs.rmSync(store, { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i)));
  return stats;
}
