/**
 * session/read's text path (FileSessionStore.readText): each record's stored JSON bytes passed on
 * without building objects. It must return exactly what `read` returns, and report damage the
 * same way.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { journalOf, message, note, store, storeError } from './storeHelpers.js';

const parsed = (page: { records: Buffer[][] }) => page.records.map((parts) => JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown);

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
});
