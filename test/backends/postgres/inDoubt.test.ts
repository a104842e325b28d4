/**
 * A connection that breaks while COMMIT is in flight: the outcome is unknown to the caller,
 * so the error says so (Unavailable, outcome `unknown`), and confirmBatch settles it once the
 * database answers again. The COMMIT is held open deterministically by a deferred constraint
 * trigger that sleeps, and the writer's backend is terminated meanwhile.
 */
import { describe, expect, it, vi } from 'vitest';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, pgUrl, recs, snap } from './pgTestKit.js';

describe.skipIf(pgSkip)('postgres: a connection lost during COMMIT', () => {
  it('is Unavailable with outcome unknown; confirmBatch tells absent; nothing half-written; a retry commits', async () => {
    const schema = freshSchema();
    const b = await backend({ schema, applicationName: schema });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const id = newId();
      const fence = await b.leases.acquire(id);
      await b.create(header(id), recs(1, 2), snap(), fence);
      await raw.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$`);
      await raw.query(`CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON records DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
      const batch = recs(3, 2);
      const pending = b.persist(fence, batch, snap(), { lastSeq: 2, generation: 0 }).then(() => null, (e: unknown) => e);
      let pid = 0;
      await vi.waitFor(async () => {
        const rows = await raw.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query LIKE '%WITH advanced AS%' AND wait_event = 'PgSleep' AND application_name = $1`, [schema]);
        expect(rows).toHaveLength(1);
        pid = rows[0]!.pid;
      }, { timeout: 20_000, interval: 50 });
      await raw.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await pending).toMatchObject({ kind: 'Unavailable', details: { outcome: 'unknown', retryable: true } });
      await raw.query('DROP TRIGGER slow ON records');
      expect(await b.confirmBatch(id, 0, batch[1]!)).toBe('absent');
      expect((await b.load(id)).lastSeq).toBe(2);
      expect((await b.readRange(id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2]);
      await b.persist(fence, batch, snap(), { lastSeq: 2, generation: 0 });
      expect(await b.confirmBatch(id, 0, batch[1]!)).toBe('committed');
      // Another record at that seq is not ours.
      expect(await b.confirmBatch(id, 0, { ...batch[1]!, text: '{"kind":"message","other":true}' })).toBe('absent');
    } finally {
      await raw.close();
    }
  });
});
