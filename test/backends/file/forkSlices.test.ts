import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreKey } from '../../../src/durable/storeKey.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { SLICE_BYTES } from '../../../src/backends/file/journal/slices.js';
import type { StoredRecord } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { journalOf, note, store, storeError, readAll } from './storeHelpers.js';

/**
 * session/fork in slices (journal/forkJournal.ts, create.ts createJournalFrom, open.ts
 * openJournalInSlices): a fork reads its source on a descriptor of its own, so the source's
 * writer may compact it (closing the writer's descriptor) and append to it between the fork's
 * slices without the fork seeing either; a fork bigger than many slices — plaintext or sealed —
 * holds exactly the source's records.
 */

const strip = ({ ts: _t, ...rest }: StoredRecord) => rest;


/** A session of ~`mb` MB of notes in batches, left open for writing. */
async function bigSession(s: FileSessionStore, mb: number): Promise<{ id: string; lastSeq: number }> {
  const { sessionId: id } = await s.create({ title: 'source', blobThreshold: 1 << 30 });
  let lastSeq = 0;
  while (lastSeq * 2000 < mb * SLICE_BYTES) {
    const r = await s.append(id, Array.from({ length: 50 }, (_, i) => note(lastSeq + i + 1, { pad: 'q'.repeat(1900) })));
    lastSeq = r.lastSeq;
  }
  return { id, lastSeq };
}


describe('session/fork in slices', () => {
  it.each([false, true])('a fork of many slices holds the source\'s records through atSeq, plaintext or sealed (encrypted: %s)', async (encrypted) => {
    const root = tempDir();
    const key = new StoreKey(randomBytes(32));
    const s = store(root, encrypted ? { encryptionKey: key } : {});
    const { id, lastSeq } = await bigSession(s, 3);
    const atSeq = lastSeq - 7;
    const { sessionId: forkId } = await s.fork(id, atSeq);
    const source = await readAll(s, id);
    const forked = await readAll(s, forkId);
    expect(forked.map(strip)).toEqual(source.slice(0, atSeq).map(strip));
    expect(fs.statSync(journalOf(root, forkId)).size).toBeGreaterThan(2 * SLICE_BYTES);
    expect((await s.append(forkId, [note(0)])).firstSeq).toBe(atSeq + 1);
    await s.closeAll();
    const fresh = store(root, encrypted ? { encryptionKey: key } : {});
    expect((await fresh.open(forkId, 'write')).lastSeq).toBe(atSeq + 1);
    await fresh.closeAll();
  });

  it('a registered secret in a late page of the source: SecretRejected, no session and no temp file left', async () => {
    const root = tempDir();
    const s = store(root);
    const { id } = await bigSession(s, 3);
    const secret = 'Zq8-Wk3-Pv5-Lm2-Tx9';
    await s.append(id, [note(0, { leaked: secret })]);
    await s.close(id);
    await s.open(id, 'write', { values: [secret] });
    const sessionsBefore = fs.readdirSync(`${root}/sessions`).sort();
    const err = await storeError(s.fork(id), 'SecretRejected');
    expect(err.details.path).toBe('records');
    expect(fs.readdirSync(`${root}/sessions`).sort()).toEqual(sessionsBefore);
    await s.closeAll();
  });
});
