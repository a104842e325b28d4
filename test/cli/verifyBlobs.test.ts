import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, fullSnapshot, journalPath, msg, runCli, toolCall } from './helpers.js';

/** session-sidecar verify: the blobs check (protocol/STORAGE.md, "Blobs"), over the BUILT binary. */

interface BlobStore {
  root: string;
  /** A message whose 5000-character content is a blob (seq 1), and an event with an attachment (seq 2). */
  chat: string;
  /** A session without blobs. */
  plain: string;
  text: string;
  image: string;
}

const TEXT = 'All work and no play makes Jack a dull boy. '.repeat(120).slice(0, 5000);
const PNG = `\u0089PNG fake image bytes ${'x'.repeat(100)}`;

async function makeBlobStore(): Promise<BlobStore> {
  const root = path.join(tempDir('sidecar-cli-'), 'store');
  const store = new FileSessionStore(root, { leases: false });
  const { sessionId: chat } = await store.create({ title: 'Blobs', blobThreshold: 1024 });
  await store.append(chat, [toolCall(TEXT)]);
  await store.append(chat, [toolCall({ $attach: PNG, mediaType: 'image/png' })]);
  const { sessionId: plain } = await store.create({ title: 'Plain' });
  await store.append(plain, [msg('user', 'short')]);
  await store.closeAll();
  const text = blobOf(root, chat, 1);
  const image = blobOf(root, chat, 2);
  return { root, chat, plain, text, image };
}

/** The blob file referenced by the record of `seq` (found in the journal, as stored). */
function blobOf(root: string, id: string, seq: number): string {
  const line = fs.readFileSync(journalPath(root, id), 'utf8').split('\n').find((l) => l.startsWith(`{"seq":${seq},`));
  const hex = /"\$blob":"sha256:([0-9a-f]{64})"/.exec(line ?? '')?.[1];
  expect(hex, `a blob reference in record ${seq}`).toBeDefined();
  return path.join(root, 'blobs', 'sha256', (hex as string).slice(0, 2), hex as string);
}

const rel = (root: string, file: string) => path.relative(root, file);
const refOf = (file: string) => `sha256:${path.basename(file)}`;

function flipByte(file: string, at: number): void {
  fs.chmodSync(file, 0o600);
  const fd = fs.openSync(file, 'r+');
  const b = Buffer.alloc(1);
  fs.readSync(fd, b, 0, 1, at);
  fs.writeSync(fd, Buffer.from([(b[0] as number) ^ 0x20]), 0, 1, at);
  fs.closeSync(fd);
}

describe('session-sidecar verify: blobs', () => {
  it('a store whose records reference blobs verifies clean', async () => {
    const f = await makeBlobStore();
    expect(fs.statSync(f.text).size).toBe(5000);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.chat}  2 records`, 'm'));
    expect(r.stdout).toMatch(/; 0 errors, 0 warnings\n$/);
    expect(r.stdout).not.toMatch(/store |note|blob/);
  });

  it('a missing referenced blob: an error naming the session and seq, exit 1', async () => {
    const f = await makeBlobStore();
    fs.rmSync(f.image);
    const before = fullSnapshot(f.root);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toContain(`FAIL ${f.chat}  2 records`);
    expect(r.stdout).toContain(`       error: blob ${refOf(f.image)} referenced at seq 2 is missing (sessions/${f.chat}/journal.jsonl)\n`);
    expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.plain}`, 'm'));
    expect(r.stdout).toMatch(/\nPROBLEMS FOUND: 2 sessions, .*; 1 error, 0 warnings\n$/);
    expect(fullSnapshot(f.root)).toEqual(before);

    const one = await runCli(['verify', f.chat, '--store', f.root]);
    expect(one.code, explain(one)).toBe(1);
    expect(one.stdout).toContain(`error: blob ${refOf(f.image)} referenced at seq 2 is missing`);
    const other = await runCli(['verify', f.plain, '--store', f.root]);
    expect(other.code, explain(other)).toBe(0);

    const json = await runCli(['verify', '--json', '--store', f.root]);
    const report = JSON.parse(json.stdout) as { ok: boolean; store: unknown[]; sessions: Array<{ sessionId: string; ok: boolean; findings: unknown[] }> };
    expect(report.ok).toBe(false);
    expect(report.store).toEqual([]);
    expect(report.sessions.find((s) => s.sessionId === f.chat)).toMatchObject({
      ok: false,
      findings: [{ severity: 'error', check: 'blobs', message: `blob ${refOf(f.image)} referenced at seq 2 is missing`, file: `sessions/${f.chat}/journal.jsonl` }],
    });
  });

  it('a damaged blob (one byte flipped): an error, exit 1, with one session or all', async () => {
    const f = await makeBlobStore();
    flipByte(f.text, 2500);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toContain(`FAIL ${f.chat}`);
    expect(r.stdout).toContain(`error: blob ${refOf(f.text)} referenced at seq 1 is damaged: its sha256 does not match its name (sessions/${f.chat}/journal.jsonl)`);
    expect(r.stdout).toMatch(/; 1 error, 0 warnings\n$/);
    const one = await runCli(['verify', f.chat, '--store', f.root]);
    expect(one.code, explain(one)).toBe(1);
    expect(one.stdout).toContain('is damaged: its sha256 does not match its name');
  });

  it('an unreferenced blob (its session purged): a note, exit 0; -v shows it', async () => {
    const f = await makeBlobStore();
    const store = new FileSessionStore(f.root, { leases: false });
    await store.delete(f.chat, true);
    await store.closeAll();
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).not.toContain('note:');
    expect(r.stdout).toMatch(/\nOK: 1 session, .*; 0 errors, 0 warnings, 2 notes \(-v shows them\)\n$/);
    const v = await runCli(['verify', '-v', '--store', f.root]);
    expect(v.code, explain(v)).toBe(0);
    const note = 'a blob no record references (harmless: left by a crash between the blob write and the record write, or by a deleted session)';
    expect(v.stdout).toContain(`store ${f.root}\n`);
    for (const file of [f.text, f.image]) expect(v.stdout).toContain(`  note: ${note} (${rel(f.root, file)})\n`);
    expect(v.stdout).toMatch(/; 0 errors, 0 warnings\n$/);
    const strict = await runCli(['verify', '--strict', '--store', f.root]);
    expect(strict.code).toBe(0);
  });

  it('a deleted session (in the trash) still references its blobs', async () => {
    const f = await makeBlobStore();
    const store = new FileSessionStore(f.root, { leases: false });
    await store.delete(f.chat);
    await store.closeAll();
    const r = await runCli(['verify', '-v', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).not.toContain('no record references');
    fs.rmSync(f.text);
    const missing = await runCli(['verify', '--store', f.root]);
    expect(missing.code, explain(missing)).toBe(1);
    expect(missing.stdout).toContain(`FAIL ${f.chat} (deleted, in trash)`);
    expect(missing.stdout).toContain(`error: blob ${refOf(f.text)} referenced at seq 1 is missing (trash/${f.chat}/session/journal.jsonl)`);
  });

  it('references in archived generations count', async () => {
    const f = await makeBlobStore();
    const store = new FileSessionStore(f.root, { leases: false });
    await store.open(f.chat, 'write');
    await store.compact(f.chat, { summary: 'A long text and a screenshot.', throughSeq: 2 });
    await store.closeAll();
    const r = await runCli(['verify', '-v', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).not.toContain('no record references');
    fs.rmSync(f.image);
    const missing = await runCli(['verify', '--store', f.root]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`error: blob ${refOf(f.image)} referenced at seq 2 is missing (history/${f.chat}/0.jsonl)`);
  });

  it('a temp file left by a blob write: a warning (exit 0, 1 with --strict)', async () => {
    const f = await makeBlobStore();
    const temp = path.join(f.root, 'blobs', 'tmp', `${path.basename(f.text)}.0123456789ab.tmp`);
    fs.writeFileSync(temp, 'partial', { mode: 0o600 });
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain(`store ${f.root}\n  warning: a temporary file left by a blob write that did not complete (or one in progress); nothing references it, it can be deleted while no sidecar runs (${rel(f.root, temp)})\n`);
    expect(r.stdout).toMatch(/\nOK: .*; 0 errors, 1 warning\n$/);
    const strict = await runCli(['verify', '--strict', '--store', f.root]);
    expect(strict.code).toBe(1);
    // One session verified: no store-wide scan.
    const one = await runCli(['verify', f.chat, '--store', f.root]);
    expect(one.code, explain(one)).toBe(0);
    expect(one.stdout).not.toContain('temporary');
  });

  it('modes under blobs/: 0600 files, 0700 folders', async () => {
    const f = await makeBlobStore();
    fs.chmodSync(f.text, 0o644);
    fs.chmodSync(path.dirname(f.image), 0o755);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toContain(`  error: file mode 644, expected 600 (others can read it) (${rel(f.root, f.text)})\n`);
    expect(r.stdout).toContain(`  error: directory mode 755, expected 700 (${rel(f.root, path.dirname(f.image))})\n`);
    expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.chat}`, 'm'));
  });

  it('one session: only its references are checked, no store-wide scan', async () => {
    const f = await makeBlobStore();
    const store = new FileSessionStore(f.root, { leases: false });
    const { sessionId: other } = await store.create({ blobThreshold: 1024 });
    await store.append(other, [toolCall('y'.repeat(3000))]);
    await store.closeAll();
    fs.rmSync(blobOf(f.root, other, 1));
    const stray = (path.basename(f.text).startsWith('aa') ? 'b' : 'a').repeat(64); // a blob name in the wrong folder
    fs.writeFileSync(path.join(path.dirname(f.text), stray), 'stray', { mode: 0o600 });
    const one = await runCli(['verify', '-v', f.chat, '--store', f.root]);
    expect(one.code, explain(one)).toBe(0);
    expect(one.stdout).not.toMatch(/blob|store /);
    const all = await runCli(['verify', '--store', f.root]);
    expect(all.code).toBe(1);
    expect(all.stdout).toContain(`FAIL ${other}`);
    expect(all.stdout).toContain(`warning: a file that is not a blob in its place (readers never look for it) (${rel(f.root, path.dirname(f.text))}/${stray})`);
  });

  it('no inspection command changes a store with blobs, an unreferenced blob, a blob temp file and a stale index', async () => {
    const f = await makeBlobStore();
    const store = new FileSessionStore(f.root, { leases: false });
    const { sessionId: gone } = await store.create({ blobThreshold: 1024 });
    await store.append(gone, [toolCall('z'.repeat(2000))]);
    await store.delete(gone, true);
    await store.closeAll();
    fs.writeFileSync(path.join(f.root, 'blobs', 'tmp', 'leftover.tmp'), 'x', { mode: 0o600 });
    fs.rmSync(path.join(f.root, 'index', `${f.chat}.json`));
    const before = fullSnapshot(f.root);
    for (const args of [['list'], ['show', f.chat], ['show', f.chat, '--json'], ['tail', f.chat], ['export', f.chat, '--format', 'jsonl'], ['stats'], ['verify', '-v'], ['verify', f.chat]]) {
      const r = await runCli([...args, '--store', f.root]);
      expect(r.code, `${args.join(' ')}: ${explain(r)}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
    }
    expect(fullSnapshot(f.root)).toEqual(before);
  });
});
