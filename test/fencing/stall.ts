/**
 * Stalls, the way the durability review broke the single-writer promise (issue 25): a holder is
 * not killed but stopped — SIGSTOP, or one of its syscalls delayed by strace's fault injection
 * (`-e inject=SYSCALL:delay_enter=…`, attached to the running sidecar, all its threads) — past
 * the lease's stale time, in the middle of an operation that has already passed its checks.
 * Meanwhile another sidecar tries again and again to take the session over and write. Then the
 * first resumes. Checked after every run:
 * - the contender never got the session while the holder lived (SessionLocked, naming it);
 * - every acknowledged record of both, in acknowledgement order, is in the session exactly once,
 *   and nothing else; every acknowledged state value is the one read back;
 * - `session-sidecar verify` finds nothing.
 * Used by test/fencing/stalls.test.ts (a fixed short set) and `npm run torture` (many, at random).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SidecarClient, SidecarError } from '../../dist/src/client/index.js';
import { Rng } from '../torture/rng.js';

/** The BUILT binary (no vitest here: `npm run torture` runs this module too). */
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/cli.js');

export const STALE_MS = 5000;
/** Longer than the stale time: the lease directory looks abandoned while the holder stalls. */
export const STALL_MS = STALE_MS + 1500;

export type StalledOp = 'append' | 'stateSet' | 'compact' | 'update';
export type Stall = { kind: 'sigstop' } | { kind: 'syscall'; syscalls: string[] };

/** The syscalls each operation makes on its way to durability: any of them may be the one that stalls. */
export const SYSCALLS: Record<StalledOp, string[][]> = {
  append: [['pwrite64'], ['fdatasync']],
  stateSet: [['openat'], ['pwrite64', 'write'], ['fsync'], ['rename', 'renameat', 'renameat2']],
  compact: [['openat'], ['pwrite64', 'write'], ['fsync'], ['rename', 'renameat', 'renameat2']],
  update: [['pwrite64'], ['fdatasync']],
};

export interface StallRun {
  op: StalledOp;
  stall: Stall;
  /** What the stalled operation answered: 'ok' or its error kind. */
  outcome: string;
  /** Takeover attempts refused while the holder stalled. */
  refused: number;
  acknowledged: number;
}

const msg = (text: string) => ({ kind: 'message' as const, message: { role: 'user', content: text } });
const textOf = (r: unknown) => ((r as { message?: { content?: unknown } }).message?.content as string | undefined);

function sidecar(store: string, env: NodeJS.ProcessEnv = process.env): Promise<SidecarClient> {
  const c = new SidecarClient({ store, args: ['--lease-stale-ms', String(STALE_MS)], env });
  return c.initialize().then(() => c);
}

/** strace attached to every thread of `pid`, delaying each call of `syscalls` by `ms`; resolved once attached. */
async function delaySyscalls(pid: number, syscalls: string[], ms: number): Promise<ChildProcess> {
  const set = syscalls.join(',');
  const tracer = spawn('strace', ['-f', '-p', String(pid), '-o', '/dev/null', '-e', `trace=${set}`, '-e', `inject=${set}:delay_enter=${ms * 1000}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  tracer.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  for (let waited = 0; !/attached/.test(err); waited += 20) {
    if (tracer.exitCode !== null || waited > 10_000) throw new Error(`strace did not attach: ${err.trim()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return tracer;
}

async function detach(tracer: ChildProcess): Promise<void> {
  if (tracer.exitCode !== null || tracer.signalCode !== null) return;
  tracer.kill('SIGTERM'); // strace detaches from its tracees and lets them run on
  await once(tracer, 'exit');
}

/** One stall scenario on a fresh store; throws (an expect) on any lost, duplicated or foreign record. */
export async function runStall(store: string, op: StalledOp, stall: Stall): Promise<StallRun> {
  const a = await sidecar(store);
  const { sessionId } = await a.create({ title: 'stalled' });
  const acked: string[] = [];
  for (let i = 1; i <= 40; i++) {
    await a.append({ sessionId, records: [msg(`a${i}`)] });
    acked.push(`a${i}`);
  }
  let stateValue = 'a-state-1';
  await a.setState(sessionId, 'k', stateValue);

  const pid = a.child.pid!;
  const tracer = stall.kind === 'syscall' ? await delaySyscalls(pid, stall.syscalls, STALL_MS) : undefined;
  // The operation is sent, and has passed its fence checks, before the stall begins.
  const pending: Promise<string> = (async () => {
    switch (op) {
      case 'append':
        await a.append({ sessionId, records: [msg('a-stalled')] });
        acked.push('a-stalled');
        return 'ok';
      case 'stateSet':
        await a.setState(sessionId, 'k', 'a-state-stalled');
        stateValue = 'a-state-stalled';
        return 'ok';
      case 'compact':
        await a.request('session/compact', { sessionId, throughSeq: 30, summary: 'stalled compaction' });
        return 'ok';
      case 'update':
        await a.update({ sessionId, title: 'stalled update' });
        return 'ok';
    }
  })().catch((e: unknown) => (e instanceof SidecarError ? e.kind ?? 'error' : 'error'));
  if (stall.kind === 'sigstop') {
    await new Promise((r) => setTimeout(r, 30));
    a.child.kill('SIGSTOP');
  }

  // The contender, for longer than the stale time: never let in while the holder lives.
  const b = await sidecar(store);
  let refused = 0;
  const until = Date.now() + STALL_MS - 300;
  while (Date.now() < until) {
    const got = await b.open({ sessionId, mode: 'write' }).then(() => 'taken', (e: SidecarError) => e.kind);
    assert.equal(got, 'SessionLocked', `${op}/${describe(stall)}: a contender took the session of a live, stalled holder`);
    refused++;
    await new Promise((r) => setTimeout(r, 700));
  }
  if (stall.kind === 'sigstop') a.child.kill('SIGCONT');
  const outcome = await pending;
  if (tracer) await detach(tracer);

  // The holder resumes: it writes on, or (its refresh fell behind the stale time) finds its lease
  // lost and gives it back. Either way what it acknowledges is kept.
  const after = await a.append({ sessionId, records: [msg("a-after")] }).then(() => "ok", (e: SidecarError) => e.kind ?? "error");
  if (after === 'ok') acked.push('a-after');
  else assert.ok(['LeaseLost', 'ReadOnly'].includes(after), `${op}/${describe(stall)}: the resumed holder's append answered ${after}`);
  await a.shutdown();

  // Now the contender gets it at once, and writes.
  assert.equal((await b.open({ sessionId, mode: 'write' })).mode, 'write');
  for (let i = 1; i <= 5; i++) {
    await b.append({ sessionId, records: [msg(`b${i}`)] });
    acked.push(`b${i}`);
  }
  await b.setState(sessionId, 'k', 'b-state');
  stateValue = 'b-state';
  const texts: string[] = [];
  for (let afterSeq = 0; ;) {
    const page = await b.read({ sessionId, afterSeq, limit: 1000 });
    for (const r of page.records) {
      const t = textOf(r);
      if (t !== undefined) texts.push(t);
    }
    if (page.nextAfterSeq === null) break;
    afterSeq = page.nextAfterSeq;
  }
  // A compaction keeps the records after throughSeq in the journal; those up to it are in the archive.
  const expected = outcome === 'ok' && op === 'compact' ? acked.slice(30) : acked;
  assert.deepEqual(texts, expected, `${op}/${describe(stall)}: the session's records are not exactly the acknowledged ones`);
  assert.equal(await b.getState(sessionId, 'k'), stateValue, `${op}/${describe(stall)}: the state value is not the last acknowledged one`);
  await b.shutdown();
  await verifyClean(store);
  return { op, stall, outcome, refused, acknowledged: acked.length };
}

export function verifyClean(store: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, 'verify', '--store', store], (err, stdout, stderr) => {
      if (err) reject(new Error(`verify found damage after a stall:\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

export function describe(stall: Stall): string {
  return stall.kind === 'sigstop' ? 'SIGSTOP' : `${stall.syscalls[0]} delayed`;
}

export interface StallStats {
  runs: number;
  refused: number;
  acknowledged: number;
  /** Per operation and stall: how many runs, and what the stalled operation answered. */
  by: Record<string, number>;
  outcomes: Record<string, number>;
}

/** `npm run torture -- --only stall`: random stalls, each on a fresh store. */
export async function runStalls(opts: { runs: number; seed: number; progress?: (line: string) => void }): Promise<StallStats> {
  const rng = new Rng(opts.seed);
  const stats: StallStats = { runs: 0, refused: 0, acknowledged: 0, by: {}, outcomes: {} };
  for (let i = 0; i < opts.runs; i++) {
    const { op, stall } = randomStall(rng);
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-stall-'));
    const run = await runStall(store, op, stall);
    fs.rmSync(store, { recursive: true, force: true });
    stats.runs++;
    stats.refused += run.refused;
    stats.acknowledged += run.acknowledged;
    const key = `${op}/${describe(stall)}`;
    stats.by[key] = (stats.by[key] ?? 0) + 1;
    stats.outcomes[run.outcome] = (stats.outcomes[run.outcome] ?? 0) + 1;
    opts.progress?.(`stall ${i + 1}/${opts.runs}: ${key} -> ${run.outcome}, ${run.refused} takeovers refused`);
  }
  return stats;
}

/** A random stall: an operation, and SIGSTOP or one of its syscalls. */
export function randomStall(rng: Rng): { op: StalledOp; stall: Stall } {
  const ops = Object.keys(SYSCALLS) as StalledOp[];
  const op = ops[rng.int(ops.length)] as StalledOp;
  const choices = SYSCALLS[op];
  if (rng.int(4) === 0) return { op, stall: { kind: 'sigstop' } };
  return { op, stall: { kind: 'syscall', syscalls: choices[rng.int(choices.length)] as string[] } };
}
