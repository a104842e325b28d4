import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { StoreKey } from '../../src/durable/storeKey.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * The command line on an encrypted store (issue 18 §5): every inspection command reads it with
 * --encryption-key-env/--encryption-key-file and refuses it without the key or with another one
 * (never printing a key); `rekey` encrypts, rekeys and decrypts it over the built binary.
 */

const KEY = randomBytes(32).toString('base64');
const OTHER = randomBytes(32).toString('base64');
const env = { K: KEY, OTHER };

async function encryptedStore(): Promise<{ root: string; id: string }> {
  const root = path.join(tempDir('sidecar-cli-enc-'), 'store');
  const s = new FileSessionStore(root, { leases: false, encryptionKey: new StoreKey(Buffer.from(KEY, 'base64')) });
  const { sessionId } = await s.create({ title: 'Sealed title', cwd: '/w' });
  await s.append(sessionId, [msg('user', 'a sealed question'), msg('assistant', 'a sealed answer')]);
  await s.closeAll();
  return { root, id: sessionId };
}

function noKeyIn(r: { stdout: string; stderr: string }): void {
  for (const k of [KEY, OTHER]) {
    expect(r.stdout).not.toContain(k);
    expect(r.stderr).not.toContain(k);
  }
}

describe('the CLI on an encrypted store', () => {
  it('list, show, tail, search, stats, export and verify read it with the key; refuse it without, or with another key', async () => {
    const { root, id } = await encryptedStore();
    const keyFile = path.join(tempDir('sidecar-key-'), 'key');
    fs.writeFileSync(keyFile, KEY, { mode: 0o600 });
    const commands: Array<[string[], string]> = [
      [['list'], 'Sealed title'],
      [['show', id], 'a sealed question'],
      [['tail', id], 'a sealed answer'],
      [['search', 'sealed answer'], 'a sealed answer'],
      [['stats'], '1'],
      [['export', id, '--format', 'jsonl'], 'a sealed question'],
      [['verify'], 'OK'],
    ];
    for (const [args, shows] of commands) {
      for (const keyArgs of [['--encryption-key-env', 'K'], ['--encryption-key-file', keyFile]]) {
        const r = await runCli([...args, '--store', root, ...keyArgs], { env });
        expect(r.code, explain(r)).toBe(0);
        expect(r.stdout).toContain(shows);
        noKeyIn(r);
      }
      const none = await runCli([...args, '--store', root], { env });
      expect(none.code, explain(none)).toBe(1);
      expect(none.stderr).toMatch(/encrypted: give its key/);
      expect(none.stdout).not.toContain('sealed');
      const wrong = await runCli([...args, '--store', root, '--encryption-key-env', 'OTHER'], { env });
      expect(wrong.code, explain(wrong)).toBe(1);
      expect(wrong.stderr).toMatch(/not the store's key/);
      noKeyIn(wrong);
    }
    fs.chmodSync(path.join(root, 'encryption.json'), 0o644);
    const loose = await runCli(['verify', '--store', root, '--encryption-key-env', 'K'], { env });
    expect(loose.code, explain(loose)).toBe(1);
    expect(loose.stderr).toMatch(/store refused: encryption\.json has mode 644, expected 600/);
    // A PostgreSQL store takes the key too (test/cli/pgEncryption.test.ts): here the database is unreachable, and said so.
    const pg = await runCli(['list', '--store', 'postgres://u@127.0.0.1:1/db', '--encryption-key-env', 'K'], { env });
    expect(pg.code, explain(pg)).toBe(1);
    expect(pg.stderr).toMatch(/Unavailable|cannot|reach|connect/i);
    noKeyIn(pg);
  });

  it('rekey encrypts a plaintext store, changes its key and decrypts it; --help; never prints a key', async () => {
    const root = path.join(tempDir('sidecar-cli-enc-'), 'store');
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId } = await s.create({ title: 'Plain title' });
    await s.append(sessionId, [msg('user', 'plain question')]);
    await s.closeAll();
    const journal = path.join(root, 'sessions', sessionId, 'journal.jsonl');
    const original = fs.readFileSync(journal);

    const help = await runCli(['rekey', '--yes', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--from-env NAME[\s\S]*--to-env NAME/);

    fs.mkdirSync(path.join(root, 'recovery', sessionId), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(root, 'recovery', sessionId, '1-100.torn'), 'torn', { mode: 0o600 });
    let r = await runCli(['rekey', '--yes', '--store', root, '--to-env', 'K'], { env });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/recovery\/ keeps 1 file\(s\) of torn tails/);
    expect(r.stdout).toMatch(/^encrypted .*: 1 session\(s\), 1 file\(s\) rewritten/);
    expect(fs.readFileSync(journal, 'utf8')).not.toContain('Plain title');
    expect((await runCli(['show', sessionId, '--store', root, '--encryption-key-env', 'K'], { env })).stdout).toContain('plain question');
    r = await runCli(['rekey', '--yes', '--store', root, '--from-env', 'K', '--to-env', 'OTHER'], { env });
    expect(r.code, explain(r)).toBe(0);
    noKeyIn(r);
    r = await runCli(['rekey', '--yes', '--store', root, '--from-env', 'K', '--to-env', 'OTHER'], { env });
    expect(r.stdout).toMatch(/already under the new key: nothing to do/);
    r = await runCli(['rekey', '--yes', '--store', root, '--from-env', 'K', '--decrypt'], { env }); // K is not the store's key any more
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/--from key is not the store's key/);
    const otherFile = path.join(tempDir('sidecar-key-'), 'other');
    fs.writeFileSync(otherFile, `${OTHER}\n`, { mode: 0o600 });
    r = await runCli(['rekey', '--yes', '--store', root, '--from-file', otherFile, '--decrypt'], { env });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^decrypted /);
    expect(fs.readFileSync(journal)).toEqual(original); // a single-record batch per line: the same bytes again
    expect((await runCli(['list', '--store', root])).stdout).toContain('Plain title');
    const bad = await runCli(['rekey', '--yes', '--store', root, '--to-env', 'NOPE'], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--to-env NOPE: the variable is not set/);
    expect((await runCli(['rekey', '--yes', '--store', root], { env })).code).toBe(2);
  });
});
