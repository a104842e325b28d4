import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** pgAvailability() in a fresh process whose PostgreSQL lookup finds nothing. */
function availabilityWithoutPg(env: Record<string, string>) {
  const { SESSION_SIDECAR_TEST_PG: _url, CI: _ci, ...rest } = process.env;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e',
    `const m = await import('./test/pg/pgServer.ts'); console.log('reason:', m.pgAvailability());`], {
    cwd: root, encoding: 'utf8', env: { ...rest, SESSION_SIDECAR_PG_BIN: '/nonexistent-pg-bin', ...env },
  });
}

describe('finding a PostgreSQL server for the tests', () => {
  it('without PostgreSQL the tests skip with a printed reason', () => {
    const r = availabilityWithoutPg({});
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('[skip] PostgreSQL tests skipped: no PostgreSQL found');
    expect(r.stdout).toContain('reason: no PostgreSQL found');
  });

  it('under CI=true they fail instead of skipping', () => {
    const r = availabilityWithoutPg({ CI: 'true' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('PostgreSQL tests cannot be skipped under CI=true');
  });
});
