/**
 * `--store-env NAME` (the store read from $NAME) over the built binary, on a directory store:
 * serve and every command taking --store find the same store as with --store, as do
 * `--from-store-env`/`--to-store-env` for migrate and `--store-env` before the command name;
 * --store and --store-env exclude each other; an unset or empty variable is an error naming it;
 * what looks like a value instead of a name is refused without being quoted. (The PostgreSQL
 * side, with a password-checking server: test/conformance/pgCredentials.test.ts.)
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { tempDir } from '../helpers.js';
import { CLI, explain, makeStore, runCli } from './helpers.js';

describe('--store-env NAME', () => {
  it('serve takes the store directory from $NAME (initialize names it); list, show, verify and stats read it; before the command name too', async () => {
    const f = await makeStore();
    const env = { SS_DIR: f.root };
    const s = new SidecarClient({ command: process.execPath, args: [CLI, '--store-env', 'SS_DIR'], env: { ...process.env, ...env } });
    try {
      const init = await s.initialize();
      expect((init as { store: { root: string } }).store.root).toBe(f.root);
      const listed = await s.request<{ sessions: Array<{ sessionId: string }> }>('session/list', {});
      expect(listed.sessions.map((x) => x.sessionId)).toContain(f.chat);
    } finally {
      await s.shutdown();
    }
    const viaStore = await runCli(['list', '--json', '--store', f.root]);
    for (const args of [['list', '--json', '--store-env', 'SS_DIR'], ['--store-env', 'SS_DIR', 'list', '--json']]) {
      const r = await runCli(args, { env });
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toBe(viaStore.stdout);
    }
    for (const args of [['show', f.chat], ['verify'], ['stats']]) {
      const r = await runCli([...args, '--store-env', 'SS_DIR'], { env });
      expect(r.code, explain(r)).toBe(0);
    }
  });

  it('migrate --from-store-env / --to-store-env', async () => {
    const f = await makeStore();
    const to = path.join(tempDir('sidecar-storeenv-'), 'copy');
    const r = await runCli(['migrate', '--yes', '--from-store-env', 'SS_FROM', '--to-store-env', 'SS_TO'], { env: { SS_FROM: f.root, SS_TO: to } });
    expect(r.code, explain(r)).toBe(0);
    const copied = await runCli(['list', '--json', '--store', to]);
    expect(copied.stdout).toContain(f.chat);
  });

  it('usage errors: both ways at once, an unset or empty variable (named), a value given as the name (not quoted); serve too', async () => {
    const f = await makeStore();
    const secretish = 'postgres://u:Pw-not-a-name-93kq@db.example/x';
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [['list', '--store', f.root, '--store-env', 'SS_DIR'], { SS_DIR: f.root }, /list: --store and --store-env exclude each other/],
      [['list', '--store-env', 'SS_UNSET_VAR'], {}, /list: --store-env SS_UNSET_VAR: the environment variable SS_UNSET_VAR is not set/],
      [['list', '--store-env', 'SS_EMPTY'], { SS_EMPTY: '' }, /list: --store-env SS_EMPTY: the environment variable SS_EMPTY is empty/],
      [['list', '--store-env', secretish], {}, /list: --store-env takes the NAME of an environment variable/],
      [['list', '--store-env', 'SS_DIR', '--workspace', f.root], { SS_DIR: f.root }, /--store-env and --workspace exclude each other/],
      [['pg', 'status', '--store-env', 'SS_UNSET_VAR'], {}, /pg: --store-env SS_UNSET_VAR: the environment variable SS_UNSET_VAR is not set/],
      [['migrate', '--from', f.root, '--from-store-env', 'SS_DIR', '--to', '/nowhere'], { SS_DIR: f.root }, /migrate: --from and --from-store-env exclude each other/],
      [['migrate', '--from', f.root, '--to-store-env', 'SS_UNSET_VAR'], {}, /migrate: --to-store-env SS_UNSET_VAR: the environment variable SS_UNSET_VAR is not set/],
      [['--store-env', 'SS_UNSET_VAR'], {}, /^session-sidecar: --store-env SS_UNSET_VAR: the environment variable SS_UNSET_VAR is not set\n/],
      [['--store', f.root, '--store-env', 'SS_DIR'], { SS_DIR: f.root }, /^session-sidecar: --store and --store-env exclude each other/],
      [['--store-env', secretish], {}, /^session-sidecar: --store-env takes the NAME of an environment variable/],
      [['--store-env', 'SS_DIR', '--workspace', f.root], { SS_DIR: f.root }, /^session-sidecar: --store-env and --workspace exclude each other/],
      [['--store', 'postgres://u@h/db', '--pg-listen-url-env', 'SS_UNSET_VAR'], {}, /--pg-listen-url-env SS_UNSET_VAR: the environment variable SS_UNSET_VAR is not set/],
    ];
    for (const [args, env, message] of cases) {
      const r = await runCli(args, { env });
      expect(r.code, `${args.join(' ')}\n${explain(r)}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr + r.stdout).not.toContain('Pw-not-a-name-93kq');
    }
  });

  it('--help of serve and of a command names --store-env', async () => {
    for (const args of [['--help'], ['list', '--help'], ['pg', '--help'], ['migrate', '--help']]) {
      const r = await runCli(args);
      expect(r.stdout, args.join(' ')).toMatch(/--(from-)?store-env NAME/);
    }
  });
});
