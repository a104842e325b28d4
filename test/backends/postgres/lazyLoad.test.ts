import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

/** Runs a module body in a fresh Node process (tsx) and returns what it prints. */
function runFresh(body: string): string {
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { cwd: root, encoding: 'utf8' });
}

describe('the pg driver is loaded lazily', () => {
  it('importing the backend does not load pg; opening a postgres store does', () => {
    const out = runFresh(`
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const loaded = () => Object.keys(require.cache).some((p) => p.includes('/node_modules/pg/'));
      const m = await import('./src/backends/postgres/backend.ts');
      const before = loaded();
      await m.openPostgresBackend({ url: 'postgres://u@/d?host=/nonexistent-lazy-test', connectTimeoutMs: 500 }).catch(() => {});
      console.log(JSON.stringify({ before, after: loaded() }));
    `);
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ before: false, after: true });
  });
});
