import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/backends/postgres/schema.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { loginRole } from '../backends/postgres/pgRoles.js';
import { explain, runCli } from './helpers.js';
import { PASSWORD, schemaExists, withPassword } from './pgCliKit.js';

const KNOWN = Math.max(...MIGRATIONS.map((m) => m.version));

/** `session-sidecar pg migrate` and `pg status` through the built binary (npm run build first). */
describe.skipIf(pgSkip)('session-sidecar pg migrate / status', () => {
  const noPassword = (r: { stdout: string; stderr: string }) => {
    expect(r.stdout).not.toContain(PASSWORD);
    expect(r.stderr).not.toContain(PASSWORD);
  };

  it('status of a missing store, migrate creates it and prints what it applied, a second migrate has nothing to do', async () => {
    const url = withPassword(await pgUrl());
    const schema = freshSchema('pgm');
    const store = ['--store', url, '--pg-schema', schema];
    const none = await runCli(['pg', 'status', ...store]);
    expect(none.code, explain(none)).toBe(1);
    expect(none.stdout).toContain('no session store');
    expect(await schemaExists(await pgUrl(), schema)).toBe(false); // status changes nothing

    const r = await runCli(['pg', 'migrate', ...store]);
    expect(r.code, explain(r)).toBe(0);
    for (const m of MIGRATIONS) expect(r.stdout).toContain(`applied ${m.version}: ${m.name}`);
    expect(r.stdout).toContain(`applied 6: ${MIGRATIONS.find((m) => m.version === 6)!.name} (index dropped concurrently)\n`);
    expect(r.stdout).toContain(`the schema is at version ${KNOWN}`);
    expect(r.stdout).toContain(`(schema ${schema})`);
    noPassword(r);

    const again = await runCli(['pg', 'migrate', '--json', ...store]);
    expect(again.code, explain(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ schema, applied: [], version: KNOWN, known: KNOWN });
    noPassword(again);

    const st = await runCli(['pg', 'migrate', '--status', ...store]);
    expect(st.code, explain(st)).toBe(0);
    expect(st.stdout).toMatch(new RegExp(`schema version: +${KNOWN}\\n`));
    expect(st.stdout).toMatch(new RegExp(`this binary knows: ${KNOWN}\\n`));
    expect(st.stdout).toMatch(/can serve: +yes\n/);
    const js = await runCli(['pg', 'status', '--json', ...store]);
    expect(js.code, explain(js)).toBe(0);
    expect(JSON.parse(js.stdout)).toMatchObject({ state: 'current', version: KNOWN, known: KNOWN, canServe: true, missing: [] });
    noPassword(js);
  }, 120_000);

  it('a role that may not create the schema: one line naming the privilege, exit 1; usage errors exit 2; --help', async () => {
    const schema = freshSchema('pgm');
    const { url } = await loginRole(schema, 'dml');
    const r = await runCli(['pg', 'migrate', '--store', url.replace(/^postgres:\/\/([^@]+)@/, `postgres://$1:${PASSWORD}@`), '--pg-schema', schema]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('CREATE privilege on database postgres');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    noPassword(r);

    const file = await runCli(['pg', 'migrate', '--store', '/tmp/not-a-pg-store']);
    expect(file.code, explain(file)).toBe(2);
    expect(file.stderr).toContain('pg needs a PostgreSQL store');
    const bad = await runCli(['pg', 'frobnicate', '--store', await pgUrl()]);
    expect(bad.code, explain(bad)).toBe(2);
    const missing = await runCli(['pg']);
    expect(missing.code, explain(missing)).toBe(2);
    for (const args of [['pg', '--help'], ['pg', 'migrate', '-h'], ['help', 'pg']]) {
      const help = await runCli(args);
      expect(help.code, explain(help)).toBe(0);
      expect(help.stdout).toMatch(/^Usage: session-sidecar pg migrate --store URL/);
      expect(help.stderr).toBe('');
    }
    const top = await runCli(['--help']);
    expect(top.stdout).toMatch(/^ {2}pg +\S/m);
  }, 120_000);
});
