import { describe, expect, it, vi } from 'vitest';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { backend, header, newId, pgSkip, pgUrl, recs, snap, pass } from './pgTestKit.js';
import { freshSchema } from '../../pg/pgServer.js';

describe.skipIf(pgSkip)('postgres leases and fencing', () => {
  it('a live holder keeps the session: SessionLocked names host, pid and sidecar id', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, holder: { host: 'machine-a', pid: 111, sidecarId: 'sidecar-a' } });
    const b = await backend({ schema, holder: { host: 'machine-b', pid: 222, sidecarId: 'sidecar-b' } });
    const id = newId();
    const fa = await a.leases.acquire(id);
    expect(fa.token).toBe(1);
    await expect(b.leases.acquire(id)).rejects.toMatchObject({
      kind: 'SessionLocked', details: { sessionId: id, holder: { hostname: 'machine-a', pid: 111, sidecarId: 'sidecar-a' } },
    });
    // A released lease is free at once; the token still grows.
    await a.leases.release(fa);
    expect((await b.leases.acquire(id)).token).toBe(2);
  });

  it('a holder whose connection is gone is taken over at once; its fence then fails LeaseLost', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, leaseStaleMs: 600_000 });
    const b = await backend({ schema, leaseStaleMs: 600_000 });
    const id = newId();
    const fa = await a.leases.acquire(id);
    await a.create(header(id), recs(1, 1), snap(), fa);
    await a.close(); // its liveness connection ends: the lease is orphaned
    const fb = await b.leases.acquire(id);
    expect(fb.token).toBe(fa.token + 1);
    await b.persist(fb, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    expect((await b.load(id)).lastSeq).toBe(2);
  });

  it('a stalled old holder cannot write after a takeover of its stale lease', async () => {
    const schema = freshSchema();
    // A stalls: no heartbeats (a huge period), though its connection stays open.
    const a = await backend({ schema, leaseStaleMs: 300, heartbeatMs: 3_600_000 });
    const b = await backend({ schema, leaseStaleMs: 300 });
    const id = newId();
    const fa = await a.leases.acquire(id);
    await a.create(header(id), recs(1, 1), snap(), fa);
    await expect(b.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
    await new Promise((r) => setTimeout(r, 600));
    const fb = await b.leases.acquire(id);
    expect(fb.token).toBe(fa.token + 1);
    // A wakes up and writes with its old fence, with the right lastSeq: refused, nothing written.
    await expect(a.persist(fa, recs(2, 1), snap(), { lastSeq: 1, generation: 0 })).rejects.toMatchObject({ kind: 'LeaseLost' });
    await expect(a.state.set(fa, pass.stateEntry({ key: 'k', text: '"v"' }))).rejects.toMatchObject({ kind: 'LeaseLost' });
    await expect(a.reserveToolSeq(fa, 0)).rejects.toMatchObject({ kind: 'LeaseLost' });
    const cp = pass.checkpoint({ seq: 1, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint"}' });
    await expect(a.rotate(fa, { throughSeq: 1, checkpoint: cp, expect: { lastSeq: 1, generation: 0 } })).rejects.toMatchObject({ kind: 'LeaseLost' });
    await expect(a.trash(fa)).rejects.toMatchObject({ kind: 'LeaseLost' });
    expect((await b.load(id))).toMatchObject({ lastSeq: 1, generation: 0, trashed: false });
    await b.persist(fb, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    expect((await b.readRange(id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2]);
  });

  it('heartbeats keep a live lease from going stale; a lease found taken over is reported lost', async () => {
    const schema = freshSchema();
    const lost: string[] = [];
    const a = await backend({ schema, leaseStaleMs: 1000, heartbeatMs: 50, onLeaseLost: (id) => lost.push(id) });
    const b = await backend({ schema, leaseStaleMs: 1000 });
    const id = newId();
    const fa = await a.leases.acquire(id);
    await new Promise((r) => setTimeout(r, 1500));
    await expect(b.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
    expect(lost).toEqual([]);
    // The row moves on behind A's back (as after a takeover A did not see): A's heartbeat notices.
    const conns = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      await conns.query('UPDATE leases SET token = token + 1 WHERE session_id = $1', [id]);
    } finally {
      await conns.close();
    }
    await vi.waitFor(() => expect(lost).toEqual([id]), { timeout: 10_000 });
    await expect(a.state.set(fa, pass.stateEntry({ key: 'k', text: '"v"' }))).rejects.toMatchObject({ kind: 'LeaseLost' });
  });

  it('a takeover waits for the old holder\'s commit in flight: no write of the old holder lands after it', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, leaseStaleMs: 200, heartbeatMs: 3_600_000, applicationName: schema });
    const b = await backend({ schema, leaseStaleMs: 200 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      const fa = await a.leases.acquire(id);
      await a.create(header(id), recs(1, 1), snap(), fa);
      await new Promise((r) => setTimeout(r, 400)); // A's lease is stale now
      // A's next COMMIT is held open for a second by a deferred trigger.
      await raw.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$`);
      await raw.query(`CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON records DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
      const events: string[] = [];
      const append = a.persist(fa, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }).then(() => events.push('A committed'), (e: { kind: string }) => events.push(`A ${e.kind}`));
      await vi.waitFor(async () => {
        expect(await raw.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE '%WITH advanced AS%' AND wait_event = 'PgSleep' AND application_name = $1`, [schema])).toHaveLength(1);
      }, { timeout: 20_000, interval: 20 });
      const take = b.leases.acquire(id).then((f) => {
        events.push('B acquired');
        return f;
      });
      const fb = await take;
      await append;
      expect(events).toEqual(['A committed', 'B acquired']);
      expect(fb.token).toBe(fa.token + 1);
      expect((await b.load(id)).lastSeq).toBe(2); // B starts from everything A committed
    } finally {
      await raw.close();
    }
  });
});
