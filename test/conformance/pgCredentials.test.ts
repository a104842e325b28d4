/**
 * The database password against a server that checks it (scram-sha-256: test/pg/passwordCluster.ts),
 * over the built binary, for each way of giving it without the command line — `--store-env NAME`
 * (the URL with its password in $NAME), PGPASSWORD, PGPASSFILE, ~/.pgpass:
 * - it is in no running process's /proc/PID/cmdline (the sidecar's and its descendants');
 * - it is a registered secret: a record quoting it is refused, and no row of any table of the
 *   store's schema holds it;
 * - no stderr line shows it: not at debug log level, not when the database goes down under a
 *   serving sidecar, not for a wrong password (refused at once: not retryable), not while the
 *   sidecar waits for a database that is not there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freshSchema, pgAvailability } from '../pg/pgServer.js';
import { ROLE, ROLE_PASSWORD, startPasswordCluster, type PasswordCluster } from '../pg/passwordCluster.js';
import { runCli } from '../cli/helpers.js';
import { tempDir } from '../helpers.js';
import { CLI, rejection, SidecarClient } from './harness.js';

const skip = pgAvailability();

/** The command lines of `pid` and of every process under it. */
function commandLines(pid: number): string[] {
  const lines: string[] = [];
  const visit = (p: number) => {
    const cmdline = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
    lines.push(cmdline.split('\0').join(' '));
    for (const tid of fs.readdirSync(`/proc/${p}/task`)) {
      const children = fs.readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').trim();
      for (const c of children ? children.split(/\s+/) : []) visit(Number(c));
    }
  };
  visit(pid);
  return lines;
}

type How = 'store-env' | 'PGPASSWORD' | 'PGPASSFILE' | '~/.pgpass';

describe.skipIf(skip)('the database password: never in argv, logs or the store (password-checking server, built binary)', () => {
  let c: PasswordCluster;
  const running: SidecarClient[] = [];

  beforeAll(async () => {
    c = await startPasswordCluster();
  }, 120_000);
  afterEach(async () => {
    for (const s of running.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill('SIGKILL');
  });
  afterAll(() => c?.destroy());

  /** serve's arguments and environment for `how` (the URL on the command line never has the password). */
  function launch(how: How, schema: string, password = ROLE_PASSWORD): { args: string[]; env: NodeJS.ProcessEnv } {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.PGPASSWORD;
    delete env.PGPASSFILE;
    delete env.SESSION_SIDECAR_STORE;
    const args = ['--pg-schema', schema, '--log-level', 'debug', '--workspace', tempDir('sidecar-pwws-')];
    if (how === 'store-env') {
      env.SS_TEST_STORE = c.url(password);
      return { args: ['--store-env', 'SS_TEST_STORE', ...args], env };
    }
    if (how === 'PGPASSWORD') env.PGPASSWORD = password;
    else {
      // libpq's format; wildcards for the fields that do not matter here.
      const line = `127.0.0.1:${c.port}:*:${ROLE}:${password}\n`;
      if (how === 'PGPASSFILE') {
        const file = path.join(tempDir('sidecar-pgpass-'), 'pgpass');
        fs.writeFileSync(file, line, { mode: 0o600 });
        env.PGPASSFILE = file;
      } else {
        env.HOME = tempDir('sidecar-home-');
        fs.writeFileSync(path.join(env.HOME, '.pgpass'), line, { mode: 0o600 });
      }
    }
    return { args: ['--store', c.url(), ...args], env };
  }

  async function serve(how: How, schema: string): Promise<SidecarClient> {
    const { args, env } = launch(how, schema);
    const s = new SidecarClient({ command: process.execPath, args: [CLI, ...args], env, keepStdout: true });
    running.push(s);
    await s.initialize();
    return s;
  }

  async function rowsHolding(schema: string, text: string): Promise<string[]> {
    const tables = await c.sql<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1', [schema]);
    expect(tables.length).toBeGreaterThan(5);
    const found: string[] = [];
    for (const { t } of tables) {
      const rows = await c.sql(`SELECT * FROM "${schema}"."${t}"`);
      if (JSON.stringify(rows).includes(text)) found.push(t);
    }
    return found;
  }

  for (const how of ['store-env', 'PGPASSWORD', 'PGPASSFILE', '~/.pgpass'] as const) {
    it(`${how}: the sidecar logs in with it; not in any command line; a record quoting it is refused; no row holds it; not on stderr`, async () => {
      const schema = freshSchema('pwc');
      const s = await serve(how, schema);
      // Logged in as the password role (the server checked the password): it owns the schema it created.
      const [owner] = await c.sql<{ owner: string }>('SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = $1', [schema]);
      expect(owner?.owner).toBe(ROLE);
      const lines = commandLines(s.child.pid!);
      expect(lines[0]).toContain('cli.js');
      for (const line of lines) expect(line).not.toContain(ROLE_PASSWORD);
      const { sessionId } = await s.create({ title: 'quoting the database password' });
      const err = await rejection(s.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: `the db password is ${ROLE_PASSWORD}, keep it` } }] }));
      expect(err.data?.kind).toBe('SecretRejected');
      expect(JSON.stringify(err)).not.toContain(ROLE_PASSWORD);
      await s.append({ sessionId, records: [{ kind: 'event', type: 'clean', payload: null }] });
      await s.shutdown();
      expect(await rowsHolding(schema, ROLE_PASSWORD)).toEqual([]);
      expect(await rowsHolding(schema, 'clean')).toContain('records');
      expect(s.stderr).not.toContain(ROLE_PASSWORD);
    }, 60_000);
  }

  it('the database going down under a serving sidecar (store-env): the errors and stderr never show the password', async () => {
    const schema = freshSchema('pwc');
    const s = await serve('store-env', schema);
    const { sessionId } = await s.create({ title: 'then the server stops' });
    c.stop();
    try {
      const err = await rejection(s.append({ sessionId, records: [{ kind: 'event', type: 'x', payload: null }] }));
      expect(err.data?.kind).toBe('Unavailable');
      expect(JSON.stringify(err)).not.toContain(ROLE_PASSWORD);
      await new Promise((r) => setTimeout(r, 500)); // the background connections' errors, logged
    } finally {
      c.start();
    }
    await s.kill('SIGTERM');
    expect(s.stderr).toMatch(/Unavailable/);
    expect(s.stderr).not.toContain(ROLE_PASSWORD);
  }, 60_000);

  for (const how of ['store-env', 'PGPASSWORD', 'PGPASSFILE', '~/.pgpass'] as const) {
    it(`${how}: a wrong password ends the start at once, one line naming the authentication failure, neither password shown`, async () => {
      const wrong = `${ROLE_PASSWORD}-wrong`;
      const { args, env } = launch(how, freshSchema('pwc'), wrong);
      const started = Date.now();
      const r = await runCli(args, { env });
      expect(r.code).toBe(1);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(r.stderr).toMatch(/cannot start: .*authentication/i);
      expect(r.stderr + r.stdout).not.toContain(wrong);
      expect(r.stderr + r.stdout).not.toContain(ROLE_PASSWORD);
    }, 60_000);
  }

  it('a database that is not there (store-env): waited for, then one line without the password', async () => {
    const port = await freePort();
    const env = { ...process.env, SS_TEST_STORE: `postgres://${ROLE}:${ROLE_PASSWORD}@127.0.0.1:${port}/postgres`, SESSION_SIDECAR_PG_START_WAIT_MS: '1500' };
    const r = await runCli(['--store-env', 'SS_TEST_STORE', '--log-level', 'debug', '--workspace', tempDir('sidecar-pwws-')], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/waiting up to/);
    expect(r.stderr).toMatch(/cannot start: .*Unavailable|cannot start: .*(reach|connect)/i);
    expect(r.stderr + r.stdout).not.toContain(ROLE_PASSWORD);
  }, 60_000);

  it('the CLI by --store-env: pg migrate, list and verify log in with the URL from the environment and print no password', async () => {
    const schema = freshSchema('pwc');
    const env = { SS_TEST_STORE: c.url(ROLE_PASSWORD) };
    for (const args of [['pg', 'migrate'], ['list', '--json'], ['verify'], ['pg', 'status']]) {
      const r = await runCli([...args, '--store-env', 'SS_TEST_STORE', '--pg-schema', schema], { env });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(ROLE_PASSWORD);
    }
    const bad = await runCli(['list', '--store-env', 'SS_TEST_STORE', '--pg-schema', schema], { env: { SS_TEST_STORE: c.url(`${ROLE_PASSWORD}-wrong`) } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/authentication/i);
    expect(bad.stdout + bad.stderr).not.toContain(ROLE_PASSWORD);
  }, 60_000);
});
