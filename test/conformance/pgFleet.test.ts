/**
 * A fleet on one PostgreSQL database, over the REAL binary: three sidecar processes, A, B, C.
 *
 * Where it can (root, `ip`, `unshare`), each sidecar runs on its own "machine": its own network
 * namespace, reaching a private throwaway cluster over TCP from its own address (veth pairs on
 * 10.200.N.0/30, test/pg/netns.ts), and its own host name (UTS namespace). Where it cannot, the
 * same scenarios run as local processes over 127.0.0.1 (the sidecar has no option to name its
 * lease host, so all three carry this machine's host name) and the namespace variant is skipped
 * with the reason printed.
 *
 * 1. Killed mid-turn: A creates a session (auto turns) and starts a turn whose tool call is in
 *    flight; C subscribed before A's first record. While A lives, B's open is SessionLocked
 *    naming A (host and pid). A is SIGKILLed; B opens the session (the lease is taken over:
 *    the dead holder's connections are gone), `session/context` is repaired (the synthetic
 *    cancelled tool result), B resumes the turn and finishes it. C received every record of A
 *    and B in seq order, once, equal to what the database holds — live, through LISTEN/NOTIFY:
 *    on namespaces, C's connections are seen to run no query at all while it waits.
 * 2. Stalled holder: A is SIGSTOPped with an append written to its stdin; B takes the lease
 *    over once A's heartbeat is older than --lease-stale-ms, and writes nothing yet; A is
 *    SIGCONTed: that append, run the moment A wakes, still matches the session's last seq, so
 *    only the fencing token checked inside the commit's transaction refuses it: LeaseLost, and
 *    nothing of it is stored. (With that check removed from the append commit, this test fails:
 *    A's records land after the takeover.)
 */
import os from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMachines, netnsAvailability, removeMachines, type Machine } from '../pg/netns.js';
import { destroyCluster, freshSchema, pgAvailability, releaseSharedCluster, sharedCluster, startThrowawayCluster, type PgCluster } from '../pg/pgServer.js';
import { SidecarError, type SidecarClient } from './harness.js';
import { batch, checkSurvivors, delivered, payload, readAll, retryWhile, type Stored, startPgSidecar, until } from './pgSidecars.js';

const pgSkip = pgAvailability();
const external = process.env.SESSION_SIDECAR_TEST_PG ? 'SESSION_SIDECAR_TEST_PG is set (the namespaces need a private cluster listening on their networks)' : null;
const nsSkip = pgSkip ?? external ?? netnsAvailability();
if (nsSkip && !pgSkip) console.warn(`[skip] fleet in network namespaces: ${nsSkip}; the fleet runs as local processes on 127.0.0.1 instead`);
afterAll(() => releaseSharedCluster());

interface Fleet {
  /** Sidecar i (0 = A, 1 = B, 2 = C) on the fleet's database, on its own machine when there are machines. */
  start(i: number, schema: string, leaseStaleMs?: number): Promise<SidecarClient>;
  hostname(i: number): string;
  /** Superuser URL for looking at pg_stat_activity. */
  adminUrl: string;
  /** The client address PostgreSQL sees for sidecar i (namespaces only). */
  addr?(i: number): string;
}

const CANCELLED = '[cancelled: the tool call did not complete; no result was recorded]';
const toolCall = { id: 'call_1', name: 'run_tests', arguments: '{"suite":"all"}' };
/** The tool's progress while its call is in flight (events: not part of the provider context). */
const progress = (i: number) => ({ kind: 'event' as const, type: 'tool.progress', payload: { toolCallId: toolCall.id, i, text: payload('progress', i) } });
const contentOf = (r: Stored) => (r.message as { content?: unknown } | undefined)?.content;

async function backendsFrom(adminUrl: string, addr: string): Promise<Array<{ pid: number; query_start: string | null; query: string }>> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query('SELECT pid, query_start::text, query FROM pg_stat_activity WHERE client_addr = $1::inet', [addr])).rows;
  } finally {
    await client.end();
  }
}

async function killedMidTurn(f: Fleet): Promise<void> {
  const schema = freshSchema('fleet');
  const a = await f.start(0, schema);
  const c = await f.start(2, schema);
  const { sessionId } = await a.create({ title: 'fleet', turns: 'auto' });
  await c.request('session/subscribe', { sessionId });
  await a.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'run the tests' } }] });
  await a.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', content: null, toolCalls: [toolCall] } }] });
  await Promise.all(Array.from({ length: 10 }, (_, i) => a.append({ sessionId, records: [progress(i)] })));
  const ofA = await readAll(a, sessionId);
  // C follows live: A's records reach it while A is still running.
  await until('C receives A\'s records', () => (delivered(c, sessionId).length >= ofA.length ? true : undefined));
  if (f.addr) {
    expect((await backendsFrom(f.adminUrl, f.addr(0))).length).toBeGreaterThan(0); // A talks from its own address
    // No polling: with nothing appended, C's connections run no query at all.
    const before = await backendsFrom(f.adminUrl, f.addr(2));
    expect(before.length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1500));
    const after = new Map((await backendsFrom(f.adminUrl, f.addr(2))).map((b) => [b.pid, b.query_start]));
    for (const b of before) if (after.has(b.pid)) expect(after.get(b.pid), `C's backend ${b.pid} ran a query while idle`).toBe(b.query_start);
  }

  const b = await f.start(1, schema);
  const locked = await b.open({ sessionId }).catch((e: unknown) => e);
  expect((locked as SidecarError).kind).toBe('SessionLocked');
  expect((locked as SidecarError).data?.holder).toMatchObject({ hostname: f.hostname(0), pid: a.child.pid });

  // Killed mid-turn, with appends still in flight (each is stored whole or not at all).
  const late = Array.from({ length: 5 }, (_, i) => a.append({ sessionId, records: [progress(100 + i), progress(200 + i)] }).catch(() => undefined));
  a.child.kill('SIGKILL');
  await Promise.all(late);
  expect((await a.exited).signal).toBe('SIGKILL');

  const opened = await retryWhile(['SessionLocked'], () => b.open({ sessionId }));
  expect(opened.turn).toMatchObject({ status: 'active', phase: 'executingTools' });
  const repaired = await b.request<{ messages: Array<Record<string, unknown>> }>('session/context', { sessionId });
  // The synthetic result follows the call it answers, before the next non-tool message.
  const call = repaired.messages.findIndex((m) => Array.isArray(m.toolCalls));
  expect(repaired.messages[call + 1]).toEqual({ role: 'tool', toolCallId: toolCall.id, name: toolCall.name, content: CANCELLED });
  expect(repaired.messages.filter((m) => m.role === 'tool')).toHaveLength(1);

  const turnId = (opened.turn as { turnId: string }).turnId;
  await b.request('turn/resume', { sessionId, turnId });
  await b.append({ sessionId, records: [{ kind: 'message', message: { role: 'tool', toolCallId: toolCall.id, name: toolCall.name, content: '42 passed' } }] });
  await b.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', content: 'All 42 tests pass.' } }] });
  expect((await b.request<{ turn: { status: string } }>('turn/get', { sessionId })).turn.status).toBe('completed');
  const context = await b.request<{ messages: Array<Record<string, unknown>> }>('session/context', { sessionId });
  expect(context.messages.filter((m) => m.role === 'tool')).toEqual([{ role: 'tool', toolCallId: toolCall.id, name: toolCall.name, content: '42 passed' }]);
  if (f.addr) expect((await backendsFrom(f.adminUrl, f.addr(1))).length).toBeGreaterThan(0);

  // C got everything A and B committed, in order, once: the database's records exactly.
  const stored = await readAll(b, sessionId);
  expect(stored.map(contentOf)).toContain('All 42 tests pass.');
  const got = await until('C receives every record', () => (delivered(c, sessionId).length >= stored.length ? delivered(c, sessionId) : undefined));
  expect(got).toEqual(stored);
  expect(c.notifications.some((n) => n.method === 'turn/didChange')).toBe(true);
  await b.shutdown();
  await c.shutdown();
}

async function stalledHolder(f: Fleet): Promise<void> {
  const schema = freshSchema('stall');
  const a = await f.start(0, schema, 5000);
  const b = await f.start(1, schema, 5000);
  const { sessionId } = await a.create({ title: 'stall' });
  await a.append({ sessionId, records: batch('before', 1, 0) });
  a.child.kill('SIGSTOP');
  // Written into A's stdin while it is stopped: A runs it as soon as it wakes, before it can
  // learn of the takeover any other way than through the fence inside the commit.
  const lateAppend = a.append({ sessionId, records: batch('stalled', 2, 0) }).then(() => undefined, (e: unknown) => e);
  try {
    const locked: SidecarError[] = [];
    await retryWhile(['SessionLocked'], () => b.open({ sessionId }), (e) => locked.push(e));
    for (const e of locked) expect(e.data?.holder).toMatchObject({ hostname: f.hostname(0), pid: a.child.pid });
  } finally {
    a.child.kill('SIGCONT');
  }
  // B has not written yet, so A's append still matches the session's last seq: only the fence
  // inside A's commit stands between it and the database.
  const lost = await lateAppend;
  expect(lost).toBeInstanceOf(SidecarError);
  expect((lost as SidecarError).kind, (lost as SidecarError).message).toBe('LeaseLost');
  expect(await b.append({ sessionId, records: batch('takeover', 1, 0) })).toEqual({ firstSeq: 2, lastSeq: 2 });
  const again = await a.append({ sessionId, records: batch('again', 1, 0) }).catch((e: unknown) => e);
  expect(['LeaseLost', 'ReadOnly']).toContain((again as SidecarError).kind);
  const stored = await readAll(b, sessionId);
  checkSurvivors(stored, new Map());
  expect(stored.map((r) => String(contentOf(r)).split('#')[0])).toEqual(['before', 'takeover']);
  expect(await b.append({ sessionId, records: batch('still', 1, 0) })).toEqual({ firstSeq: 3, lastSeq: 3 });
  await b.shutdown();
  await a.kill('SIGKILL');
}

describe.skipIf(nsSkip)('a fleet of sidecars in separate network namespaces on one PostgreSQL database', () => {
  let machines: Machine[] = [];
  let cluster: PgCluster | undefined;
  const fleet: Fleet = {
    start: (i, schema, leaseStaleMs) => startPgSidecar({
      url: `postgres://postgres@${machines[i]!.hostAddr}:${cluster!.local!.port}/postgres`, schema, machine: machines[i]!, ...(leaseStaleMs ? { leaseStaleMs } : {}),
    }),
    hostname: (i) => machines[i]!.hostname,
    get adminUrl() {
      return cluster!.url;
    },
    addr: (i) => machines[i]!.addr,
  };
  beforeAll(async () => {
    machines = makeMachines(['machine-a', 'machine-b', 'machine-c']);
    cluster = await startThrowawayCluster(undefined, { listen: machines.map((m) => m.hostAddr), trustNetworks: machines.map((m) => m.network) });
  }, 120_000);
  afterAll(() => {
    if (cluster) destroyCluster(cluster);
    removeMachines(machines);
  });

  it('killed mid-turn on machine A, resumed on machine B (lease taken over, context repaired), followed live on machine C', () => killedMidTurn(fleet), 180_000);
  it('a stalled holder on machine A cannot write after machine B took the lease over (LeaseLost, nothing stored)', () => stalledHolder(fleet), 180_000);
});

describe.runIf(nsSkip && !pgSkip)('a fleet of sidecar processes on one PostgreSQL database (local fallback, 127.0.0.1)', () => {
  let url = '';
  const fleet: Fleet = {
    start: (_i, schema, leaseStaleMs) => startPgSidecar({ url, schema, ...(leaseStaleMs ? { leaseStaleMs } : {}) }),
    hostname: () => os.hostname(),
    get adminUrl() {
      return url;
    },
  };
  beforeAll(async () => {
    const c = await sharedCluster();
    url = c.tcpUrl ?? c.url;
  }, 120_000);

  it('killed mid-turn in process A, resumed in process B (lease taken over, context repaired), followed live by process C', () => killedMidTurn(fleet), 180_000);
  it('a stalled holder cannot write after another process took the lease over (LeaseLost, nothing stored)', () => stalledHolder(fleet), 180_000);
});
