/**
 * session/read's text path (FileSessionStore.readText): each record's stored JSON bytes passed on
 * without building objects. It must return exactly what `read` returns, and report damage the
 * same way.
 */
import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import type { RecordsText } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { journalOf, message, note, store, storeError } from './storeHelpers.js';

const parsed = (page: RecordsText) => {
  const text = `[${Buffer.concat(page.body).toString('utf8')}]`;
  const records = JSON.parse(text) as unknown[];
  expect(records).toHaveLength(page.count);
  expect(JSON.stringify(records)).toBe(text); // byte for byte: no member repeated, dropped or re-encoded
  return records;
};

/** Every page of a session through both paths: the same records, the same page ends. */
async function expectSamePages(s: FileSessionStore, sessionId: string, limit: number): Promise<number> {
  let afterSeq = 0;
  let pages = 0;
  for (;;) {
    const objects = await s.read(sessionId, { afterSeq, limit });
    const text = await s.readText(sessionId, { afterSeq, limit });
    expect(parsed(text)).toEqual(objects.records);
    expect(text.nextAfterSeq).toBe(objects.nextAfterSeq);
    pages += 1;
    if (text.nextAfterSeq === null) return pages;
    afterSeq = text.nextAfterSeq;
  }
}

describe('session/read as stored bytes', () => {
  it('returns what read returns: batches without batchEnd, a checkpoint, kinds, pages, generations', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [message('user', 'one "quoted" ünïcödé 😀')]);
    await s.append(sessionId, [note(2), message('assistant', 'three'), note(4)]); // one batch: batchEnd on each line
    await s.append(sessionId, [{ kind: 'event', name: 'x' }]);
    await s.compact(sessionId, { summary: 'so far', throughSeq: 2 });
    await s.append(sessionId, [message('user', 'after')]);
    for (const opts of [{}, { afterSeq: 2 }, { limit: 2 }, { kinds: ['message'] }, { kinds: ['checkpoint', 'note'] }, { generation: 0 }, { generation: 0, afterSeq: 1, limit: 2 }]) {
      const objects = await s.read(sessionId, opts);
      const text = await s.readText(sessionId, opts);
      expect(parsed(text), JSON.stringify(opts)).toEqual(objects.records);
      expect({ lastSeq: text.lastSeq, nextAfterSeq: text.nextAfterSeq }).toEqual({ lastSeq: objects.lastSeq, nextAfterSeq: objects.nextAfterSeq });
    }
    const all = parsed(await s.readText(sessionId, { generation: 0 })) as Array<Record<string, unknown>>;
    expect(all.some((r) => 'batchEnd' in r || 'crc' in r)).toBe(false);
    await s.closeAll();
  });

  it('reports a damaged line or a wrong seq as Corrupt, like read', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    for (let i = 1; i <= 3; i++) await s.append(sessionId, [note(i)]);
    await s.closeAll();
    const file = journalOf(root, sessionId);
    const good = fs.readFileSync(file);
    // a flipped byte inside record 2's line: its checksum no longer holds
    const at = good.indexOf('"i":2');
    const flipped = Buffer.from(good);
    flipped[at + 4] = '7'.charCodeAt(0);
    fs.writeFileSync(file, flipped);
    const r = store(root);
    await r.open(sessionId, 'read');
    const e = await storeError(r.readText(sessionId), 'Corrupt');
    expect(e.details).toMatchObject({ seq: 2 });
    expect((await storeError(r.read(sessionId), 'Corrupt')).message).toBe(e.message);
    await r.closeAll();
  });

  it('copies lines that cross its read buffer, lines longer than it, batches, and stops where read stops', async () => {
    const root = tempDir();
    const s = store(root, { blobThreshold: 64 << 20 } as never);
    const { sessionId } = await s.create({});
    const big = (n: number, c: string) => message('user', c.repeat(n));
    // 3 MiB of lines of many sizes: most cross the 1 MiB read buffer somewhere; two are longer than it
    for (let i = 0; i < 40; i++) await s.append(sessionId, [big(1000 + ((i * 7919) % 60_000), 'é'), note(i)]);
    await s.append(sessionId, [big(1_500_000, 'x')]);
    await s.append(sessionId, [note(1), big(2_300_000, 'y'), note(2)]);
    for (let i = 0; i < 30; i++) await s.append(sessionId, [big(50_000, 'z')]);
    for (const limit of [1, 7, 10_000]) expect(await expectSamePages(s, sessionId, limit)).toBeGreaterThan(0);
    await s.closeAll();
  });

  it('at a line of another envelope, reads the page through the general path', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    for (let i = 1; i <= 4; i++) await s.append(sessionId, [note(i)]);
    await s.closeAll();
    // record 3 rewritten with its members in another (valid, canonical) order and a fresh checksum
    const file = journalOf(root, sessionId);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const rec = JSON.parse(lines[3] as string) as Record<string, unknown>;
    const { crc: _crc, ...rest } = rec;
    const body = JSON.stringify({ ts: rest.ts, seq: rest.seq, kind: rest.kind, i: rest.i }).slice(0, -1);
    lines[3] = `${body},"crc":"${crc32(Buffer.from(body)).toString(16).padStart(8, '0')}"}`;
    fs.writeFileSync(file, lines.join('\n'));
    const r = store(root);
    await r.open(sessionId, 'read');
    expect(parsed(await r.readText(sessionId))).toEqual((await r.read(sessionId)).records);
    expect((await r.read(sessionId)).records).toHaveLength(4);
    await r.closeAll();
  });

  it('reports a line with a good checksum and the wrong seq as Corrupt, like read', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    for (let i = 1; i <= 4; i++) await s.append(sessionId, [note(i)]);
    await s.closeAll();
    const file = journalOf(root, sessionId);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[3] = lines[2] as string; // record 2 twice, the same length: seq 2 where 3 was expected (the index still vouches)
    fs.writeFileSync(file, lines.join('\n'));
    const r = store(root);
    await r.open(sessionId, 'read');
    const e = await storeError(r.readText(sessionId), 'Corrupt');
    expect(e.message).toMatch(/seq 2 where 3 was expected/);
    expect((await storeError(r.read(sessionId), 'Corrupt')).message).toBe(e.message);
    await r.closeAll();
  });
});
