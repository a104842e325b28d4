/**
 * The PostgreSQL store when its database goes away: requests fail with Unavailable (retry
 * advice, nothing written, no database text), acknowledged records stay, and once the
 * database is back the same store instance carries on (it reconnects). Uses a cluster of its
 * own (it is stopped and started), never the shared one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { StoreError } from '../../src/domain/errors.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { destroyCluster, type PgCluster, pgAvailability, startClusterAsync, startThrowawayCluster, stopClusterAsync } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';

const pgSkip = pgAvailability() ?? (process.env.SESSION_SIDECAR_TEST_PG ? 'an external server (SESSION_SIDECAR_TEST_PG) is not stopped by tests' : null);
let cluster: PgCluster | undefined;

beforeAll(async () => {
  if (!pgSkip) cluster = await startThrowawayCluster();
}, 120_000);
afterAll(() => {
  if (cluster) destroyCluster(cluster);
});

async function errorOf(p: Promise<unknown>): Promise<StoreError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error('resolved');
}

describe.skipIf(pgSkip)('PostgreSQL store: the database goes away and comes back', () => {
  it('answers Unavailable with retry advice while it is down, loses nothing acknowledged, and recovers', async () => {
    const c = cluster as PgCluster;
    const db = await openPostgresBackend({ url: c.url, schema: 'unavail', connectTimeoutMs: 1000 });
    const store = new Sessions(db, { scratch: scratchAt(tempDir()) });
    try {
      const { sessionId } = await store.create({ title: 'down and up' });
      await store.append(sessionId, [{ kind: 'event', n: 1 }, { kind: 'event', n: 2 }]);
      await stopClusterAsync(c, 'fast');
      const down = await errorOf(store.append(sessionId, [{ kind: 'event', n: 3, note: 'not acknowledged' }]));
      expect(down.kind).toBe('Unavailable');
      expect(down.details).toMatchObject({ retryable: true, outcome: 'notWritten' });
      expect(typeof down.details.retryAfterMs).toBe('number');
      expect((await errorOf(store.read(sessionId))).kind).toBe('Unavailable');
      await startClusterAsync(c);
      // The same instance reconnects: the retried append is accepted, after the acknowledged ones.
      let retried;
      for (let i = 0; i < 50 && !retried; i++) {
        retried = await store.append(sessionId, [{ kind: 'event', n: 3 }]).catch((e: unknown) => {
          if (!(e instanceof StoreError) || e.kind !== 'Unavailable') throw e;
          return new Promise<undefined>((r) => setTimeout(() => r(undefined), 200));
        });
      }
      expect(retried).toMatchObject({ firstSeq: 3, lastSeq: 3 });
      const page = await store.read(sessionId);
      expect(page.records.map((r) => r.n)).toEqual([1, 2, 3]);
      expect(JSON.stringify(page.records)).not.toContain('not acknowledged');
    } finally {
      await store.closeAll();
    }
  }, 120_000);
});
