import { describe, expect, it, vi } from 'vitest';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { CommitNotifier } from '../../../src/backends/postgres/notify.js';
import { backend, header, kindOf, newId, pass, pgSkip, pgUrl, recs, snap } from './pgTestKit.js';
import { freshSchema } from '../../pg/pgServer.js';

/**
 * The commit path of issue 28: an append is one statement fenced in its WHERE (no lease row
 * lock, no pg_notify in its transaction), the heartbeat never overlaps itself, a failed
 * release is owed until it lands, and a sidecar holds at most pool max + 1 connections.
 */
describe.skipIf(pgSkip)('postgres commit path', () => {
  it('an append commits while another transaction holds the lease row (the heartbeat\'s lock), and fences by the session row', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, lockTimeoutMs: 60_000 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      const fa = await a.leases.acquire(id);
      await a.create(header(id), recs(1, 1), snap(), fa);
      let done = false;
      await raw.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM leases WHERE session_id = $1 FOR UPDATE', [id]);
        // Before: the append's fence check (FOR SHARE on this row) waited here until lock_timeout.
        await a.persist(fa, recs(2, 2), snap(), { lastSeq: 1, generation: 0 });
        done = true;
      });
      expect(done).toBe(true);
      expect((await a.load(id)).lastSeq).toBe(3);
      // The fence is the session row's token: a takeover written there refuses the old holder.
      await raw.query('UPDATE sessions SET writer_token = writer_token + 1 WHERE session_id = $1', [id]);
      await expect(a.persist(fa, recs(4, 1), snap(), { lastSeq: 3, generation: 0 })).rejects.toMatchObject({ kind: 'LeaseLost' });
      expect((await a.load(id)).lastSeq).toBe(3);
    } finally {
      await raw.close();
    }
  });

  it('every other write fences by the session row too, and none of them locks the lease row', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, lockTimeoutMs: 60_000 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      const fa = await a.leases.acquire(id);
      await a.create(header(id), recs(1, 5), snap(), fa);
      const checkpoint = pass.checkpoint({ seq: 3, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint","generation":1,"throughSeq":3}' });
      // Beside a transaction holding the lease row (as the heartbeat's UPDATE does), each write commits.
      await raw.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM leases WHERE session_id = $1 FOR UPDATE', [id]);
        await a.state.set(fa, pass.stateEntry({ key: 'k', text: '"v"' }));
        expect(await a.state.delete(fa, 'k')).toBe(true);
        expect(await a.reserveToolSeq(fa, 0)).toBe(1);
        await a.rotate(fa, { throughSeq: 3, checkpoint, expect: { lastSeq: 5, generation: 0 } });
      });
      // A takeover written into the session row alone (the lease row untouched) refuses every one.
      await raw.query('UPDATE sessions SET writer_token = writer_token + 1 WHERE session_id = $1', [id]);
      const cp2 = pass.checkpoint({ seq: 4, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint","generation":2,"throughSeq":4}' });
      expect(await kindOf(a.state.set(fa, pass.stateEntry({ key: 'k', text: '"w"' })))).toBe('LeaseLost');
      expect(await kindOf(a.state.delete(fa, 'k'))).toBe('LeaseLost');
      expect(await kindOf(a.reserveToolSeq(fa, 0))).toBe('LeaseLost');
      expect(await kindOf(a.rotate(fa, { throughSeq: 4, checkpoint: cp2, expect: { lastSeq: 5, generation: 1 } }))).toBe('LeaseLost');
      expect(await kindOf(a.trash(fa))).toBe('LeaseLost');
      expect(await a.state.get(id, 'k')).toBeUndefined();
      expect((await a.load(id)).generation).toBe(1);
      expect((await a.load(id)).trashed).toBe(false);
    } finally {
      await raw.close();
    }
  });

  it('an append names what refused it: bad batches, no session under our lease, a released lease', async () => {
    const a = await backend();
    const id = newId();
    const fa = await a.leases.acquire(id);
    // Our lease, no session row: SessionNotFound (not LeaseLost).
    expect(await kindOf(a.persist(fa, recs(1, 1), snap(), { lastSeq: 0, generation: 0 }))).toBe('SessionNotFound');
    await a.create(header(id), recs(1, 1), snap(), fa);
    expect(await kindOf(a.persist(fa, [], snap(), { lastSeq: 1, generation: 0 }))).toBe('InvalidArgument');
    expect(await kindOf(a.persist(fa, recs(3, 1), snap(), { lastSeq: 1, generation: 0 }))).toBe('InvalidArgument');
    expect((await a.load(id)).lastSeq).toBe(1);
    const other = newId();
    const fo = await a.leases.acquire(other);
    await a.leases.release(fo);
    expect(await kindOf(a.persist(fo, recs(1, 1), snap(), { lastSeq: 0, generation: 0 }))).toBe('LeaseLost');
    // The byte count is of UTF-8.
    await a.persist(fa, recs(2, 1, 'message', 'é'.repeat(100)), snap(), { lastSeq: 1, generation: 0 });
    const row = await a.load(id);
    const stored = (await a.readRange(id, { afterSeq: 0, limit: 10 })).records.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
    expect(row.storedBytes).toBe(stored);
  });

  it('a change hint reaches another sidecar after COMMIT, coalesced, and a sidecar drops its own', async () => {
    const schema = freshSchema();
    const a = await backend({ schema });
    const b = await backend({ schema });
    const id = newId();
    const fa = await a.leases.acquire(id);
    await a.create(header(id), recs(1, 1), snap(), fa);
    let seenByB = 0;
    let seenByA = 0;
    b.changes(id, () => seenByB++);
    a.changes(id, () => seenByA++);
    for (let i = 0; i < 5; i++) await a.persist(fa, recs(2 + i, 1), snap(), { lastSeq: 1 + i, generation: 0 });
    await vi.waitFor(() => expect(seenByB).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
    // A's own subscriber was poked once per commit, at the commit, not again by its own NOTIFY.
    await new Promise((r) => setTimeout(r, 300));
    expect(seenByA).toBe(5);
    expect(CommitNotifier.payloads('o', ['x'.repeat(26)])).toEqual([`o ${'x'.repeat(26)}`]);
    const many = CommitNotifier.payloads('origin', Array.from({ length: 1000 }, (_, i) => String(i).padStart(26, '0')));
    expect(many.length).toBeGreaterThan(1);
    for (const p of many) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    expect(many.flatMap((p) => p.split(' ').slice(1))).toHaveLength(1000);
  });

  it('the heartbeat never overlaps itself: while lease rows are locked, at most one heartbeat statement waits', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, heartbeatMs: 30, leaseStaleMs: 600_000, applicationName: schema, lockTimeoutMs: 60_000 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      await a.leases.acquire(id);
      let most = 0;
      await raw.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM leases WHERE session_id = $1 FOR UPDATE', [id]);
        for (let i = 0; i < 20; i++) {
          await new Promise((r) => setTimeout(r, 50));
          const rows = await raw.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'UPDATE leases l SET heartbeat_at%' AND state = 'active'`, [schema]);
          most = Math.max(most, rows[0]!.n);
        }
      });
      // A timer that does not wait for the last run would have piled up the pool's worth.
      expect(most).toBe(1);
    } finally {
      await raw.close();
    }
  });

  it('a release that fails is owed: the next heartbeat after the database answers again releases the lease', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, heartbeatMs: 100, leaseStaleMs: 600_000, lockTimeoutMs: 300 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      const fa = await a.leases.acquire(id);
      await raw.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM leases WHERE session_id = $1 FOR UPDATE', [id]);
        await expect(a.leases.release(fa)).rejects.toMatchObject({ kind: 'Unavailable' });
      });
      await vi.waitFor(async () => {
        const rows = await raw.query<{ released: boolean }>('SELECT released_at IS NOT NULL AS released FROM leases WHERE session_id = $1', [id]);
        expect(rows[0]!.released).toBe(true);
      }, { timeout: 20_000, interval: 50 });
    } finally {
      await raw.close();
    }
  });

  it('a frozen holder inside a transaction is taken over within the stale time; while it holds the row the newcomer hears SessionLocked', async () => {
    const schema = freshSchema();
    const b = await backend({ schema, leaseStaleMs: 2000, lockTimeoutMs: 200 });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema, idleInTransactionMs: 1000 });
    const id = newId();
    const fb0 = await b.leases.acquire(id);
    await b.create(header(id), recs(1, 1), snap(), fb0);
    await b.leases.release(fb0);
    // A "holder" frozen in a transaction that holds the session row (as a stopped process would).
    const client = await raw.dedicatedClient(() => undefined);
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM sessions WHERE session_id = $1 FOR UPDATE', [id]);
    await expect(b.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
    // The server ends the frozen transaction (idle_in_transaction_session_timeout): the row is free.
    await vi.waitFor(async () => expect((await b.leases.acquire(id)).token).toBeGreaterThan(fb0.token), { timeout: 20_000, interval: 200 });
    await client.end().catch(() => undefined);
    await raw.close();
  });

  it('a sidecar holds at most pool max + 1 connections under load', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, poolMax: 3, applicationName: schema });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const ids = Array.from({ length: 12 }, () => newId());
      const fences = await Promise.all(ids.map((id) => a.leases.acquire(id)));
      await Promise.all(ids.map((id, i) => a.create(header(id), recs(1, 1), snap(), fences[i])));
      let most = 0;
      const load = Promise.all(ids.map(async (id, i) => {
        for (let k = 0; k < 10; k++) await a.persist(fences[i]!, recs(2 + k, 1), snap(), { lastSeq: 1 + k, generation: 0 });
      }));
      const watch = (async () => {
        for (let j = 0; j < 20; j++) {
          const rows = await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [schema]);
          most = Math.max(most, rows[0]!.n);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      await Promise.all([load, watch]);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(4);
    } finally {
      await raw.close();
    }
  });
});
