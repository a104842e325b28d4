/**
 * The protocol conformance suite against the PostgreSQL store: the built binary started as
 * `serve --store postgres://... --pg-schema <run>_{store-id} --workspace {store}`, so every
 * scenario's store (a fresh temporary directory, which then holds only the local tool scratch)
 * is a fresh schema in the shared test cluster (test/pg/pgServer.ts). Skipped with a printed
 * reason without PostgreSQL; under CI=true it runs or fails.
 *
 * No expected failures: every scenario passes on this backend (see EXPECTED_FAILURES below).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';
import { CLI } from './harness.js';

const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

/**
 * Checks this backend is allowed to fail, each with its reason: none today. (A scenario that
 * inspects the store directory's files would belong here, with why.)
 */
const EXPECTED_FAILURES: Array<{ id: string; reason: string }> = [];

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('node', [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const failing = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('FAIL'));

describe.skipIf(pgSkip)('session-sidecar conformance against the PostgreSQL store', () => {
  it.each(['ndjson', 'lsp'])('passes over %s, every scenario in a fresh schema', async (framing) => {
    const url = (await sharedCluster()).url;
    const dir = tempDir();
    const json = path.join(dir, 'results.json');
    const expected = path.join(dir, 'expected.txt');
    fs.writeFileSync(expected, EXPECTED_FAILURES.map((f) => `# ${f.reason}\n${f.id}\n`).join(''));
    const server = ['node', CLI, 'serve', '--workspace', '{store}', '--store', url, '--pg-schema', `${freshSchema('c')}_{store-id}`];
    const r = await run(['conformance', '--framing', framing, '--json', json, '--expected-failures', expected, '--', ...server]);
    expect(failing(r.stdout)).toEqual([]);
    expect(r.code).toBe(0);
    const results = JSON.parse(fs.readFileSync(json, 'utf8')) as { passed: number; failed: number; results: Array<{ scenario: string; check: string; status: string }> };
    expect(results.failed).toBe(0);
    // every scenario ran against this backend, and each has its wire-schema check
    const names = (await run(['conformance', '--list'])).stdout.trim().split('\n').map((l) => l.split(/\s+/)[0]);
    for (const n of names) expect(results.results).toContainEqual(expect.objectContaining({ scenario: n, check: 'wire-schema', status: 'pass' }));
  }, 600_000);

  it('initialize reports the postgres backend and a root without the password (--store, or SESSION_SIDECAR_STORE)', async () => {
    const cluster = await sharedCluster();
    const withPassword = cluster.url.replace('postgres://postgres@', 'postgres://postgres:hunter2-not-used@');
    for (const how of ['flag', 'env'] as const) {
      const args = how === 'flag' ? ['--store', withPassword] : [];
      const env = how === 'env' ? { ...process.env, SESSION_SIDECAR_STORE: withPassword } : process.env;
      const store = (await initialize(['--framing', 'ndjson', ...args, '--pg-schema', freshSchema('i')], env)).store as { root: string; backend: string };
      expect(store.backend).toBe('postgres');
      expect(store.root.startsWith('postgres://postgres@')).toBe(true);
      expect(store.root).not.toContain('hunter2');
    }
  }, 60_000);
});

/** The first answer of `serve args` to initialize. */
async function initialize(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const child = spawn('node', [CLI, 'serve', ...args], { stdio: ['pipe', 'pipe', 'pipe'], cwd: tempDir(), env });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
  await new Promise((resolve) => child.on('close', resolve));
  return (JSON.parse(stdout.split('\n')[0] as string) as { result: Record<string, unknown> }).result;
}

describe('serve: store options', () => {
  it('a file store reports backend "file"; --pg-schema without a PostgreSQL store, or a bad schema name, is a usage error', async () => {
    const dir = tempDir();
    expect(await initialize(['--framing', 'ndjson', '--store', dir], process.env)).toMatchObject({ store: { root: dir, backend: 'file' } });
    expect((await run(['serve', '--store', dir, '--pg-schema', 'x'])).code).toBe(2);
    expect((await run(['serve', '--store', 'postgres://u@localhost/db', '--pg-schema', 'Bad-Name'])).code).toBe(2);
    // a mistyped workspace is refused at start, for either store (with PostgreSQL its scratch
    // directories would otherwise fail every tool/allocateScratch as Internal)
    for (const store of [[], ['--store', 'postgres://u@localhost/db']]) {
      const r = await run(['serve', ...store, '--workspace', path.join(dir, 'missing')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('no such directory');
    }
  }, 60_000);
});
