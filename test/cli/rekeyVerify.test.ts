import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { encodeHeaderLine } from '../../src/backends/file/journal/format.js';
import { StoreKey } from '../../src/durable/storeKey.js';
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

/** Archives whose header line is not the journal's byte for byte (live and in the trash). */
function archiveHeadersApart(root: string): string[] {
  const first = (p: string) => fs.readFileSync(p, 'utf8').split('\n')[0];
  const apart: string[] = [];
  const places = [
    ...fs.readdirSync(path.join(root, 'history')).map((id) => ({ journal: path.join(root, 'sessions', id, 'journal.jsonl'), history: path.join(root, 'history', id) })),
    ...fs.readdirSync(path.join(root, 'trash')).map((id) => ({ journal: path.join(root, 'trash', id, 'session', 'journal.jsonl'), history: path.join(root, 'trash', id, 'history') })),
  ];
  for (const p of places) {
    if (!fs.existsSync(p.history)) continue;
    for (const name of fs.readdirSync(p.history)) if (first(path.join(p.history, name)) !== first(p.journal)) apart.push(path.relative(root, path.join(p.history, name)));
  }
  return apart;
}

describe('verify after a fault-free rekey', () => {
  it('is clean before, and after plaintext -> key, key -> key and key -> plaintext (compacted live and trashed sessions, a fork, blobs, state)', async () => {
    const root = await richStore();
    await verifyClean(root);
    for (const [args, key] of [
      [['--to-env', 'K1'], 'K1'],
      [['--from-env', 'K1', '--to-env', 'K2'], 'K2'],
      [['--from-env', 'K2', '--decrypt'], undefined],
    ] as const) {
      const r = await runCli(['rekey', '--yes', '--store', root, ...args], { env });
      expect(r.code, explain(r)).toBe(0);
      await verifyClean(root, key);
      expect(archiveHeadersApart(root), args.join(' ')).toEqual([]);
    }
  });

  it('an archive whose header an earlier rekey sealed apart (same members, another nonce) is a note; other members are an error', async () => {
    const root = await richStore();
    expect((await runCli(['rekey', '--yes', '--store', root, '--to-env', 'K1'], { env })).code).toBe(0);
    const id = fs.readdirSync(path.join(root, 'history')).find((x) => fs.existsSync(path.join(root, 'sessions', x)))!;
    const archive = path.join(root, 'history', id, '0.jsonl');
    const text = fs.readFileSync(archive, 'utf8');
    const cipher = { key: new StoreKey(Buffer.from(K1, 'base64')), gate: () => {}, sessionId: id };
    const sealedApart = (members: Record<string, unknown>) => {
      const line = encodeHeaderLine({ format: 'session-sidecar/journal', version: 1, sessionId: id, ...members }, cipher);
      fs.writeFileSync(archive, Buffer.concat([line, Buffer.from(text.slice(text.indexOf('\n') + 1))]));
    };
    const journalHead = JSON.parse(fs.readFileSync(path.join(root, 'sessions', id, 'journal.jsonl'), 'utf8').split('\n')[0]!) as { enc: string };
    const plain = JSON.parse(cipher.key.open(`session-sidecar/header\u0000${id}`, journalHead.enc)!.toString('utf8')) as Record<string, unknown>;
    sealedApart(plain);
    const findings = async () => {
      const r = await runCli(['verify', '--store', root, '--json', '--encryption-key-env', 'K1'], { env });
      return (JSON.parse(r.stdout) as Report).sessions.find((x) => x.sessionId === id)!.findings.filter((f) => f.file === path.relative(root, archive));
    };
    expect(await findings()).toEqual([expect.objectContaining({ severity: 'note', message: expect.stringContaining('sealed apart') })]);
    sealedApart({ ...plain, title: 'another' });
    expect(await findings()).toEqual([expect.objectContaining({ severity: 'error', message: expect.stringContaining('differs') })]);
  });
});
