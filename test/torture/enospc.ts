import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SidecarClient, SidecarError } from '../../dist/src/client/index.js';
import { addStats, type CheckStats, checkSession, fail, Ledger, newCheckStats, type Rec, SessionModel, type StoreView, TortureFailure } from './model.js';
import { sidecarCommand } from './binary.js';
import { Rng } from './rng.js';

/**
 * Scenario 3 — a full disk. The built binary runs on a store inside a 2 MiB tmpfs (mounted
 * here; the scenario is skipped, with the reason, where mounting is not allowed). The disk is
 * filled, then appends (small and large batches), turn transitions, compactions and creates
 * are tried: every failure must be NotWritten or RolledBack with errno ENOSPC (or, for a
 * compaction, NotWritten at stage preCommit), the session must stay writable and its journal
 * valid (read back whole by the same process), appends must succeed again once space is freed,
 * and a new process must find exactly the acknowledged records.
 */

export interface EnospcOptions {
  seed: number;
  rounds?: number;
  tmp?: string;
  progress?: (line: string) => void;
}

export interface EnospcStats extends CheckStats {
  rounds: number;
  notWritten: number;
  rolledBack: number;
  failedCreates: number;
  failedCompactions: number;
  failedTurns: number;
  /** Appends that succeeded on the same session after space was freed. */
  appendsAfterFree: number;
  acknowledged: number;
}

export type EnospcResult = { skipped: string } | { stats: EnospcStats };

function clientView(c: SidecarClient, root: string): StoreView {
  return {
    root,
    open: (sessionId) => c.request('session/open', { sessionId }),
    read: (sessionId, afterSeq, generation) => c.request('session/read', { sessionId, afterSeq, limit: 1000, ...(generation === undefined ? {} : { generation }) }),
    history: async (sessionId) => (await c.request<{ generations: Array<{ generation: number; throughSeq: number }> }>('session/history', { sessionId })).generations,
  };
}

/** Fills the file system holding `file` until a write fails with ENOSPC; returns the bytes written. */
function fill(file: string): number {
  const fd = fs.openSync(file, 'a', 0o600);
  const chunk = Buffer.alloc(16 << 10, 0x61);
  let total = 0;
  try {
    for (;;) {
      try {
        total += fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOSPC') break;
        throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return total;
}

/** Bytes used on the tmpfs by top-level entry of the store (and the filler), for a failure message. */
function usage(mnt: string): string {
  const du = (p: string): number => {
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) return 0;
    return st.isDirectory() ? fs.readdirSync(p).reduce((n, e) => n + du(path.join(p, e)), 0) : st.size;
  };
  const store = path.join(mnt, 'store');
  const parts = fs.existsSync(store) ? fs.readdirSync(store).map((e) => `${e} ${du(path.join(store, e))}`) : [];
  return `bytes in use: filler ${du(path.join(mnt, 'filler'))}, ${parts.join(', ')}`;
}

function big(rng: Rng, n: number, size: number): Rec[] {
  return Array.from({ length: n }, (_, i) => ({ kind: 'event', type: 't.fill', payload: { i, x: 'y'.repeat(rng.range(size / 2, size)) } }));
}

async function expectFull<T>(p: Promise<T>, what: string, allowed: string[]): Promise<{ ok: T } | { kind: string }> {
  try {
    return { ok: await p };
  } catch (err) {
    if (!(err instanceof SidecarError)) throw err;
    const kind = err.kind ?? String(err.code);
    if (!allowed.includes(kind)) fail(`${what} on a full disk answered ${kind} (${err.message}), expected one of ${allowed.join(', ')}`);
    if (err.data?.errno !== undefined && err.data.errno !== 'ENOSPC') fail(`${what} on a full disk answered errno ${String(err.data.errno)}`);
    return { kind };
  }
}

export async function runEnospc(opts: EnospcOptions): Promise<EnospcResult> {
  const rng = new Rng(opts.seed);
  const mnt = fs.mkdtempSync(path.join(opts.tmp ?? os.tmpdir(), 'torture-enospc-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (err) {
    fs.rmSync(mnt, { recursive: true, force: true });
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    return { skipped: `cannot mount a tmpfs (${why}); run as root where mounting is allowed` };
  }
  const stats: EnospcStats = {
    ...newCheckStats(), rounds: 0, notWritten: 0, rolledBack: 0, failedCreates: 0, failedCompactions: 0, failedTurns: 0, appendsAfterFree: 0,
    acknowledged: 0,
  };
  const store = path.join(mnt, 'store');
  const filler = path.join(mnt, 'filler');
  const clients: SidecarClient[] = [];
  const spawn = async () => {
    const c = new SidecarClient({ ...sidecarCommand(), store, framing: rng.pick(['ndjson', 'lsp'] as const) });
    clients.push(c);
    await c.initialize();
    return c;
  };
  try {
    const ledger = new Ledger();
    let c = await spawn();
    const models: SessionModel[] = [];
    for (let i = 0; i < 2; i++) {
      const { sessionId } = await c.create({ title: `full ${i}` });
      ledger.session(sessionId);
      models.push(new SessionModel(sessionId, 0, 1, null));
    }
    const append = async (m: SessionModel, records: Rec[]): Promise<boolean> => {
      const op = { type: 'append' as const, sessionId: m.id, records, firstSeq: m.lastSeq + 1 };
      const r = await expectFull(c.request('session/append', { sessionId: m.id, records }), 'an append', ['NotWritten', 'RolledBack']);
      if ('ok' in r) {
        m.lastSeq += records.length;
        ledger.ack(op, r.ok);
        stats.acknowledged += 1;
        return true;
      }
      if (r.kind === 'NotWritten') stats.notWritten += 1;
      else stats.rolledBack += 1;
      return false;
    };
    for (const m of models) await append(m, big(rng, 3, 2000));
    const rounds = opts.rounds ?? 6;
    for (let round = 0; round < rounds; round++) {
      fill(filler);
      // leave a little room: some appends fit, some are cut short (RolledBack), some fail at once
      const room = rng.pick([0, 0, 4096, 12_288, 40_960]);
      if (room > 0) fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - room));
      let failures = 0;
      for (let i = 0; i < 12; i++) {
        const m = rng.pick(models);
        const ok = await append(m, big(rng, rng.range(1, 6), rng.pick([500, 4000, 30_000, 120_000])));
        if (!ok) failures += 1;
      }
      if (failures === 0) fail(`round ${round}: no append failed on a full disk`);
      // a turn transition, a compaction and a create on the full disk
      const t = await expectFull(c.request<{ turnId: string }>('turn/start', { sessionId: models[0]!.id, kind: 'user' }), 'a turn/start', ['NotWritten', 'RolledBack']);
      if ('ok' in t) {
        const m = models[0]!;
        m.lastSeq += 1;
        ledger.session(m.id).turns.push({ seq: m.lastSeq, turnId: t.ok.turnId, event: 'start' });
        ledger.session(m.id).maxSeq = m.lastSeq;
        const f = await expectFull(c.request('turn/finish', { sessionId: m.id, turnId: t.ok.turnId, outcome: 'completed' }), 'a turn/finish', ['NotWritten', 'RolledBack']);
        if ('ok' in f) {
          m.lastSeq += 1;
          ledger.session(m.id).turns.push({ seq: m.lastSeq, turnId: t.ok.turnId, event: 'finish', outcome: 'completed' });
          ledger.session(m.id).maxSeq = m.lastSeq;
        } else {
          stats.failedTurns += 1;
          // the abandon may fail too on the full disk: then it is done once space is freed
          const ab = await expectFull(c.request('turn/finish', { sessionId: m.id, turnId: t.ok.turnId, outcome: 'abandoned' }), 'a turn/finish', ['NotWritten', 'RolledBack']);
          if ('ok' in ab) {
            m.lastSeq += 1;
            ledger.session(m.id).turns.push({ seq: m.lastSeq, turnId: t.ok.turnId, event: 'finish', outcome: 'abandoned' });
            ledger.session(m.id).maxSeq = m.lastSeq;
          }
        }
      } else {
        stats.failedTurns += 1;
      }
      const m0 = models[1]!;
      if (m0.lastSeq >= 1) {
        const throughSeq = rng.range(m0.firstSeq, m0.lastSeq);
        const r = await expectFull(c.request<{ generation: number; checkpointSeq: number }>('session/compact', { sessionId: m0.id, throughSeq, summary: `full ${round}` }), 'a compaction', ['NotWritten']);
        if ('ok' in r) {
          m0.firstSeq = throughSeq;
          ledger.session(m0.id).compactions.push({ generation: r.ok.generation, checkpointSeq: r.ok.checkpointSeq });
        } else {
          stats.failedCompactions += 1;
        }
      }
      // a writable reopen on the full disk: its lease cannot be recorded (NotWritten) or it fits
      const m1 = models[0]!;
      await c.close(m1.id);
      await expectFull(c.open({ sessionId: m1.id }), 'a writable open', ['NotWritten']);
      const before = (await c.list({ limit: 1000 })).sessions.length;
      const created = await expectFull(c.create({ title: 'on a full disk' }), 'a create', ['NotWritten']);
      if ('ok' in created) {
        ledger.session(created.ok.sessionId);
      } else {
        stats.failedCreates += 1;
        if ((await c.list({ limit: 1000 })).sessions.length !== before) fail('a create that answered NotWritten left a session behind');
      }
      // the journals are valid and whole, read back by this same process
      for (const m of models) addStats(stats, (await checkSession(clientView(c, store), m.id, ledger.sessions.get(m.id))).stats);
      // space again: every session takes appends at once
      fs.rmSync(filler);
      for (const m of models) {
        const s = await c.request<{ lastSeq: number; turn: { turnId: string; status: string } | null }>('session/open', { sessionId: m.id });
        if (s.lastSeq !== m.lastSeq) fail(`session ${m.id}: lastSeq ${s.lastSeq} after failed writes, acknowledged ${m.lastSeq}`);
        if (s.turn && (s.turn.status === 'active' || s.turn.status === 'retryable')) {
          await c.request('turn/finish', { sessionId: m.id, turnId: s.turn.turnId, outcome: 'abandoned' });
          m.lastSeq += 1;
          ledger.session(m.id).turns.push({ seq: m.lastSeq, turnId: s.turn.turnId, event: 'finish', outcome: 'abandoned' });
          ledger.session(m.id).maxSeq = m.lastSeq;
        }
        if (!(await append(m, big(rng, 2, 1000)))) fail(`round ${round}: an append failed after space was freed`);
        stats.appendsAfterFree += 1;
      }
      stats.rounds += 1;
      if (round % 2 === 1) {
        // a new process now and then: its opens verify what the last one left
        await c.shutdown();
        c = await spawn();
        for (const m of models) addStats(stats, (await checkSession(clientView(c, store), m.id, ledger.sessions.get(m.id))).stats);
      }
    }
    await c.shutdown();
    const d = await spawn();
    for (const id of ledger.sessions.keys()) {
      const { stats: one, opened } = await checkSession(clientView(d, store), id, ledger.sessions.get(id));
      addStats(stats, one);
      const acked = ledger.sessions.get(id)?.maxSeq ?? 0;
      if (opened.lastSeq !== acked) fail(`session ${id}: lastSeq ${opened.lastSeq} after the full-disk rounds, acknowledged ${acked}: a failed append left records`);
    }
    await d.shutdown();
    opts.progress?.(`enospc: ${stats.rounds} rounds, ${stats.notWritten} NotWritten, ${stats.rolledBack} RolledBack`);
    return { stats };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const stderr = clients.map((c) => c.stderr.trim()).filter(Boolean).join('\n').slice(-1500);
    throw new TortureFailure(`${e.message}\n  ENOSPC torture: seed ${opts.seed}; ${usage(mnt)}${stderr ? `\n  the sidecars' stderr: ${stderr}` : ''}`);
  } finally {
    for (const c of clients) if (c.child.exitCode === null && c.child.signalCode === null) await c.kill('SIGKILL');
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
    }
    fs.rmSync(mnt, { recursive: true, force: true });
  }
}
