import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/backends/file/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, makeStore, msg, runCli } from './helpers.js';

/**
 * Issue 25, finding 7b: `verify` after a fault-free `rekey` (the built binary) of a store with
 * compacted sessions (live and in the trash), a fork, blobs and state values must be clean in
 * every direction: plaintext -> key, key -> key, key -> plaintext.
 */

const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const env = { K1, K2 };

type Report = { ok: boolean; totals: { errors: number; warnings: number }; sessions: Array<{ sessionId: string; findings: Array<{ severity: string; message: string; file?: string }> }>; store: Array<{ severity: string; message: string }> };

async function richStore(): Promise<string> {
  const fx = await makeStore(path.join(tempDir('sidecar-rekey-verify-'), 'store'));
  const s = new FileSessionStore(fx.root, { leases: false });
  // Compacted twice (generations 0 and 1 archived), with a blob and a state value.
  const { sessionId: twice } = await s.create({ title: 'twice', blobThreshold: 1024 });
  await s.append(twice, [msg('user', 'one'), msg('assistant', 'x'.repeat(4096))]);
  await s.compact(twice, { summary: 'first', throughSeq: 2 });
  await s.append(twice, [msg('user', 'two'), msg('assistant', 'two back')]);
  await s.compact(twice, { summary: 'second', throughSeq: 4 });
  await s.append(twice, [msg('user', 'three')]);
  await s.setState(twice, 'plan', { step: 3 });
  // A compacted session in the trash.
  const { sessionId: gone } = await s.create({ title: 'trashed' });
  await s.append(gone, [msg('user', 'a'), msg('assistant', 'b')]);
  await s.compact(gone, { summary: 'ab', throughSeq: 2 });
  await s.append(gone, [msg('user', 'c')]);
  await s.setState(gone, 'k', 'v');
  await s.close(gone);
  await s.delete(gone);
  // A fork of the twice-compacted one.
  await s.fork(twice);
  await s.closeAll();
  return fx.root;
}

/**
 * No error and no warning — but the one rekey documents: it removes the index entries (caches
 * of journals it rewrote), which the next list or writable open of a sidecar rebuilds.
 */
async function verifyClean(root: string, keyEnv?: string): Promise<void> {
  const r = await runCli(['verify', '--store', root, '--json', ...(keyEnv ? ['--encryption-key-env', keyEnv] : [])], { env });
  const report = JSON.parse(r.stdout) as Report;
  const problems = [...report.store, ...report.sessions.flatMap((s) => s.findings)]
    .filter((f) => f.severity !== 'note' && !(f.severity === 'warning' && f.message.startsWith('no index entry')));
  expect(problems, explain(r)).toEqual([]);
  expect(r.code, explain(r)).toBe(0);
}

describe('verify after a fault-free rekey', () => {
  it('is clean before, and after plaintext -> key, key -> key and key -> plaintext (compacted live and trashed sessions, a fork, blobs, state)', async () => {
    const root = await richStore();
    await verifyClean(root);
    for (const [args, key] of [
      [['--to-env', 'K1'], 'K1'],
      [['--from-env', 'K1', '--to-env', 'K2'], 'K2'],
      [['--from-env', 'K2'], undefined],
    ] as const) {
      const r = await runCli(['rekey', '--store', root, ...args], { env });
      expect(r.code, explain(r)).toBe(0);
      await verifyClean(root, key);
    }
  });
});
