/**
 * PostgreSQL itself crashes (`pg_ctl stop -m immediate`: no checkpoint, WAL recovery on the
 * next start) in the middle of appends, then starts again. Runs on a private
 * throwaway cluster (the shared one must not stop under other tests).
 *
 * Claims: every acknowledged batch is present, byte for byte; every failed batch is fully
 * present or fully absent (and confirmBatch agrees); while the server is down calls fail
 * Unavailable; afterwards the same
 * backend object reconnects: appends, reads and LISTEN work again without reopening it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgresBackend, type PostgresBackend } from '../../../src/backends/postgres/backend.js';
import { PgBackendError } from '../../../src/backends/postgres/errors.js';
import type { SealedRecord } from '../../../src/backends/postgres/types.js';
import type { Gated } from '../../../src/core/gate.js';
import { StoreError } from '../../../src/domain/errors.js';
import { destroyCluster, startClusterAsync, startThrowawayCluster, stopClusterAsync, type PgCluster } from '../../pg/pgServer.js';
import { header, newId, recs, snap } from './pgTestKit.js';
import { pgAvailability } from '../../pg/pgServer.js';

const external = process.env.SESSION_SIDECAR_TEST_PG ? 'SESSION_SIDECAR_TEST_PG is set: this test needs a cluster it may crash' : null;
if (external) console.warn(`[skip] ${external}`);
const skip = pgAvailability() ?? external;

interface Batch {
  recs: Array<Gated<SealedRecord>>;
  result?: 'ok' | StoreError;
}

describe.skipIf(skip)('postgres crash mid-append (pg_ctl stop -m immediate)', () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    cluster = await startThrowawayCluster();
  });
  afterAll(() => {
    if (cluster) destroyCluster(cluster);
  });

  it('acknowledged batches survive, unacknowledged ones are all or nothing, Unavailable meanwhile, then it reconnects', async () => {
    const errors: PgBackendError[] = [];
    const b: PostgresBackend = await openPostgresBackend({ url: cluster.url, schema: 'crash', connectTimeoutMs: 1000, leaseStaleMs: 600_000, onError: (e) => errors.push(e) });
    const reader = await openPostgresBackend({ url: cluster.url, schema: 'crash', connectTimeoutMs: 1000 });
    try {
      const id = newId();
      const fence = await b.leases.acquire(id);
      await b.create(header(id), [], snap(), fence);
      const pokes: number[] = [];
      reader.changes(id, () => pokes.push(1));

      const batches: Batch[] = [];
      let acked = 0;
      let nextSeq = 1;
      let done = false;
      let resyncs = 0;
      const inflight = new Set<Promise<void>>();
      let failedSinceResync = false;
      const issue = () => {
        const batch: Batch = { recs: recs(nextSeq, 3, 'message', `b${batches.length}`) };
        batches.push(batch);
        const expectSeq = nextSeq - 1;
        nextSeq += 3;
        const p: Promise<void> = b.persist(fence, batch.recs, snap(), { lastSeq: expectSeq, generation: 0 }).then(
          () => { batch.result = 'ok'; acked++; },
          (err: StoreError) => { batch.result = err; failedSinceResync = true; },
        ).finally(() => inflight.delete(p));
        inflight.add(p);
      };
      const writer = (async () => {
        while (!done) {
          while (inflight.size < 1 && !failedSinceResync) issue(); // one at a time, as the core's commit queue sends them
          if (inflight.size > 0) await Promise.race(inflight);
          if (!failedSinceResync) continue;
          // Something failed: let everything settle, then resync from the database (retrying while it is down).
          await Promise.all([...inflight]);
          for (;;) {
            try {
              nextSeq = (await b.load(id)).lastSeq + 1;
              break;
            } catch (err) {
              expect((err as StoreError).kind).toBe('Unavailable');
              await new Promise((r) => setTimeout(r, 100));
            }
          }
          resyncs++;
          failedSinceResync = false;
        }
        await Promise.all([...inflight]);
      })();

      await vi.waitFor(() => expect(acked).toBeGreaterThanOrEqual(30), { timeout: 60_000, interval: 20 });
      await stopClusterAsync(cluster, 'immediate');
      const ackedAtCrash = acked;
      await expect(b.load(id)).rejects.toMatchObject({ kind: 'Unavailable', details: { retryable: true } });
      const other = newId();
      await expect(b.persist({ sessionId: other, token: 1 }, recs(1, 1), snap(), { lastSeq: 0, generation: 0 }))
        .rejects.toMatchObject({ kind: 'Unavailable', details: { outcome: 'notWritten', retryable: true } });
      await startClusterAsync(cluster);
      await vi.waitFor(() => expect(acked).toBeGreaterThanOrEqual(ackedAtCrash + 30), { timeout: 60_000, interval: 50 });
      done = true;
      await writer;

      const failed = batches.filter((x) => x.result instanceof StoreError);
      expect(failed.length).toBeGreaterThan(0);
      expect(resyncs).toBeGreaterThan(0);
      for (const x of failed) {
        const e = x.result as StoreError;
        expect(['Unavailable', 'Conflict']).toContain(e.kind);
        // Recognised as a connection loss, not an unexpected error.
        if (e.kind === 'Unavailable') expect(['connection', 'serverShutdown', 'serverStarting']).toContain(e.details.reason);
        if (e.kind === 'Conflict') expect(e.details.reason).toBe('expectedLastSeq');
      }
      expect((failed[0]!.result as StoreError).kind).toBe('Unavailable');

      // The database now: read everything (crc-verified) and judge every batch.
      const stored = new Map<number, string>();
      for (let after = 0; ;) {
        const page = await b.readRange(id, { afterSeq: after, limit: 500 });
        for (const r of page.records) stored.set(r.seq, r.text);
        if (page.records.length === 0) break;
        after = page.records[page.records.length - 1]!.seq;
      }
      for (const x of batches) {
        const present = x.recs.map((r) => stored.get(r.seq) === r.text);
        if (x.result === 'ok') expect(present, `acknowledged batch at ${x.recs[0]!.seq}`).toEqual([true, true, true]);
        else {
          expect([[true, true, true], [false, false, false]], `failed batch at ${x.recs[0]!.seq}`).toContainEqual(present);
          const e = x.result as StoreError;
          if (e.kind === 'Unavailable' && e.details.outcome === 'unknown') {
            expect(await b.confirmBatch(id, 0, x.recs[2]!)).toBe(present[0] ? 'committed' : 'absent');
          } else expect(present[0], `a batch failed with a certain outcome at ${x.recs[0]!.seq}`).toBe(false);
        }
      }
      const last = (await b.load(id)).lastSeq;
      expect([...stored.keys()].sort((p, q) => p - q)).toEqual(Array.from({ length: last }, (_, i) => i + 1));

      // The LISTEN connections came back (and poked their subscribers).
      await b.listenerSettled();
      await reader.listenerSettled();
      await vi.waitFor(() => expect(reader.stats().listenConnects).toBe(2), { timeout: 20_000 });
      const before = pokes.length;
      await b.persist(fence, recs(last + 1, 1), snap(), { lastSeq: last, generation: 0 });
      await vi.waitFor(() => expect(pokes.length).toBeGreaterThan(before), { timeout: 10_000 });
      expect(errors.every((e) => e instanceof PgBackendError)).toBe(true);

      // The holder re-asserted its lease under its new liveness connection: nobody may take
      // it over now (the row no longer names the connection the crash ended).
      await vi.waitFor(() => expect(b.stats().listenConnects).toBe(2), { timeout: 20_000 });
      await b.listenerSettled();
      const third = await openPostgresBackend({ url: cluster.url, schema: 'crash', leaseStaleMs: 600_000 });
      try {
        await expect(third.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
      } finally {
        await third.close();
      }
    } finally {
      await b.close();
      await reader.close();
    }
  });
});
