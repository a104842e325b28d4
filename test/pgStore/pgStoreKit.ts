import { afterAll, afterEach } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { PgConnections } from '../../src/backends/postgres/pool.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { parsePostgresUrl } from '../../src/backends/postgres/url.js';
import { releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';

/**
 * PostgreSQL stores (and raw connections, for tests that edit rows behind a store's back) on
 * the shared throwaway cluster, each on the schema given; all closed after every test, the
 * cluster released after the file. Call once at the top of a test file.
 */
export function sharedPgStores(): {
  store(schema: string): Promise<Sessions>;
  raw(schema: string): Promise<PgConnections>;
} {
  const open: Array<{ closeAll(): Promise<void> } | PgConnections> = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await ('closeAll' in s ? s.closeAll() : s.close());
  });
  afterAll(() => releaseSharedCluster());
  return {
    async store(schema) {
      const db = await openPostgresBackend({ url: (await sharedCluster()).url, schema });
      const s = new Sessions(db, { scratch: scratchAt(tempDir()) });
      open.push(s);
      return s;
    },
    async raw(schema) {
      const c = await PgConnections.open({ target: parsePostgresUrl((await sharedCluster()).url), schema });
      open.push(c);
      return c;
    },
  };
}
