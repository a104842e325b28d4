/**
 * Issue 27, finding 6: the database password (from the store URL or PGPASSWORD) is a
 * process-wide secret of a sidecar serving PostgreSQL — a record quoting it is refused
 * (SecretRejected) and no table holds it. The test cluster trusts local connections, so the
 * password is carried but never checked by the server.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { rejection, startSidecar } from './harness.js';

const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

describe.skipIf(pgSkip)('the PostgreSQL password is a registered secret', () => {
  for (const how of ['url', 'PGPASSWORD'] as const) {
    it(`given in the ${how}: a record quoting it is refused and no row holds it`, async () => {
      const cluster = await sharedCluster();
      const password = `Pw-${how}-9f3kQz7Lm2x`;
      const url = how === 'url' ? cluster.url.replace('postgres://postgres@', `postgres://postgres:${password}@`) : cluster.url;
      const schema = freshSchema('pw');
      const s = await startSidecar({
        store: url, args: ['--pg-schema', schema],
        env: { ...process.env, ...(how === 'PGPASSWORD' ? { PGPASSWORD: password } : {}) },
      });
      const { sessionId } = await s.create({ title: 'quoting the database password' });
      const err = await rejection(s.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: `the db password is ${password}` } }] }));
      expect(err.data?.kind).toBe('SecretRejected');
      await s.append({ sessionId, records: [{ kind: 'event', type: 'clean', payload: null }] });
      await s.shutdown();
      const c = new pg.Client({ connectionString: cluster.url });
      await c.connect();
      try {
        const tables = await c.query(`select table_name from information_schema.tables where table_schema = $1`, [schema]);
        for (const { table_name: t } of tables.rows as Array<{ table_name: string }>) {
          const rows = await c.query(`select * from "${schema}"."${t}"`);
          expect(JSON.stringify(rows.rows), t).not.toContain(password);
        }
      } finally {
        await c.end();
      }
    }, 60_000);
  }
});
