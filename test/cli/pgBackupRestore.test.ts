/**
 * Backup and restore as protocol/STORAGE.md tells a DBA: `pg_dump -n <schema>` of a store with
 * sessions (a compacted one, a trashed one, state values and a blob), restored with pg_restore
 * into ANOTHER database, then `session-sidecar verify` on it (the built binary): clean, every
 * row identical to the source's, every session exported byte for byte the same, the schema
 * at the same version (servable without `pg migrate`), migration 6's fillfactor kept.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshSchema, sharedCluster } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { ownDatabase, runSql } from '../pg/ownDatabase.js';
import { tempDir } from '../helpers.js';
import { explain, runCli } from './helpers.js';
import { dumpSchema, makePgStore } from './pgCliKit.js';

/** pg_dump and pg_restore of the test cluster's version (or on PATH, for an external server). */
async function pgTool(name: string): Promise<string> {
  const bin = (await sharedCluster()).local?.binDir;
  return bin ? path.join(bin, name) : name;
}

describe.skipIf(pgSkip)('PostgreSQL backup and restore: pg_dump -n schema, pg_restore into another database, verify', () => {
  it('the restored store verifies clean and reads back identical', async () => {
    const url = await pgUrl();
    const schema = freshSchema('bak');
    const fx = await makePgStore(url, schema);
    const file = path.join(tempDir('sidecar-pgdump-'), 'store.dump');
    // As a DBA would: the store's schema only, custom format (no owner, no GRANTs: the restoring
    // database's roles may differ; re-run the documented GRANTs there).
    execFileSync(await pgTool('pg_dump'), ['--dbname', url, '--schema', schema, '--format', 'custom', '--no-owner', '--no-privileges', '--file', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    expect(fs.statSync(file).size).toBeGreaterThan(1000);

    const restore = await ownDatabase(`restore_${schema}`);
    const restoredUrl = restore.url;
    try {
      // The search index's extension lives outside the store's schema (in public), so a dump of
      // the schema does not carry it: the target database gets it first, as STORAGE.md says.
      execFileSync(await pgTool('psql'), ['--dbname', restoredUrl, '-v', 'ON_ERROR_STOP=1', '-c', 'CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public'], { stdio: ['ignore', 'pipe', 'pipe'] });
      execFileSync(await pgTool('pg_restore'), ['--dbname', restoredUrl, '--exit-on-error', '--no-owner', '--no-privileges', file], { stdio: ['ignore', 'pipe', 'pipe'] });

      const verify = await runCli(['verify', '--store', restoredUrl, '--pg-schema', schema, '--json']);
      expect(verify.code, explain(verify)).toBe(0);
      const report = JSON.parse(verify.stdout) as { ok: boolean; totals: { sessions: number; errors: number; warnings: number } };
      expect(report).toMatchObject({ ok: true, totals: { sessions: 4, errors: 0, warnings: 0 } });

      // Every row of every table the same (blobs by digest, the migration record included).
      const restored = await dumpSchema(restoredUrl, schema);
      expect(restored).toBe(await dumpSchema(url, schema));
      expect(restored).toMatch(/^blobs: .*bytes:[0-9a-f]{64}/m);
      expect(restored).toMatch(/^archived_generations: /m);
      expect(restored).toMatch(/^state_values: /m);
      // What a client reads: each session exported the same, archived generations included.
      for (const id of [fx.chat, fx.compacted, fx.runtime]) {
        const [a, b] = await Promise.all([url, restoredUrl].map((u) => runCli(['export', id, '--format', 'jsonl', '--store', u, '--pg-schema', schema])));
        expect(b!.code, explain(b!)).toBe(0);
        expect(b!.stdout).toBe(a!.stdout);
      }
      const trash = await runCli(['trash', 'list', '--store', restoredUrl, '--pg-schema', schema]);
      expect(trash.stdout).toContain(fx.trashed);
      // The schema version came along: this binary serves it as it is.
      const status = await runCli(['pg', 'status', '--store', restoredUrl, '--pg-schema', schema, '--json']);
      expect(status.code, explain(status)).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ state: 'current', canServe: true });
      const [rel] = await runSql<{ opts: string[] }>(restoredUrl, `SELECT reloptions AS opts FROM pg_class WHERE oid = '"${schema}".sessions'::regclass`);
      expect(rel?.opts).toEqual(['fillfactor=75']);
    } finally {
      await restore.drop();
    }
  }, 120_000);
});
