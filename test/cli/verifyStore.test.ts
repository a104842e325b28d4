import fs from 'node:fs';
import path from 'node:path';
import { WorkInterrupted } from '../../src/domain/work.js';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/durable/fsLayer.js';
import { blobPath, listBlobs } from '../../src/backends/file/blobs/blobFiles.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { StoreLayout } from '../../src/backends/file/layout.js';
import { blobsCheck, VERIFY_EXTENSIONS, type VerifyExtension, verifyStore } from '../../src/backends/file/verify/index.js';
import { tempDir } from '../helpers.js';
import { makeStore } from './helpers.js';

/** verifyStore's extension point (where a blobs check plugs in), called in-process. */

describe('verifyStore extensions', () => {
  it('see every committed record of journals and archives, and add store-wide findings', async () => {
    const f = await makeStore();
    const seen: string[] = [];
    const ext: VerifyExtension = {
      name: 'sample',
      onRecord: (id, rec, file) => seen.push(`${id === f.compacted ? 'C' : id === f.chat ? 'A' : 'F'}${String(rec.seq)}:${file.startsWith('history') ? 'h' : 'j'}`),
      finish: (ctx) => [{ severity: 'warning', check: 'sample', message: `saw ${ctx.sessionIds.length} sessions` }],
    };
    const report = await verifyStore(f.root, { extensions: [ext] });
    expect(report.ok).toBe(true);
    expect(report.store).toEqual([{ severity: 'warning', check: 'sample', message: 'saw 3 sessions' }]);
    expect(seen.filter((s) => s.startsWith('C'))).toEqual(['C2:j', 'C3:j', 'C1:h', 'C2:h']) // the journal, then its archives; each in seq order;
    expect(seen.filter((s) => s.startsWith('A'))).toHaveLength(8);
  });

  it('a failing extension is an error finding, not a crash', async () => {
    const f = await makeStore();
    const report = await verifyStore(f.root, { extensions: [{ name: 'broken', finish: () => { throw Object.assign(new Error('secret text'), { code: 'EIO' }); } }] });
    expect(report.ok).toBe(false);
    expect(report.store).toEqual([{ severity: 'error', check: 'broken', message: 'the broken check failed: Error EIO' }]);
  });

  it('reports progress with the total known up front, and stops between sessions when asked', async () => {
    const f = await makeStore();
    const seen: string[] = [];
    await verifyStore(f.root, { work: { phase: (label, total, unit) => seen.push(`${label} ${total} ${unit}`), step: () => seen.push('step') } });
    expect(seen).toEqual(['verifying 3 sessions', 'step', 'step', 'step']);
    let asked = 0;
    const stopped = await verifyStore(f.root, { work: { shouldStop: async () => ++asked === 2 } }).then(() => undefined, (e: unknown) => e);
    expect(stopped).toBeInstanceOf(WorkInterrupted);
    expect(asked).toBe(2);
  });
});

describe('the blobs check, in-process', () => {
  async function withBlob(bytes: Buffer): Promise<{ root: string; id: string; ref: string; file: string }> {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const store = new FileSessionStore(root, { leases: false });
    const { sessionId: id } = await store.create({ blobThreshold: 1024 });
    await store.append(id, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'upload', arguments: { $attach: bytes.toString('latin1'), mediaType: 'application/octet-stream' } as never }] } }]);
    await store.closeAll();
    const ref = listBlobs(nodeFs, new StoreLayout(root))[0] as string;
    return { root, id, ref, file: blobPath(new StoreLayout(root), ref.slice('sha256:'.length)) };
  }
  const ctx = (root: string, single = false) => ({ root, layout: new StoreLayout(root), fsl: nodeFs, sessionIds: [], single });

  it('is registered by default', () => {
    expect(VERIFY_EXTENSIONS).toContain(blobsCheck);
  });

  it('a reference whose size differs from the blob, and one that names no blob', async () => {
    const f = await withBlob(Buffer.from('hello blob'));
    const run = blobsCheck.start?.() ?? blobsCheck;
    const file = `sessions/${f.id}/journal.jsonl`;
    run.onRecord?.(f.id, { seq: 7, kind: 'event', payload: [{ $blob: f.ref, bytes: 10 }, { x: { $blob: f.ref, bytes: 3, mediaType: 'text/plain' } }] }, file);
    run.onRecord?.(f.id, { seq: 8, kind: 'event', payload: { $blob: 'sha256:nothex', bytes: 1 } }, file);
    run.onRecord?.(f.id, { seq: 9, kind: 'event', payload: { $blob: f.ref, bytes: 1, extra: true } }, file); // not a reference
    const findings = await run.finish?.(ctx(f.root));
    expect(findings).toEqual([
      { severity: 'error', check: 'blobs', message: 'a blob reference at seq 8 does not name a blob (not sha256:<64 hex digits>)', file, sessionId: f.id, location: 'live' },
      { severity: 'error', check: 'blobs', message: `blob ${f.ref} has 10 bytes but the reference at seq 7 says 3`, file, sessionId: f.id, location: 'live' },
    ]);
  });

  it('keeps no state from one verification to the next', async () => {
    const f = await withBlob(Buffer.from('hello blob'));
    const first = blobsCheck.start?.() ?? blobsCheck;
    first.onRecord?.(f.id, { seq: 1, kind: 'event', payload: { $blob: `sha256:${'0'.repeat(64)}`, bytes: 1 } }, `sessions/${f.id}/journal.jsonl`);
    const report = await verifyStore(f.root);
    expect(report.ok).toBe(true);
    expect(report.store).toEqual([]);
  });

  it('hashes a large blob in chunks and finds a flipped byte near its end', async () => {
    const big = Buffer.alloc(5 * (1 << 20) + 123, 'abcdefgh');
    const f = await withBlob(big);
    let largest = 0;
    const counting = { ...nodeFs, readSync: (fd: number, buf: Buffer, offset: number, length: number, position: number) => {
      largest = Math.max(largest, length);
      return nodeFs.readSync(fd, buf, offset, length, position);
    } };
    expect((await verifyStore(f.root, { fs: counting })).ok).toBe(true);
    expect(largest).toBeLessThanOrEqual(1 << 20);
    const fd = fs.openSync(f.file, 'r+');
    fs.writeSync(fd, Buffer.from('Z'), 0, 1, big.length - 2);
    fs.closeSync(fd);
    const report = await verifyStore(f.root, { sessionId: f.id });
    expect(report.ok).toBe(false);
    expect(report.sessions[0]?.findings).toEqual([
      { severity: 'error', check: 'blobs', message: `blob ${f.ref} referenced at seq 1 is damaged: its sha256 does not match its name`, file: `sessions/${f.id}/journal.jsonl` },
    ]);
  });
});
