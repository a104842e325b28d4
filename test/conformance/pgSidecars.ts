/**
 * What the PostgreSQL crash and fleet tests share: the built binary served on a PostgreSQL
 * store (optionally on another "machine", test/pg/netns.ts), polling with generous deadlines
 * (never a timing assertion), reading a whole session, the records a subscription delivered,
 * and the checks every crash test makes on what survived.
 */
import { expect } from 'vitest';
import type { Machine } from '../pg/netns.js';
import { onMachine } from '../pg/netns.js';
import { tempDir } from '../helpers.js';
import { CLI, SidecarError, spawnSidecar, type SidecarClient } from './harness.js';

export interface PgSidecarOptions {
  url: string;
  schema: string;
  /** Where tool scratch directories go (a fresh temp dir unless given). */
  workspace?: string;
  /** --lease-stale-ms (the CLI accepts 5000..15000). */
  leaseStaleMs?: number;
  machine?: Machine;
}

/** The built binary, `serve --store URL --pg-schema S`, initialized (killed after each test by the harness). */
export async function startPgSidecar(o: PgSidecarOptions): Promise<SidecarClient> {
  const serve = ['serve', '--workspace', o.workspace ?? tempDir('pg-ws-'), '--pg-schema', o.schema,
    ...(o.leaseStaleMs ? ['--lease-stale-ms', String(o.leaseStaleMs)] : [])];
  const c = o.machine
    ? spawnSidecar({ store: o.url, ...onMachine(o.machine, [process.execPath, CLI, ...serve]) })
    : spawnSidecar({ store: o.url, args: serve });
  await c.initialize();
  return c;
}

/** Polls `probe` until it returns a value other than undefined; fails after `deadlineMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Retries `op` while it fails with one of `kinds` (each failure passed to `seen`); other errors fail. */
export async function retryWhile<T>(kinds: string[], op: () => Promise<T>, seen: (e: SidecarError) => void = () => {}, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof SidecarError) || !kinds.includes(err.kind ?? '') || Date.now() > end) throw err;
      seen(err);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export type Stored = Record<string, unknown> & { seq: number; kind: string };

export async function readAll(c: SidecarClient, sessionId: string): Promise<Stored[]> {
  const out: Stored[] = [];
  for (let afterSeq = 0; ;) {
    const page = await c.read({ sessionId, afterSeq, limit: 500 });
    out.push(...(page.records as Stored[]));
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

/** Every record `session/didAppend` brought `c` for `sessionId`, in arrival order. */
export function delivered(c: SidecarClient, sessionId: string): Stored[] {
  return c.notifications
    .filter((n) => n.method === 'session/didAppend' && (n.params as { sessionId: string }).sessionId === sessionId)
    .flatMap((n) => (n.params as { records: Stored[] }).records);
}

/** Content that must come back byte for byte: multi-byte UTF-8, escapes, a JSON-looking string. */
export function payload(tag: string, i: number): string {
  return `${tag} é✓𝄞 "quoted" \\back\\slash {"k":[1,2]} ${'x'.repeat(i % 257)}`;
}

export type Rec = { kind: 'message'; message: { role: string; content: string } };

/** The records of request `key` (n of them): `<key>#k/n <payload>`, so a batch can be recognised whole. */
export function batch(key: string, n: number, i: number): Rec[] {
  return Array.from({ length: n }, (_, k) => ({ kind: 'message' as const, message: { role: 'user', content: `${key}#${k}/${n} ${payload(key, i)}` } }));
}

/**
 * The crash invariants on one session's stored records: seqs 1..n with no gap; every
 * acknowledged record present at its seq, equal to what was sent; every request's records
 * either all present (contiguous, in order) or all absent. Returns how many acknowledged
 * records were checked.
 */
export function checkSurvivors(records: Stored[], acked: Map<number, Rec>): number {
  expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  for (const [seq, rec] of acked) {
    const { seq: _s, ts: _t, ...stored } = bySeq.get(seq) ?? ({} as Stored);
    expect(stored, `seq ${seq}`).toEqual(rec);
  }
  const runs = new Map<string, number[]>();
  for (const r of records) {
    const m = /^(\S+)#(\d+)\/(\d+) /.exec((r.message as { content: string }).content);
    if (!m) throw new Error(`record ${r.seq} is none of ours`);
    const seqs = runs.get(m[1]!) ?? [];
    expect(Number(m[2]), `${m[1]} in order`).toBe(seqs.length);
    seqs.push(r.seq);
    runs.set(m[1]!, seqs);
    if (Number(m[2]) === Number(m[3]) - 1) expect(seqs, `${m[1]} contiguous`).toEqual(seqs.map((_, k) => seqs[0]! + k));
  }
  for (const [key, seqs] of runs) {
    const n = Number(/#\d+\/(\d+) /.exec((bySeq.get(seqs[0]!)!.message as { content: string }).content)![1]);
    expect(seqs.length, `request ${key}: all or nothing`).toBe(n);
  }
  return acked.size;
}

/** Database text that must never reach a client (PostgreSQL's own messages, codes, driver errors). */
export const DB_TEXT = /FATAL|terminating connection|administrator command|57P0|08006|ECONNREFUSED|ECONNRESET|server closed the connection|Connection terminated|the database system is/i;

/** The Unavailable contract (protocol/README.md 6.2): fixed reason word, retry advice, outcome on writes. */
export function expectUnavailable(err: unknown, write: boolean): SidecarError {
  expect(err).toBeInstanceOf(SidecarError);
  const e = err as SidecarError;
  expect(e.kind, e.message).toBe('Unavailable');
  expect(e.code).toBe(-31016);
  expect(e.data?.reason).toMatch(/^[A-Za-z]+$/);
  expect(e.data?.retryable).toBe(true);
  expect(e.data?.retryAfterMs).toBeGreaterThan(0);
  if (write) expect(['notWritten', 'unknown']).toContain(e.data?.outcome);
  expect(e.message).not.toMatch(DB_TEXT);
  expect(JSON.stringify(e.data)).not.toMatch(DB_TEXT);
  return e;
}
