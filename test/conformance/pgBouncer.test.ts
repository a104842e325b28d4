import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { spawnSidecar, type SidecarClient } from './harness.js';
import { batch, DB_TEXT, delivered, until } from './pgSidecars.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster, type PgCluster } from '../pg/pgServer.js';
import { pgbouncerAvailability, startPgBouncer, type Bouncer } from '../pg/pgbouncer.js';

/** The built binary behind PgBouncer in transaction mode: `--pg-pooler transaction --pg-listen-url <direct>`. */
const pgSkip = pgAvailability();
const cluster: PgCluster | undefined = pgSkip ? undefined : await sharedCluster();
const skip = pgSkip ?? pgbouncerAvailability(cluster);
afterAll(() => releaseSharedCluster());

describe.skipIf(skip)('the binary behind PgBouncer (pool_mode = transaction)', () => {
  let bouncer: Bouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer(cluster!);
  }, 60_000);
  afterAll(async () => bouncer?.stop());

  const start = async (schema: string): Promise<SidecarClient> => {
    const c = spawnSidecar({ store: bouncer.url, args: ['serve', '--workspace', tempDir('pg-ws-'), '--pg-schema', schema, '--pg-pooler', 'transaction', '--pg-listen-url', cluster!.url, '--pg-pool-max', '2'] });
    await c.initialize();
    return c;
  };

  it('two sidecars serve one schema through the proxy: appends, reads, a subscriber on the other sidecar sees every record once, in order', async () => {
    const schema = freshSchema();
    const a = await start(schema);
    const b = await start(schema);
    const { sessionId } = await a.create({ title: 'through pgbouncer' });
    await b.request('session/subscribe', { sessionId });
    const sent = await Promise.all(Array.from({ length: 10 }, (_, i) => a.append({ sessionId, records: batch(`p${i}`, 1, i) })));
    expect(sent.map((r) => r.firstSeq).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const seen = await until('records delivered to the other sidecar', () => {
      const d = delivered(b, sessionId);
      return d.length >= 10 ? d : undefined;
    });
    expect(seen.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(a.stderr).not.toMatch(DB_TEXT);
    await a.shutdown();
    await b.shutdown();
  }, 120_000);
});
