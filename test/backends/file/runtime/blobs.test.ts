import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../../src/durable/fsLayer.js';
import { tempDir } from '../../../helpers.js';
import { argsOf, eio, faultFs, journalOf, message, modeOf, store, storeError, toolCall } from '../storeHelpers.js';

const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;
const blobFile = (root: string, ref: string) => path.join(root, 'blobs', 'sha256', ref.slice(7, 9), ref.slice(7));

function duBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += fs.statSync(path.join(e.parentPath, e.name)).size;
  }
  return total;
}

describe('large payloads stored once', () => {
  it('replace strings past the threshold by a BlobRef; read inlines them on request; context always', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    const big = 'é'.repeat(600); // 1200 UTF-8 bytes, 600 characters
    await s.append(sessionId, [toolCall(big), message('assistant', 'small')]);
    const [first] = (await s.read(sessionId)).records;
    expect(argsOf(first)).toEqual({ $blob: sha(big), bytes: 1200 });
    expect(fs.readFileSync(journalOf(root, sessionId), 'utf8')).not.toContain('éé');
    expect(fs.readFileSync(blobFile(root, sha(big)), 'utf8')).toBe(big);
    expect(modeOf(blobFile(root, sha(big)))).toBe(0o600);
    expect((await s.read(sessionId, { inline: true })).records[0]?.message).toEqual(toolCall(big).message);
    expect((await s.context(sessionId)).messages[0]).toEqual(toolCall(big).message);
    await s.closeAll();
  });

  it('store attachments at a BlobRef position whatever their size, keep their mediaType, and accept a ref read back there', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    const png = Buffer.from('not really a png').toString('base64');
    await s.append(sessionId, [toolCall({ $attach: png, mediaType: 'image/png' })]);
    const ref = argsOf((await s.read(sessionId)).records[0]);
    expect(ref).toEqual({ $blob: sha(png), bytes: png.length, mediaType: 'image/png' });
    await s.append(sessionId, [toolCall(ref)]); // re-sent without re-uploading
    await storeError(s.append(sessionId, [{ kind: 'event', type: 'again', payload: ref }]), 'InvalidArgument'); // not a BlobRef position
    await storeError(s.append(sessionId, [toolCall({ $blob: sha('nothing'), bytes: 7 })]), 'InvalidArgument');
    await storeError(s.append(sessionId, [toolCall({ $blob: sha(png), bytes: 1 })]), 'InvalidArgument');
    await storeError(s.append(sessionId, [toolCall({ $attach: 1 })]), 'InvalidArgument');
    await storeError(s.append(sessionId, [toolCall({ $blob: sha(png), bytes: png.length, extra: 1 })]), 'InvalidArgument');
    const chunk = await s.getBlob(sessionId, sha(png), 4, 8);
    expect(chunk).toEqual({ bytes: Buffer.from(png).subarray(4, 12), offset: 4, size: png.length });
    await s.closeAll();
  });

  it('are stored once per store: across sessions, a fork and a compaction', async () => {
    const root = tempDir();
    const s = store(root);
    const payload = 'p'.repeat(300_000);
    const a = (await s.create({})).sessionId;
    const b = (await s.create({})).sessionId;
    await s.append(a, [toolCall(payload), message('assistant', 'ok')]);
    await s.append(b, [toolCall(payload)]);
    await s.compact(a, { summary: 'sum', throughSeq: 1 });
    await s.fork(a);
    expect(fs.readdirSync(path.join(root, 'blobs', 'sha256'), { recursive: true }).filter((n) => String(n).length > 60)).toHaveLength(1);
    expect(duBytes(root)).toBeLessThan(2 * payload.length);
    await s.closeAll();
  });

  it('a 50 MB base64 tool-call argument appended 20 times costs its size once on disk', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    const screenshot = Buffer.alloc(37_500_000, 7).toString('base64'); // 50 MB of base64
    for (let i = 0; i < 20; i++) {
      await s.append(sessionId, [toolCall(screenshot)]);
    }
    await s.closeAll();
    const total = duBytes(root);
    expect(total).toBeGreaterThan(50_000_000);
    expect(total).toBeLessThan(51_000_000);
  }, 120_000);

  it('are durable before the record that references them: a failed journal write leaves no dangling ref', async () => {
    const root = tempDir();
    const ops: string[] = [];
    const journalFds = new Set<number>();
    const layer = faultFs({
      openSync: (p, flags, mode) => {
        const fd = nodeFs.openSync(p, flags, mode);
        if (p.includes('journal.jsonl')) journalFds.add(fd);
        return fd;
      },
      renameSync: (from, to) => (ops.push(`rename ${path.basename(path.dirname(to))}`), nodeFs.renameSync(from, to)),
      fsyncSync: (fd) => (ops.push(journalFds.has(fd) ? 'fsync journal' : 'fsync'), nodeFs.fsyncSync(fd)),
      writeSync: (fd, buf, off, len, pos) => {
        if (journalFds.has(fd) && failJournal) throw eio();
        if (journalFds.has(fd)) ops.push('write journal');
        return nodeFs.writeSync(fd, buf, off, len, pos);
      },
    });
    let failJournal = false;
    const s = store(root, { fs: layer });
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    const big = 'b'.repeat(5000);
    ops.length = 0;
    await s.append(sessionId, [toolCall(big)]);
    const rename = ops.findIndex((o) => o.startsWith('rename'));
    expect(rename).toBeGreaterThanOrEqual(0);
    expect(ops.slice(rename + 1, rename + 2)).toEqual(['fsync']); // the blob's directory
    expect(ops.indexOf('write journal')).toBeGreaterThan(rename);
    failJournal = true;
    const other = 'c'.repeat(5000);
    await storeError(s.append(sessionId, [toolCall(other)]), 'NotWritten');
    await s.closeAll();
    const t = store(root);
    const { records } = await t.read(sessionId, { inline: true });
    expect(records.map(argsOf)).toEqual([big]);
    expect(fs.existsSync(blobFile(root, sha(other)))).toBe(true); // orphaned, harmless, never referenced
  });

  it('a missing or damaged blob is reported, never silently replaced', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    const big = 'd'.repeat(4000);
    await s.append(sessionId, [toolCall(big)]);
    const file = blobFile(root, sha(big));
    fs.writeFileSync(file, 'e'.repeat(4000));
    const damaged = await storeError(s.read(sessionId, { inline: true }), 'Corrupt');
    expect(damaged.message).toContain(sha(big));
    await storeError(s.getBlob(sessionId, sha(big)), 'Corrupt');
    fs.rmSync(file);
    await storeError(s.context(sessionId), 'Corrupt');
    expect((await s.read(sessionId)).records).toHaveLength(1); // references alone still read
    await s.closeAll();
  });
});

describe('blob references a client sends', () => {
  it('are checked against the secrets of the session that references them', async () => {
    const root = tempDir();
    const secret = 'open-sesame-0123456789';
    const s = store(root);
    const a = (await s.create({ blobThreshold: 1024 })).sessionId;
    const text = `prefix ${secret} ${'x'.repeat(2000)}`;
    await s.append(a, [toolCall(text)]);
    const ref = argsOf((await s.read(a)).records[0]);
    expect(ref).toMatchObject({ $blob: sha(text) });
    await s.closeAll();
    const t = store(root);
    const b = (await t.create({}, { values: [secret] })).sessionId;
    const err = await storeError(t.append(b, [toolCall(ref)]), 'SecretRejected');
    expect(JSON.stringify(err)).not.toContain(secret);
    expect((await t.read(b)).records).toEqual([]);
    await t.closeAll();
  });

  it('a reused blob has its directory synced again before a record references it', async () => {
    const root = tempDir();
    const synced: string[] = [];
    const layer = faultFs({
      openSync: (p, flags, mode) => {
        const fd = nodeFs.openSync(p, flags, mode);
        if (p.includes(`${path.sep}blobs${path.sep}sha256${path.sep}`)) synced.push(`open ${path.basename(p)}`);
        return fd;
      },
    });
    const s = store(root, { fs: layer });
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    await s.append(sessionId, [toolCall('z'.repeat(3000))]);
    synced.length = 0;
    await s.append(sessionId, [toolCall('z'.repeat(3000))]);
    expect(synced.length).toBeGreaterThan(0); // the fan-out directory was opened to be fsynced
    await s.closeAll();
  });

  it('blob/get checks the whole blob before its first chunk', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    const big = 'q'.repeat(3 << 20);
    await s.append(sessionId, [toolCall(big)]);
    const file = blobFile(root, sha(big));
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, 'Q', 2 << 20);
    fs.closeSync(fd);
    await storeError(s.getBlob(sessionId, sha(big), 0, 1 << 20), 'Corrupt');
    await s.closeAll();
  });
});
