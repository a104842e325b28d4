import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { explain, runCli } from './helpers.js';

/**
 * Issue 31, finding 6, over the built binary: the config files — the workspace's
 * .session-sidecar/config.json and $XDG_CONFIG_HOME/session-sidecar/config.json — give the store
 * and the key source, with the documented precedence flag > environment > workspace > user; a
 * file holding a key (not the name of its source) is refused, and so is one writable by others,
 * each with an error naming the file and no secret.
 */
const KEY = Buffer.alloc(32, 5).toString('base64');

function writeConfig(file: string, values: unknown, mode = 0o600): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(values), { mode });
  fs.chmodSync(file, mode);
}

async function storeWith(title: string): Promise<string> {
  const root = path.join(tempDir('sidecar-config-'), 'store');
  const c = await startSidecar({ store: root });
  await c.create({ title });
  await c.shutdown();
  return root;
}

const titles = (stdout: string) => (JSON.parse(stdout) as Array<{ title: string }>).map((s) => s.title);

describe('config files (the built binary)', () => {
  it('store precedence: --store > $SESSION_SIDECAR_STORE > workspace file > user file', async () => {
    const [flag, envStore, wsStore, userStore] = (await Promise.all(['flag', 'env', 'workspace', 'user'].map(storeWith))) as [string, string, string, string];
    const ws = tempDir('sidecar-config-ws-');
    const xdg = tempDir('sidecar-config-xdg-');
    const env = { XDG_CONFIG_HOME: xdg, SESSION_SIDECAR_STORE: '' };
    writeConfig(path.join(xdg, 'session-sidecar', 'config.json'), { store: userStore });
    const list = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(['list', '--json', 'title', ...args], { cwd: ws, env: { ...env, ...extra } });
    let r = await list([]);
    expect(r.code, explain(r)).toBe(0);
    expect(titles(r.stdout)).toEqual(['user']);
    writeConfig(path.join(ws, '.session-sidecar', 'config.json'), { store: wsStore });
    expect(titles((await list([])).stdout)).toEqual(['workspace']);
    expect(titles((await list([], { SESSION_SIDECAR_STORE: envStore })).stdout)).toEqual(['env']);
    expect(titles((await list(['--store', flag], { SESSION_SIDECAR_STORE: envStore })).stdout)).toEqual(['flag']);
  }, 60_000);

  it('the key source from the workspace file (a variable name) opens an encrypted store; a file holding the key itself, or writable by others, is refused', async () => {
    const root = await storeWith('secret');
    expect((await runCli(['rekey', '--store', root, '--to-env', 'MY_KEY', '--yes'], { env: { MY_KEY: KEY } })).code).toBe(0);
    const ws = tempDir('sidecar-config-ws-');
    const file = path.join(ws, '.session-sidecar', 'config.json');
    writeConfig(file, { store: root, encryptionKeyEnv: 'MY_KEY' });
    const env = { XDG_CONFIG_HOME: tempDir('sidecar-config-xdg-'), MY_KEY: KEY };
    const ok = await runCli(['list', '--json', 'title'], { cwd: ws, env });
    expect(ok.code, explain(ok)).toBe(0);
    expect(titles(ok.stdout)).toEqual(['secret']);

    writeConfig(file, { store: root, encryptionKeyEnv: KEY });
    const holdsKey = await runCli(['list'], { cwd: ws, env });
    expect(holdsKey.code, explain(holdsKey)).toBe(1);
    expect(holdsKey.stderr).toContain(file);
    expect(holdsKey.stderr + holdsKey.stdout).not.toContain(KEY);

    writeConfig(file, { store: root, encryptionKeyEnv: 'MY_KEY' }, 0o666);
    const open = await runCli(['list'], { cwd: ws, env });
    expect(open.code, explain(open)).toBe(1);
    expect(open.stderr).toMatch(/writable by others/);
    const served = await runCli(['doctor', '--json'], { cwd: ws, env });
    expect(served.code).toBe(1);
    expect(served.stdout).toMatch(/config file refused/);
  }, 60_000);
});
