import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 31, finding 8: `session-sidecar doctor` over the built binary. A healthy store: exit 0.
 * A store with a journal of mode 0644, a lease left by a SIGKILLed sidecar, a deleted index
 * entry and a refused config file: exit 1, each a problem with the command that fixes it — and
 * after those commands, healthy again. An encrypted store without its key, and PostgreSQL:
 * unreachable (no password shown), a schema with no store, then a served one with privileges.
 */
type Finding = { status: string; check: string; message: string; file?: string; advice?: string };
type Report = { healthy: boolean; kind: string; findings: Finding[] };

const doctor = async (args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) => {
  const r = await runCli(['doctor', '--json', ...args], opts);
  return { r, report: JSON.parse(r.stdout) as Report };
};
const problems = (rep: Report) => rep.findings.filter((f) => f.status === 'problem');

describe('doctor (the built binary)', () => {
  it('names each problem with its fix; after the fixes the store is healthy', async () => {
    const ws = tempDir('sidecar-doctor-');
    const root = path.join(ws, '.session-sidecar');
    const c = await startSidecar({ store: root });
    const { sessionId: a } = await c.create({ title: 'a' });
    await c.request('session/append', { sessionId: a, records: [msg('user', 'hello')] });
    const { sessionId: b } = await c.create({ title: 'b' });
    await c.request('session/append', { sessionId: b, records: [msg('user', 'held')] });
    await c.request('session/close', { sessionId: a });
    const healthy = await doctor([], { cwd: ws });
    expect(healthy.r.code, explain(healthy.r)).toBe(0);
    expect(healthy.report.healthy).toBe(true);
    expect(healthy.report.findings.map((f) => f.check)).toEqual(expect.arrayContaining(['config', 'disk', 'encryption', 'store']));
    await c.kill('SIGKILL'); // b's lease stays behind

    fs.chmodSync(path.join(root, 'sessions', a, 'journal.jsonl'), 0o644);
    fs.rmSync(path.join(root, 'index', `${a}.json`));
    fs.writeFileSync(path.join(root, 'config.json'), '{"logLevel": "loud"}', { mode: 0o600 });
    const sick = await doctor([], { cwd: ws });
    expect(sick.r.code, explain(sick.r)).toBe(1);
    const found = problems(sick.report);
    const about = (check: string, text: RegExp) => found.find((f) => f.check === check && text.test(f.message));
    expect(about('permissions', /file mode|mode 644/)?.advice).toMatch(/^chmod 600 /);
    expect(about('lease', /left by a process that is gone/)?.advice).toMatch(/next sidecar that opens the session takes the lease over/);
    expect(about('index', /no index entry/)?.advice).toMatch(/session-sidecar reindex --store /);
    expect(about('config', /logLevel/)?.advice).toMatch(/fix or remove it/);
    const text = await runCli(['doctor'], { cwd: ws });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/PROBLEM permissions: .*\n\s+-> chmod 600 /);
    expect(text.stdout).toMatch(/\d+ problems found/);

    // the fixes, as the advice says
    fs.chmodSync(path.join(root, 'sessions', a, 'journal.jsonl'), 0o600);
    fs.rmSync(path.join(root, 'config.json'));
    const reindex = await runCli(['reindex', '--store', root]); // takes b's dead lease over, writes a's entry
    expect(reindex.code, explain(reindex)).toBe(0);
    const well = await doctor([], { cwd: ws });
    expect(problems(well.report), explain(well.r)).toEqual([]);
    expect(well.r.code).toBe(0);
  }, 60_000);

  it('an encrypted store without its key, a key for a plaintext store, a key that does not load', async () => {
    const root = path.join(tempDir('sidecar-doctor-'), 'store');
    const c = await startSidecar({ store: root });
    await c.create({ title: 'x' });
    await c.shutdown();
    const K = Buffer.alloc(32, 3).toString('base64');
    const plainWithKey = await doctor(['--store', root, '--encryption-key-env', 'K'], { env: { K } });
    expect(plainWithKey.r.code).toBe(1);
    expect(problems(plainWithKey.report)[0]?.advice).toMatch(/session-sidecar rekey --store .* --to-env NAME --yes/);
    expect((await runCli(['rekey', '--store', root, '--to-env', 'K', '--yes'], { env: { K } })).code).toBe(0);
    const noKey = await doctor(['--store', root]);
    expect(noKey.r.code).toBe(1);
    expect(problems(noKey.report)[0]).toMatchObject({ check: 'encryption', message: expect.stringMatching(/encrypted and no key/) });
    const bad = await doctor(['--store', root, '--encryption-key-env', 'K'], { env: { K: 'not a key' } });
    expect(bad.r.code).toBe(1);
    expect(bad.r.stdout).not.toContain('not a key');
    const good = await doctor(['--store', root, '--encryption-key-env', 'K'], { env: { K } });
    expect(good.r.code, explain(good.r)).toBe(0);
    expect(good.report.findings).toEqual(expect.arrayContaining([expect.objectContaining({ check: 'encryption', status: 'ok', message: 'encrypted, under the key given' })]));
  }, 60_000);
});

describe.skipIf(pgSkip)('doctor of a PostgreSQL store (the built binary)', () => {
  it('unreachable (no password shown); a schema with no store; a served one reachable, current, with every privilege', async () => {
    const unreachable = await doctor(['--store', 'postgres://someone:hunter2secret@127.0.0.1:1/db']);
    expect(unreachable.r.code).toBe(1);
    expect(problems(unreachable.report)[0]).toMatchObject({ check: 'postgres', message: expect.stringMatching(/cannot reach/) });
    expect(unreachable.r.stdout + unreachable.r.stderr).not.toContain('hunter2secret');

    const url = await pgUrl();
    const schema = freshSchema('doctor');
    const empty = await doctor(['--store', url, '--pg-schema', schema]);
    expect(empty.r.code, explain(empty.r)).toBe(1);
    expect(problems(empty.report)[0]?.advice).toMatch(/session-sidecar pg migrate/);

    const c = await startSidecar({ store: url, args: ['--pg-schema', schema, '--workspace', tempDir('sidecar-doctor-ws-')] });
    await c.create({ title: 'pg' });
    await c.shutdown();
    const served = await doctor(['--store', url, '--pg-schema', schema]);
    expect(served.r.code, explain(served.r)).toBe(0);
    expect(served.report.kind).toBe('postgres');
    expect(served.report.findings.filter((f) => f.status === 'ok').map((f) => f.check)).toEqual(['postgres', 'schema', 'privileges']);
  }, 90_000);
});
