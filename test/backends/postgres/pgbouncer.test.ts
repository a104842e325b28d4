import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgresBackend, type PostgresBackend } from '../../../src/backends/postgres/backend.js';
import { pass, header, newId, pgSkip, recs, snap } from './pgTestKit.js';
import { freshSchema, sharedCluster, type PgCluster } from '../../pg/pgServer.js';
import { pgbouncerAvailability, startPgBouncer, type Bouncer } from '../../pg/pgbouncer.js';

/**
 * Behind PgBouncer in transaction pooling mode (Debian's package; a pool of 3 server
 * connections shared by every client): the pooled connections carry no startup settings and no
 * session state, LISTEN goes to the server directly (`listenUrl`).
 */
const cluster: PgCluster | undefined = pgSkip ? undefined : await sharedCluster();
const skip = pgSkip ?? pgbouncerAvailability(cluster);

describe.skipIf(skip)('postgres behind PgBouncer (pool_mode = transaction)', () => {
  let bouncer: Bouncer;
  const opened: PostgresBackend[] = [];
  beforeAll(async () => {
    bouncer = await startPgBouncer(cluster!);
  }, 60_000);
  afterAll(async () => {
    for (const b of opened) await b.close();
    await bouncer?.stop();
  });
  const open = async (schema: string) => {
    const b = await openPostgresBackend({ url: bouncer.url, pooler: 'transaction', listenUrl: cluster!.url, schema, leaseStaleMs: 600_000 });
    opened.push(b);
    return b;
  };

  it('without --pg-pooler the refused startup settings are a configuration error that says what to do', async () => {
    await expect(openPostgresBackend({ url: bouncer.url, schema: freshSchema() })).rejects.toMatchObject({
      kind: 'Unavailable', details: { reason: 'startupParameters', retryable: false },
      message: expect.stringContaining('--pg-pooler transaction'),
    });
  });

  it('serves: migrations, create, pipelined appends, reads, state, toolSeq, compaction, fencing, hints across sidecars', async () => {
    const schema = freshSchema();
    const a = await open(schema);
    const b = await open(schema);
    const id = newId();
    const fa = await a.leases.acquire(id);
    await a.create(header(id), recs(1, 1), snap(), fa);
    let poked = 0;
    b.changes(id, () => poked++);
    // More appends in flight than the proxy has server connections, each its own session's commit path.
    const ids = Array.from({ length: 8 }, () => newId());
    const fences = await Promise.all(ids.map((x) => a.leases.acquire(x)));
    await Promise.all(ids.map((x, i) => a.create(header(x), recs(1, 1), snap(), fences[i])));
    await Promise.all(ids.map(async (x, i) => {
      for (let k = 0; k < 5; k++) await a.persist(fences[i]!, recs(2 + k, 1), snap(), { lastSeq: 1 + k, generation: 0 });
    }));
    for (const x of ids) expect((await b.load(x)).lastSeq).toBe(6);
    await a.persist(fa, recs(2, 3), snap(), { lastSeq: 1, generation: 0 });
    expect((await b.readRange(id, { afterSeq: 0, limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await vi.waitFor(() => expect(poked).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
    await a.state.set(fa, pass.stateEntry({ key: 'k', text: '"v"' }));
    expect(await b.state.get(id, 'k')).toBe('"v"');
    expect(await a.reserveToolSeq(fa, 0)).toBe(1);
    const checkpoint = pass.checkpoint({ seq: 3, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint","generation":1,"throughSeq":3}' });
    expect((await a.rotate(fa, { throughSeq: 3, checkpoint, expect: { lastSeq: 4, generation: 0 } })).generation).toBe(1);
    // The lease is live (A's LISTEN connection is direct): B is refused; released, B takes it and A is fenced.
    await expect(b.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
    await a.leases.release(fa);
    const fb = await b.leases.acquire(id);
    await expect(a.persist(fa, recs(5, 1), snap(), { lastSeq: 4, generation: 1 })).rejects.toMatchObject({ kind: 'LeaseLost' });
    await b.persist(fb, recs(5, 1), snap(), { lastSeq: 4, generation: 1 });
    expect((await a.load(id)).lastSeq).toBe(5);
  });
});
