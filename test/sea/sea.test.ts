/**
 * The single executable (`npm run build:sea`, scripts/sea.mjs): dist/sea/session-sidecar, built
 * here unless one newer than every source it is made of is already there. A copy of it alone in
 * an empty directory, with no `node` on PATH, must behave as `node dist/src/cli.js` does: the
 * same output and exit code for `--help`, `--version`, every subcommand's `--help` and a few real
 * commands on a store; the whole conformance suite in both framings (and one scenario on a
 * PostgreSQL store, so the bundled `pg` is exercised); nothing on stderr when serving; and every
 * client finds it — through SESSION_SIDECAR_COMMAND (the TS client, the Python unittest suite,
 * the Go tests, the Rust crate's cargo test) and on PATH (Python). 65 s alone on 2 busy cores (the
 * Rust tests ~10 s more once the crate is built), 87 s inside the whole `npm
 * test` (the conformance suite ~40 s of it, the Go and Python suites ~10 s each, the build ~5 s
 * more when it runs); the tests run one after another in this file. No timing is asserted.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { hasPython311 } from '../pythonRun.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const BUILT = path.join(ROOT, 'dist/sea/session-sidecar');
const CI = process.env.CI === 'true';
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
const explain = (r: Run) => `exit ${r.code} (signal ${r.signal})\n--- stdout\n${r.stdout.slice(-20_000)}\n--- stderr\n${r.stderr.slice(-20_000)}`;

/** The newest modification time of the files the executable is made of. */
function newestSource(): number {
  let newest = 0;
  const visit = (p: string) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['src', 'protocol', 'scripts/sea.mjs', 'package.json', 'package-lock.json', 'tsconfig.json']) visit(path.join(ROOT, p));
  return newest;
}

/** dist/sea/session-sidecar, built unless a fresh one (newer than its sources, of this version) is there. */
async function executable(): Promise<string> {
  const st = fs.statSync(BUILT, { throwIfNoEntry: false });
  if (st && st.mtimeMs > newestSource() && spawnSync(BUILT, ['--version'], { encoding: 'utf8' }).stdout?.trim() === VERSION) return BUILT;
  const b = await run(process.execPath, [path.join(ROOT, 'scripts/sea.mjs')]);
  expect(b.code, `npm run build:sea failed\n${explain(b)}`).toBe(0);
  return BUILT;
}

let work: string;
/** The copy under test: alone in a directory, nothing beside it. */
let exe: string;
/** An environment with neither node nor the repository on PATH. */
let bare: NodeJS.ProcessEnv;
const pgSkip = pgAvailability();

beforeAll(async () => {
  expect(fs.existsSync(CLI), 'run `npm run build` first').toBe(true);
  const built = await executable();
  work = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'sidecar-sea-'));
  fs.mkdirSync(path.join(work, 'bin'));
  exe = path.join(work, 'bin', 'session-sidecar');
  fs.copyFileSync(built, exe);
  fs.chmodSync(exe, 0o755);
  const { PATH: _path, SESSION_SIDECAR_COMMAND: _cmd, ...rest } = process.env;
  bare = { ...rest, PATH: '/nonexistent' };
}, 180_000);

afterAll(async () => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
  await releaseSharedCluster();
});

let stores = 0;
const newStore = () => path.join(work, `store-${++stores}`);

describe('the single executable (dist/sea/session-sidecar)', () => {
  it('answers every command as node dist/src/cli.js does: output, stderr and exit code', async () => {
    const help = await run(process.execPath, [CLI, '--help']);
    const commands = [...help.stdout.split('Commands')[1]!.split('Options')[0]!.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    expect(commands).toContain('conformance');
    expect(commands.length).toBeGreaterThanOrEqual(10);
    // a store with one session, made by the node binary
    const store = newStore();
    const c = await SidecarClient.start({ store, command: process.execPath, args: [CLI] });
    const { sessionId } = await c.create({ title: 'one executable' });
    await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hello from node' } }] });
    await c.shutdown();
    const cases = [
      ['--version'], ['-v'], ['--help'], ['-h'], ['serve', '--help'], ['no-such-command'], ['serve', '--framing', 'nope'], ['conformance', '--list'],
      ...commands.map((cmd) => [cmd, '--help']),
      ['list', '--store', store], ['list', '--store', store, '--json'], ['list', '--store', store, '--jq', '.[].title'], ['show', sessionId, '--store', store], ['export', sessionId, '--store', store],
      ['verify', '--store', store], ['stats', '--store', store], ['search', 'hello', '--store', store], ['trash', 'list', '--store', store],
    ];
    for (const args of cases) {
      const [want, got] = await Promise.all([run(process.execPath, [CLI, ...args]), run(exe, args, { cwd: work, env: bare })]);
      expect({ args, code: got.code, stdout: got.stdout, stderr: got.stderr }).toEqual({ args, code: want.code, stdout: want.stdout, stderr: want.stderr });
    }
    const v = await run(exe, ['--version'], { env: bare });
    expect(v.stdout).toBe(`${VERSION}\n`);
  }, 120_000);

  it.each(['ndjson', 'lsp'] as const)('serves over %s with nothing on stderr (no SEA warning), found through SESSION_SIDECAR_COMMAND by the TS client', async (framing) => {
    const c = new SidecarClient({ store: newStore(), framing, keepStdout: true, env: { ...bare, SESSION_SIDECAR_COMMAND: `'${exe}' --log-level warn` } });
    expect(c.child.spawnfile).toBe(exe);
    const init = await c.initialize();
    expect(init).toMatchObject({ protocolVersion: 1 });
    const { sessionId } = await c.create({ title: 'sea' });
    expect((await c.read({ sessionId })).records).toEqual([]);
    expect(await c.shutdown()).toEqual({ code: 0, signal: null });
    expect(c.stderr).toBe('');
    const out = Buffer.concat(c.stdout).toString('utf8');
    if (framing === 'ndjson') for (const line of out.trimEnd().split('\n')) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    else expect(out.startsWith('Content-Length: ')).toBe(true);
  });

  it('passes the conformance suite in both framings, 0 failures', async () => {
    const r = await run(process.execPath, [CLI, 'conformance', '--framing', 'both', '--', exe, 'serve', '--store', '{store}'], { env: bare });
    expect(r.stdout.split('\n').filter((l) => l.startsWith('FAIL')), explain(r)).toEqual([]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
  }, 300_000);

  it.skipIf(pgSkip)('serves a PostgreSQL store (the bundled pg): the sessions scenario passes', async () => {
    const url = (await sharedCluster()).url;
    const server = [exe, 'serve', '--workspace', '{store}', '--store', url, '--pg-schema', `${freshSchema('sea')}_{store-id}`];
    const r = await run(process.execPath, [CLI, 'conformance', '--framing', 'ndjson', '--scenario', 'sessions', '--', ...server], { env: bare });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^PASS {2}ndjson sessions:create$/m);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
  }, 180_000);

  const python = hasPython311();
  it.skipIf(!python && !CI)('the Python client: its unittest suite through SESSION_SIDECAR_COMMAND, and session-sidecar found on PATH', async () => {
    expect(python, 'CI=true: python3 >= 3.11 must be installed').toBe(true);
    const py: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' };
    const r = await run('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', 'tests'], {
      cwd: path.join(ROOT, 'clients/python'), env: { ...py, SESSION_SIDECAR_COMMAND: JSON.stringify(exe), SIDECAR_TEST_FRAMING: 'ndjson' },
    });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toMatch(/^Ran ([3-9]\d|\d{3,}) tests? in/m);
    expect(r.stderr).toMatch(/^OK/m);
    const onPath = [
      'import sys; sys.path.insert(0, "src")',
      'from session_sidecar import Sidecar',
      `with Sidecar(store=${JSON.stringify(newStore())}) as sc:`,
      '    sid = sc.create(title="on PATH")["sessionId"]',
      '    print(sc.command[0], len(sc.read(sid)["records"]))',
    ].join('\n');
    const { SESSION_SIDECAR_COMMAND: _cmd, ...noCommand } = py;
    const p = await run('python3', ['-c', onPath], { cwd: path.join(ROOT, 'clients/python'), env: { ...noCommand, PATH: `${path.dirname(exe)}:${process.env.PATH}` } });
    expect(p.code, explain(p)).toBe(0);
    expect(p.stdout.trim()).toBe(`${exe} 0`);
  }, 180_000);

  /** As test/clients/go.test.ts: without HOME, Go's cache and GOPATH go to the temp dir. */
  const goDirs = (): Record<string, string> => (process.env.HOME || process.env.GOCACHE ? {}
    : { GOCACHE: path.join(os.tmpdir(), 'session-sidecar-go-cache'), GOPATH: path.join(os.tmpdir(), 'session-sidecar-gopath') });
  const go = ['go', '/usr/local/go/bin/go'].find((g) => spawnSync(g, ['version']).status === 0);
  it.skipIf(go === undefined && !CI)('the Go client: go test through SESSION_SIDECAR_COMMAND', async () => {
    expect(go, 'CI=true: go must be installed').toBeDefined();
    const r = await run(go!, ['test', '-count=1', './...'], {
      cwd: path.join(ROOT, 'clients/go'), env: { ...process.env, ...goDirs(), GOTOOLCHAIN: 'local', GOFLAGS: '', SESSION_SIDECAR_COMMAND: JSON.stringify(exe) },
    });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+github\.com\/session-sidecar\/session-sidecar\/clients\/go\s/m);
  }, 300_000);

  const cargo = spawnSync('cargo', ['--version']).status === 0;
  it.skipIf(!cargo && !CI)('the Rust client: cargo test through SESSION_SIDECAR_COMMAND', async () => {
    expect(cargo, 'CI=true: cargo must be installed').toBe(true);
    const r = await run('cargo', ['test', '--manifest-path', path.join(ROOT, 'clients/rust/Cargo.toml')], {
      cwd: ROOT, env: { ...process.env, SESSION_SIDECAR_COMMAND: JSON.stringify(exe) },
    });
    expect(r.code, explain(r)).toBe(0);
    const passed = [...r.stdout.matchAll(/^test result: ok\. (\d+) passed; 0 failed/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(passed, explain(r)).toBeGreaterThanOrEqual(30);
  }, 600_000);
});
