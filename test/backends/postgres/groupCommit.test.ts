/**
 * Group commit across sessions (groupCommit.ts) against a real PostgreSQL: batches of different
 * sessions that wait for a connection share one statement, and each member still meets only
 * its own fate — a stale fence, a moved position, a row another transaction holds locked.
 * With --pg-pool-max 2 one append statement runs at a time, so a wave of N sessions' batches
 * is deterministically one statement alone and then one statement of the N-1 that waited.
 */
import { describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import type { Fence } from '../../../src/core/port.js';
import type { PostgresBackend } from '../../../src/backends/postgres/backend.js';
import { GroupCommit } from '../../../src/backends/postgres/groupCommit.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { backend, header, newId, pgSkip, pgUrl, recs, snap } from './pgTestKit.js';
import { freshSchema } from '../../pg/pgServer.js';

async function sessions(b: PostgresBackend, n: number): Promise<Array<{ id: string; fence: Fence }>> {
  const out: Array<{ id: string; fence: Fence }> = [];
  for (let i = 0; i < n; i++) {
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), recs(1, 1), snap(), fence);
    out.push({ id, fence });
  }
  return out;
}

describe.skipIf(pgSkip)('postgres group commit across sessions', () => {
  it('batches that wait for the statement slot share one statement; every one is committed in order', async () => {
    const b = await backend({ schema: freshSchema(), poolMax: 2 });
    try {
      const all = await sessions(b, 10);
      const before = b.stats();
      await Promise.all(all.map(({ fence }) => b.persist(fence, recs(2, 3), snap(), { lastSeq: 1, generation: 0 })));
      const after = b.stats();
      expect(after.appendTransactions - before.appendTransactions).toBe(10);
      // the first went alone (a free slot), the nine that arrived while it ran went together
      expect(after.appendStatements - before.appendStatements).toBe(2);
      for (const { id } of all) {
        expect((await b.readRange(id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
        expect(await b.load(id)).toMatchObject({ lastSeq: 4, records: 4 });
      }
    } finally {
      await b.close();
    }
  });

  it('a member with a stale fence or a moved position fails alone; the others in its statement commit', async () => {
    const schema = freshSchema();
    const a = await backend({ schema, poolMax: 2 });
    const other = await backend({ schema });
    try {
      const [first, stale, moved, ...rest] = await sessions(a, 6);
      // `stale` is taken over (a released lease is free at once): a's fence for it is old.
      await a.leases.release(stale!.fence);
      const taken = await other.leases.acquire(stale!.id);
      const before = a.stats().appendStatements;
      const results = await Promise.allSettled([
        a.persist(first!.fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }),
        a.persist(stale!.fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }),
        a.persist(moved!.fence, recs(6, 1), snap(), { lastSeq: 5, generation: 0 }),
        ...rest.map(({ fence }) => a.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 })),
      ]);
      expect(a.stats().appendStatements - before).toBe(2);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'LeaseLost' });
      expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ kind: 'Conflict', details: { reason: 'expectedLastSeq', lastSeq: 1 } });
      for (const s of [first!, ...rest]) expect((await a.load(s.id)).lastSeq).toBe(2);
      for (const s of [stale!, moved!]) expect((await a.load(s.id)).lastSeq).toBe(1);
      // the new holder writes the taken session as usual
      await other.persist(taken, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    } finally {
      await a.close();
      await other.close();
    }
  });

  it('a statement refused whole (one row locked past lock_timeout) is sent again member by member: only that session fails', async () => {
    const schema = freshSchema();
    const b = await backend({ schema, poolMax: 2, lockTimeoutMs: 300 });
    const raw = new pg.Client({ connectionString: await pgUrl() });
    await raw.connect();
    try {
      const [warm, locked, ...rest] = await sessions(b, 5);
      // Another transaction holds the row of `locked` (a frozen holder elsewhere, a DBA's UPDATE).
      await raw.query('BEGIN');
      await raw.query(`SELECT 1 FROM "${schema}".sessions WHERE session_id = $1 FOR UPDATE`, [locked!.id]);
      const before = b.stats().appendStatements;
      const results = await Promise.allSettled([
        b.persist(warm!.fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }),
        b.persist(locked!.fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }),
        ...rest.map(({ fence }) => b.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 })),
      ]);
      await raw.query('ROLLBACK');
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      // certain: the server refused the statement, so nothing of it was written
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'Unavailable', details: { reason: 'lockTimeout', outcome: 'notWritten' } });
      // warm alone, then the four together (refused), then each of the four alone
      expect(b.stats().appendStatements - before).toBe(6);
      for (const s of [warm!, ...rest]) expect((await b.load(s.id)).lastSeq).toBe(2);
      expect((await b.load(locked!.id)).lastSeq).toBe(1);
      // the lock gone, the refused session appends as usual
      await b.persist(locked!.fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
      expect((await b.readRange(locked!.id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2]);
    } finally {
      await raw.end();
      await b.close();
    }
  });

  it('a connection lost during a shared COMMIT leaves every member unknown (none sent again); confirmBatch settles each', async () => {
    const schema = freshSchema();
    const b = await backend({ schema, poolMax: 2, applicationName: schema });
    const raw = new pg.Client({ connectionString: await pgUrl() });
    await raw.connect();
    try {
      const all = await sessions(b, 4);
      // COMMIT held open by a deferred constraint trigger that sleeps (as inDoubt.test.ts)
      await raw.query(`CREATE FUNCTION "${schema}".slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$`);
      await raw.query(`CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON "${schema}".records DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${schema}".slow_commit()`);
      const before = b.stats().appendStatements;
      const pending = all.map(({ fence }) => b.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }).then(() => null, (e: unknown) => e));
      // the first statement (alone), then the second (the three that waited): terminate each as it sleeps
      for (const expected of [1, 2]) {
        let pid = 0;
        await vi.waitFor(async () => {
          const rows = (await raw.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query LIKE '%WITH %' AND wait_event = 'PgSleep' AND application_name = $1`, [schema])).rows;
          expect(rows).toHaveLength(1);
          expect(b.stats().appendStatements - before).toBe(expected);
          pid = rows[0]!.pid;
        }, { timeout: 20_000, interval: 50 });
        await raw.query('SELECT pg_terminate_backend($1)', [pid]);
      }
      for (const p of pending) expect(await p).toMatchObject({ kind: 'Unavailable', details: { outcome: 'unknown' } });
      expect(b.stats().appendStatements - before).toBe(2);
      await raw.query(`DROP TRIGGER slow ON "${schema}".records`);
      for (const { id } of all) {
        expect(await b.confirmBatch(id, 0, recs(2, 1)[0]!)).toBe('absent');
        expect((await b.load(id)).lastSeq).toBe(1);
      }
    } finally {
      await raw.end();
      await b.close();
    }
  });

  describe('the bounds of one statement (GroupCommit over its own connections, one statement at a time)', () => {
    type S = { id: string; fence: Fence };
    const member = (s: S, seq: number, body = 'x') => ({ fence: s.fence, records: recs(seq, 1, 'message', body), after: snap(), at: { lastSeq: seq - 1, generation: 0 } });
    const bytesOf = (m: ReturnType<typeof member>) => Buffer.byteLength(m.records[0]!.text, 'utf8');

    async function kit(n: number) {
      const schema = freshSchema();
      const b = await backend({ schema });
      const conns = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
      return { b, conns, all: await sessions(b, n), close: async () => { await conns.close(); await b.close(); } };
    }

    it('at most maxMembers sessions per statement', async () => {
      const { b, conns, all, close } = await kit(8);
      try {
        const gc = new GroupCommit(conns, { maxInFlight: 1, maxMembers: 3 });
        await Promise.all(all.map((s) => gc.append(member(s, 2))));
        expect(gc.statements).toBe(1 + 3); // one alone, then the seven that waited: 3, 3 and 1
        for (const s of all) expect((await b.load(s.id)).lastSeq).toBe(2);
      } finally {
        await close();
      }
    });

    it('at most maxBytes of record text per statement, a first member of any size always going', async () => {
      const { b, conns, all, close } = await kit(7);
      try {
        const rb = bytesOf(member(all[0]!, 2));
        const gc = new GroupCommit(conns, { maxInFlight: 1, maxBytes: 2 * rb });
        const [warm, a, c, d, e, big1, big2] = all;
        await Promise.all([
          gc.append(member(warm!, 2)),
          ...[a, c, d, e].map((s) => gc.append(member(s!, 2))), // exactly 2 × rb fits: two by two
          ...[big1, big2].map((s) => gc.append(member(s!, 2, 'y'.repeat(3 * rb)))), // over the bound: each alone
        ]);
        expect(gc.statements).toBe(1 + 2 + 2);
        for (const s of all) expect((await b.load(s.id)).lastSeq).toBe(2);
      } finally {
        await close();
      }
    });

    it('a session never twice in one statement: its next batch waits for the next one', async () => {
      const { b, conns, all, close } = await kit(3);
      try {
        const [warm, x, y] = all;
        const gc = new GroupCommit(conns, { maxInFlight: 1 });
        await Promise.all([gc.append(member(warm!, 2)), gc.append(member(x!, 2)), gc.append(member(y!, 2)), gc.append(member(x!, 3))]);
        expect(gc.statements).toBe(3); // warm; x and y; x again
        expect(await b.load(x!.id)).toMatchObject({ lastSeq: 3, records: 3 });
        expect((await b.readRange(x!.id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2, 3]);
      } finally {
        await close();
      }
    });

    it('a statement refused before it was sent (a secret caught by the second net) is tried member by member', async () => {
      const { b, conns, all, close } = await kit(4);
      try {
        conns.guardParams((t) => (t.includes('SECRET-ZZ') ? 'test rule' : undefined));
        const [warm, leaky, p, q] = all;
        const gc = new GroupCommit(conns, { maxInFlight: 1 });
        const results = await Promise.allSettled([
          gc.append(member(warm!, 2)), gc.append(member(leaky!, 2, 'SECRET-ZZ')), gc.append(member(p!, 2)), gc.append(member(q!, 2)),
        ]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
        expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'SecretRejected' });
        expect(gc.statements).toBe(1 + 1 + 3);
        expect((await b.load(leaky!.id)).lastSeq).toBe(1);
        for (const s of [warm!, p!, q!]) expect((await b.load(s.id)).lastSeq).toBe(2);
      } finally {
        await close();
      }
    });
  });
});
