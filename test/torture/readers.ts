import { type ChildProcess, spawn } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SidecarClient, SpawnOptions } from '../../dist/src/client/index.js';
import { Rng } from './rng.js';

/**
 * Readers across compactions (issue 25, finding 6), over the built binary: a writer sidecar W
 * appends continuously and compacts every few hundred records (sometimes twice in a row, so a
 * reader meets two compactions between two of its polls), while readers in other processes
 * follow the session from its first record — a subscriber sidecar S (`session/subscribe`) and
 * `session-sidecar tail -f --raw` — and so does a subscriber in W itself (its own compactions). At the end each reader must have received exactly seqs 1..N,
 * each once, in order, with no didOverflow, every record equal to what was appended and byte for
 * byte the record as stored (read back generation by generation). Waiting for the readers to
 * catch up has a generous limit; no figure of time is checked.
 */

export interface ReadersOptions {
  /** Acknowledged records to append (the last batch may go a little past). */
  records: number;
  /** Records between two compactions: drawn in [min, max]. */
  compactEvery: [number, number];
  seed: number;
  /** The store encrypted at rest (every reader is given the key). */
  encrypted?: boolean;
  /** Spawns the built sidecar on `opts.store` and initializes it. */
  start: (opts: SpawnOptions) => Promise<SidecarClient>;
  /** The built command line: executable and leading arguments. */
  cli: { command: string; args: string[] };
  progress?: (line: string) => void;
  /** How long the readers may take to catch up at the end (a limit, not a figure checked). */
  settleMs?: number;
}

export interface ReadersStats {
  records: number;
  appends: number;
  compactions: number;
  /** Compactions that followed another within one small append. */
  backToBack: number;
  subscriberDelivered: number;
  /** Delivered to the subscription in the writer's own sidecar. */
  ownDelivered: number;
  tailDelivered: number;
}

const KEY_ENV = 'SIDECAR_READERS_KEY';
const WORDS = ['alpha', 'βeta', 'gamma "quoted"', 'back\\slash', 'tab\there', 'line\nbreak', '日本語', '🙂', 'ünïcödé', 'plain'];

export async function runReaders(o: ReadersOptions): Promise<ReadersStats> {
  const rng = new Rng(o.seed);
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-readers-'));
  const env = o.encrypted ? { ...process.env, [KEY_ENV]: randomBytes(32).toString('base64') } : process.env;
  const keyArgs = o.encrypted ? ['--encryption-key-env', KEY_ENV] : [];
  const spawned: SidecarClient[] = [];
  let tail: TailFollower | undefined;
  try {
    const start = async () => {
      const c = await o.start({ store, env, args: keyArgs });
      spawned.push(c);
      return c;
    };
    const w = await start();
    const { sessionId } = await w.create({ title: 'readers' });
    const sent: unknown[] = [undefined]; // by seq: the record appended
    const first = { kind: 'message' as const, message: { role: 'user', content: 'r1 first' } };
    await w.append({ sessionId, records: [first] });
    sent.push(first);
    const s = await start();
    await s.request('session/subscribe', { sessionId, afterSeq: 0 });
    await w.request('session/subscribe', { sessionId, afterSeq: 0 });
    // -n 1 prints seq 1 and follows from it: once seq 1 is out, every later record is its to print
    tail = followTail(o.cli, ['tail', sessionId, '-f', '-n', '1', '--raw', '--store', store, ...keyArgs], env);
    await until(() => tail!.lines.length > 0 || tail!.ended(), 60_000, 'tail -f printing seq 1');

    const stats: ReadersStats = { records: 0, appends: 0, compactions: 0, backToBack: 0, subscriberDelivered: 0, ownDelivered: 0, tailDelivered: 0 };
    let lastSeq = 1;
    let sinceCompaction = 1;
    let nextCompaction = rng.range(...o.compactEvery);
    const append = async (n: number) => {
      const records = Array.from({ length: n }, (_, i) => ({
        kind: 'message' as const, message: { role: rng.pick(['user', 'assistant']), content: `r${lastSeq + i + 1} ${rng.pick(WORDS)} ${rng.pick(WORDS)}` },
      }));
      const r = await w.append({ sessionId, records });
      if (r.redactions || r.firstSeq !== lastSeq + 1 || r.lastSeq !== lastSeq + n) throw new Error(`append answered ${JSON.stringify(r)} after seq ${lastSeq}`);
      sent.push(...records);
      lastSeq = r.lastSeq;
      sinceCompaction += n;
      stats.appends += 1;
    };
    const compact = async (throughSeq: number) => {
      await w.request('session/compact', { sessionId, summary: `through ${throughSeq}`, throughSeq });
      stats.compactions += 1;
      sinceCompaction = lastSeq - throughSeq;
    };
    while (lastSeq < o.records) {
      await append(rng.range(1, 8));
      if (sinceCompaction < nextCompaction) continue;
      const firstThrough = lastSeq - rng.int(Math.min(20, sinceCompaction));
      await compact(Math.max(firstThrough, lastSeq - sinceCompaction + 1));
      if (rng.chance(0.25)) {
        await append(rng.range(1, 3));
        await compact(lastSeq);
        stats.backToBack += 1;
      }
      nextCompaction = rng.range(...o.compactEvery);
      if (stats.compactions % 20 === 0) o.progress?.(`readers: ${lastSeq} records, ${stats.compactions} compactions`);
    }
    stats.records = lastSeq;

    const delivered = subscriberRecords(s, sessionId);
    const own = subscriberRecords(w, sessionId);
    const reached = (got: Array<{ seq: number }>) => (got.at(-1)?.seq ?? 0) >= lastSeq;
    await until(() => reached(delivered()) && reached(own()) && (tail!.lastSeq() >= lastSeq || tail!.ended()),
      o.settleMs ?? 180_000, `the readers reaching seq ${lastSeq}`);
    const stored = await storedRecords(w, sessionId);
    for (const [name, c] of [['subscriber', s], ['writer’s own subscriber', w]] as const) {
      const overflows = c.notifications.filter((n) => n.method === 'session/didOverflow');
      if (overflows.length > 0) throw new Error(`the ${name} was dropped: ${JSON.stringify(overflows)}`);
    }
    check('subscriber', delivered().map((r) => JSON.stringify(r)), stored, sent);
    check('writer’s own subscriber', own().map((r) => JSON.stringify(r)), stored, sent);
    check('tail -f', tail.lines, stored, sent);
    stats.subscriberDelivered = delivered().length;
    stats.ownDelivered = own().length;
    stats.tailDelivered = tail.lines.length;
    tail.child.kill('SIGTERM');
    const exit = await tail.exited;
    if (exit.code !== 0 || tail.stderr() !== '') throw new Error(`tail -f ended ${JSON.stringify(exit)}: ${tail.stderr()}`);
    for (const c of spawned.splice(0).reverse()) await c.shutdown();
    return stats;
  } finally {
    if (tail && tail.child.exitCode === null) tail.child.kill('SIGKILL');
    for (const c of spawned) await c.kill('SIGKILL').catch(() => undefined);
    fs.rmSync(store, { recursive: true, force: true });
  }
}

/**
 * What a reader received (each record's JSON, in arrival order) against seqs 1..N: each once, in
 * order, byte for byte the stored record, and the record appended at that seq.
 */
function check(reader: string, got: string[], stored: string[], sent: unknown[]): void {
  const n = stored.length - 1;
  const seqs = got.map((line) => (JSON.parse(line) as { seq: number }).seq);
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) {
      const missing = seqs[i]! > i + 1 ? `seqs ${i + 1}..${seqs[i]! - 1} never delivered` : `seq ${seqs[i]} delivered again`;
      throw new Error(`${reader}: after seq ${i}, ${missing} (${got.length} records received of ${n})`);
    }
  }
  if (seqs.length !== n) throw new Error(`${reader}: ${seqs.length} records received of ${n}`);
  for (let seq = 1; seq <= n; seq++) {
    if (got[seq - 1] !== stored[seq]) throw new Error(`${reader}: seq ${seq} is not the stored record: ${got[seq - 1]} vs ${stored[seq]}`);
    const { kind, message } = JSON.parse(got[seq - 1]!) as { kind: string; message: unknown };
    deepStrictEqual({ kind, message }, sent[seq], `${reader}: seq ${seq} is not the record appended`);
  }
}

/** The subscriber's didAppend records of the session, so far (collected incrementally). */
function subscriberRecords(s: SidecarClient, sessionId: string): () => Array<{ seq: number }> {
  const out: Array<{ seq: number }> = [];
  let seen = 0;
  return () => {
    for (; seen < s.notifications.length; seen++) {
      const n = s.notifications[seen]!;
      const p = n.params as { sessionId: string; records: Array<{ seq: number }> };
      if (n.method === 'session/didAppend' && p.sessionId === sessionId) out.push(...p.records);
    }
    return out;
  };
}

/** Every record 1..lastSeq as stored, by seq (each JSON text): the archived generations' originals, then the journal's. */
async function storedRecords(w: SidecarClient, sessionId: string): Promise<string[]> {
  const out: string[] = [''];
  const { generations } = await w.request<{ generations: Array<{ generation: number }> }>('session/history', { sessionId });
  for (const generation of [...generations.map((g) => g.generation), undefined]) {
    for (let afterSeq = out.length - 1; ;) {
      const page = await w.read({ sessionId, afterSeq, limit: 10_000, ...(generation === undefined ? {} : { generation }) });
      for (const r of page.records as Array<{ seq: number; kind: string }>) {
        if (r.kind !== 'checkpoint' && r.seq === out.length) out.push(JSON.stringify(r));
      }
      if (page.nextAfterSeq === null) break;
      afterSeq = page.nextAfterSeq;
    }
  }
  return out;
}

interface TailFollower {
  child: ChildProcess;
  /** Every complete stdout line so far. */
  lines: string[];
  lastSeq(): number;
  stderr(): string;
  ended(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function followTail(cli: { command: string; args: string[] }, args: string[], env: NodeJS.ProcessEnv): TailFollower {
  const child = spawn(cli.command, [...cli.args, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  let ended = false;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => {
    ended = true;
    resolve({ code, signal });
  }));
  const lastSeq = () => (lines.length === 0 ? 0 : (JSON.parse(lines[lines.length - 1]!) as { seq: number }).seq);
  return { child, lines, lastSeq, stderr: () => stderr, ended: () => ended, exited };
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
