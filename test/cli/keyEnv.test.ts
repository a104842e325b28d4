import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { explain, makeStore, runCli } from './helpers.js';

/**
 * An encrypted store's key need not be repeated on every command (issue 31, finding 6):
 * SESSION_SIDECAR_ENCRYPTION_KEY_ENV names the variable that holds it, or
 * SESSION_SIDECAR_ENCRYPTION_KEY_FILE gives the key file's path; an option still wins; errors
 * name the variable, never the key.
 */
const KEY = Buffer.alloc(32, 9).toString('base64');

describe('the store key from the environment', () => {
  it('list and show read an encrypted store with SESSION_SIDECAR_ENCRYPTION_KEY_ENV or _FILE; without, they are refused', async () => {
    const fx = await makeStore();
    expect((await runCli(['rekey', '--yes', '--store', fx.root, '--to-env', 'MY_KEY'], { env: { MY_KEY: KEY } })).code).toBe(0);
    const refused = await runCli(['list', '--store', fx.root]);
    expect(refused.code).not.toBe(0);
    const byEnv = await runCli(['list', '--store', fx.root], { env: { MY_KEY: KEY, SESSION_SIDECAR_ENCRYPTION_KEY_ENV: 'MY_KEY' } });
    expect(byEnv.code, explain(byEnv)).toBe(0);
    expect(byEnv.stdout).toContain(fx.chat);
    const file = path.join(tempDir(), 'store.key');
    fs.writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    const byFile = await runCli(['show', fx.chat, '--store', fx.root], { env: { SESSION_SIDECAR_ENCRYPTION_KEY_FILE: file } });
    expect(byFile.code, explain(byFile)).toBe(0);
    expect(byFile.stdout).toContain('Fix the build');
    const unset = await runCli(['list', '--store', fx.root], { env: { SESSION_SIDECAR_ENCRYPTION_KEY_ENV: 'NOT_SET_HERE' } });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('$SESSION_SIDECAR_ENCRYPTION_KEY_ENV NOT_SET_HERE: the variable is not set');
    expect(unset.stderr).not.toContain(KEY);
    // an option wins over the environment
    const option = await runCli(['list', '--store', fx.root, '--encryption-key-env', 'MY_KEY'], { env: { MY_KEY: KEY, SESSION_SIDECAR_ENCRYPTION_KEY_ENV: 'NOT_SET_HERE' } });
    expect(option.code, explain(option)).toBe(0);
  });
});
