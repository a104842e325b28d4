import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { StoreKey } from '../../src/durable/storeKey.js';
import { tempDir } from '../helpers.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CLI, startSidecar } from '../conformance/harness.js';
import { explain, runCli } from '../cli/helpers.js';

const KEY = randomBytes(32).toString('base64');
const env = { ...process.env, K: KEY };
const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

/**
 * Issue 25 finding 4: a sidecar started before a rekey kept its old key and created sessions
 * after it, whose acknowledged records no key could read. Every serving sidecar holds the store's
 * kernel lock shared, for as long as it lives; a rekey takes it exclusively.
 */
describe('rekey and serving sidecars exclude each other', () => {
  it('a rekey refuses to start while a sidecar serves the store, even one with no session open; nothing changes', async () => {
    const store = path.join(tempDir(), 'store');
    const a = await startSidecar({ store });
    const { sessionId } = await a.create();
    await a.append({ sessionId, records: [msg('before')] });
    await a.close(sessionId); // no session open: only the store lock stands for the sidecar now
    const refused = await runCli(['rekey', '--yes', '--store', store, '--to-env', 'K'], { env });
    expect(refused.code, explain(refused)).not.toBe(0);
    expect(refused.stderr).toMatch(/a sidecar is serving this store/);
    expect(fs.existsSync(path.join(store, 'encryption.json'))).toBe(false);
    // The sidecar writes on under the store as it was, and a new session is readable afterwards.
    const { sessionId: later } = await a.create();
    await a.append({ sessionId: later, records: [msg('after the refused rekey')] });
    await a.shutdown();
    const done = await runCli(['rekey', '--yes', '--store', store, '--to-env', 'K'], { env });
    expect(done.code, explain(done)).toBe(0);
    const shown = await runCli(['show', later, '--store', store, '--encryption-key-env', 'K'], { env });
    expect(shown.stdout).toContain('after the refused rekey');
    const verified = await runCli(['verify', '--store', store, '--encryption-key-env', 'K'], { env });
    expect(verified.code, explain(verified)).toBe(0);
  }, 60_000);

  it('a sidecar refuses to start while a rekey runs (KeyMismatch: the store is being rekeyed)', async () => {
    const store = path.join(tempDir(), 'store');
    const seed = await startSidecar({ store });
    const { sessionId } = await seed.create();
    for (let i = 0; i < 20; i++) await seed.append({ sessionId, records: [msg(`r${i}`)] });
    await seed.shutdown();
    // The rekey, each of its renames delayed (strace), so that it is surely still running when the sidecar starts.
    const rekey = spawn('strace', ['-f', '-o', '/dev/null', '-e', 'trace=rename,renameat,renameat2', '-e', 'inject=rename,renameat,renameat2:delay_enter=1500000',
      process.execPath, CLI, 'rekey', '--yes', '--store', store, '--to-env', 'K'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const rekeyed = once(rekey, 'exit');
    const marker = path.join(store, 'encryption.json');
    while (!fs.existsSync(marker)) await new Promise((r) => setTimeout(r, 50)); // its "rekey in progress" marker: the lock is held
    const refused = await runCli(['serve', '--store', store], { env, input: '' });
    expect(refused.code, explain(refused)).not.toBe(0);
    expect(refused.stderr).toMatch(/being rekeyed/);
    const [code] = (await rekeyed) as [number];
    expect(code).toBe(0);
    const b = await startSidecar({ store, args: ['--encryption-key-env', 'K'], env });
    expect((await b.read({ sessionId })).records).toHaveLength(20);
    await b.shutdown();
  }, 60_000);

  it('a store rekeyed under an instance that did not hold the store lock (another host, a library user) is KeyMismatch before anything is written', async () => {
    const root = path.join(tempDir(), 'store');
    const lib = new FileSessionStore(root, { leases: true });
    const { sessionId } = await lib.create({});
    await lib.append(sessionId, [msg('plain')]);
    await lib.close(sessionId);
    const done = await runCli(['rekey', '--yes', '--store', root, '--to-env', 'K'], { env });
    expect(done.code, explain(done)).toBe(0);
    await expect(lib.create({})).rejects.toMatchObject({ kind: 'KeyMismatch' });
    await expect(lib.open(sessionId, 'write')).rejects.toMatchObject({ kind: 'KeyMismatch' });
    await lib.closeAll();
    const sealed = new FileSessionStore(root, { leases: true, encryptionKey: new StoreKey(Buffer.from(KEY, 'base64')) });
    expect((await sealed.read(sessionId)).records).toHaveLength(1);
    await sealed.closeAll();
  }, 60_000);
});
