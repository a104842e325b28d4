import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers.js';
import { nodeFs } from '../../../../src/durable/fsLayer.js';
import { eio, faultFs, modeOf, store, storeError } from '../storeHelpers.js';

describe('state values', () => {
  it('set, get, replace and delete string and JSON values; they survive a restart', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    expect(await s.getState(sessionId, 'bashState')).toBeNull();
    await s.setState(sessionId, 'bashState', 'export A=1\ncd /tmp\n');
    await s.setState(sessionId, 'cfg', { a: [1, 2], b: null, c: 'é' });
    await s.setState(sessionId, 'cfg', { a: [3] });
    await s.closeAll();
    const t = store(root);
    expect(await t.getState(sessionId, 'bashState')).toBe('export A=1\ncd /tmp\n');
    expect(await t.getState(sessionId, 'cfg')).toEqual({ a: [3] });
    const file = path.join(root, 'sessions', sessionId, 'state', 'cfg.json');
    expect(modeOf(file)).toBe(0o600);
    await t.open(sessionId, 'write');
    expect(await t.deleteState(sessionId, 'cfg')).toBe(true);
    expect(await t.deleteState(sessionId, 'cfg')).toBe(false);
    expect(await t.getState(sessionId, 'cfg')).toBeNull();
    expect(fs.existsSync(file)).toBe(false);
    await t.closeAll();
  });

  it('refuses bad keys, oversized values, registered secrets; redacts well-known credentials', async () => {
    const root = tempDir();
    const s = store(root);
    const secret = 'hunter2-very-secret-value';
    const { sessionId } = await s.create({}, { values: [secret] });
    for (const key of ['', '.hidden', '../x', 'a/b', 'a..b', 'x'.repeat(129)]) await storeError(s.setState(sessionId, key, 1), 'InvalidArgument');
    await storeError(s.setState(sessionId, 'big', 'x'.repeat(1 << 20)), 'PayloadTooLarge');
    await storeError(s.setState(sessionId, 'env', `export TOKEN=${secret}`), 'SecretRejected');
    const token = `ghp_${'A1b2C3d4E5'.repeat(4).slice(0, 36)}`;
    const { redactions } = await s.setState(sessionId, 'env', `export GH=${token}`);
    expect(redactions.length).toBe(1);
    expect(await s.getState(sessionId, 'env')).not.toContain(token);
    expect(fs.readdirSync(path.join(root, 'sessions', sessionId, 'state'))).toEqual(['env.json']);
    await s.closeAll();
  });

  it('writes only with the session open for writing', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.closeAll();
    await storeError(s.setState(sessionId, 'k', 1), 'ReadOnly');
    await storeError(s.deleteState(sessionId, 'k'), 'ReadOnly');
    expect(await s.getState(sessionId, 'k')).toBeNull();
  });
});

describe('state values and fail-stop', () => {
  it('a key that is or holds a secret is refused (a file name is never redacted)', async () => {
    const root = tempDir();
    const s = store(root);
    const secret = 'key-secret-value-42';
    const { sessionId } = await s.create({}, { values: [secret] });
    await storeError(s.setState(sessionId, secret, 1), 'SecretRejected');
    await storeError(s.setState(sessionId, `ghp_${'A1b2C3d4E5'.repeat(4).slice(0, 36)}`, 1), 'SecretRejected');
    expect(fs.existsSync(path.join(root, 'sessions', sessionId, 'state'))).toBe(false);
    await s.closeAll();
  });

  it('a failed directory sync after the rename is Uncertain and fail-stops the session', async () => {
    const root = tempDir();
    let failDirSync = false;
    const layer = faultFs({
      fsyncSync: (fd) => {
        if (failDirSync && fs.fstatSync(fd).isDirectory()) throw eio();
        nodeFs.fsyncSync(fd);
      },
    });
    const s = store(root, { fs: layer });
    const { sessionId } = await s.create({});
    await s.setState(sessionId, 'k', 'old');
    failDirSync = true;
    await storeError(s.setState(sessionId, 'k', 'new'), 'Uncertain');
    failDirSync = false;
    const refused = await storeError(s.setState(sessionId, 'k', 'newer'), 'ReadOnly');
    expect(refused.details.reason).toBe('failStop');
    await storeError(s.append(sessionId, [{ kind: 'event', type: 't', payload: 1 }]), 'ReadOnly');
    await storeError(s.allocateScratch(sessionId, 'r'), 'ReadOnly');
    await s.closeAll();
  });

  it('after a failed journal sync, state and scratch writes are refused too', async () => {
    const root = tempDir();
    let failSync = false;
    const layer = faultFs({ fdatasync: async (fd) => (failSync ? Promise.reject(eio()) : nodeFs.fdatasync(fd)) });
    const s = store(root, { fs: layer });
    const { sessionId } = await s.create({});
    failSync = true;
    await storeError(s.append(sessionId, [{ kind: 'event', type: 't', payload: 1 }]), 'Uncertain');
    await storeError(s.setState(sessionId, 'k', 1), 'ReadOnly');
    await storeError(s.deleteState(sessionId, 'k'), 'ReadOnly');
    await storeError(s.allocateScratch(sessionId, 'r'), 'ReadOnly');
    await s.closeAll();
  });
});
