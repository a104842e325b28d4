import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { indexOf, journalOf, lines, note, store, syncNoting } from './storeHelpers.js';

/**
 * Hole 1 of issue 14: the index may vouch only for bytes known durable. A writer killed after
 * writing a batch but before its fdatasync leaves the batch in the page cache; a second store
 * that only reads must not let the index vouch for it, and a write open must sync it before it
 * reports it or lets the index vouch for it.
 */

/** A session with seq 1 acknowledged and seq 2 written whole but never synced (the writer was killed). */
async function killedMidAppend(root: string) {
  const w = store(root);
  const { sessionId } = await w.create({});
  await w.append(sessionId, [note(1)]);
  await w.closeAll();
  const before = fs.readFileSync(journalOf(root, sessionId));
  // what the killed writer's pwrite of seq 2 left: copied from a real append in another store
  const scratch = tempDir();
  const x = store(scratch);
  const { sessionId: other } = await x.create({});
  await x.append(other, [note(1)]);
  await x.append(other, [note(2)]);
  await x.closeAll();
  const seq2 = lines(fs.readFileSync(journalOf(scratch, other)))[2] as Buffer;
  fs.appendFileSync(journalOf(root, sessionId), seq2);
  return { sessionId, committedBytes: before.length, seq2 };
}

describe('a reader never lets the index vouch for bytes nobody synced', () => {
  it('list and read by a second store, then a power loss that keeps part of the unsynced batch: the next write open recovers a torn tail', async () => {
    const root = tempDir();
    const { sessionId, committedBytes, seq2 } = await killedMidAppend(root);
    const reader = store(root);
    expect((await reader.list()).sessions.map((s) => s.lastSeq)).toEqual([2]);
    const page = await reader.read(sessionId);
    expect(page.records.map((r) => r.seq)).toEqual([1, 2]); // documented: a reader may see a complete batch not yet durable
    expect((await reader.open(sessionId, 'read')).lastSeq).toBe(2);
    await reader.closeAll();
    await new Promise((r) => setTimeout(r, 100)); // any background index write has landed
    const entry = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as { lastSeq: number; bytes: number };
    expect(entry.bytes).toBe(committedBytes);
    expect(entry.lastSeq).toBe(1);
    // power loss: the page cache kept only part of seq 2 (same inode)
    fs.truncateSync(journalOf(root, sessionId), committedBytes + Math.floor(seq2.length / 2));
    const next = store(root);
    const opened = await next.open(sessionId, 'write');
    expect(opened.lastSeq).toBe(1);
    expect(opened.recovered?.bytes).toBe(Math.floor(seq2.length / 2));
    await next.closeAll();
  });

  it('a write open syncs the bytes a killed writer left before the index vouches for them, even when an entry already covers them', async () => {
    const root = tempDir();
    const { sessionId, committedBytes, seq2 } = await killedMidAppend(root);
    // an entry covering the unsynced batch, as a reader of an older version wrote it
    const entry = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as Record<string, unknown>;
    const rebuilt = store(root);
    await rebuilt.open(sessionId, 'write'); // the first open rewrites the entry to cover seq 2
    await rebuilt.closeAll();
    const covering = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as Record<string, unknown>;
    expect(covering.bytes).toBe(committedBytes + seq2.length);
    expect(entry.bytes).toBe(committedBytes);
    // A write open trusting that entry, on a layer that notes the journal's size at each sync of it:
    // a power cut after it keeps what was synced, plus half of whatever was not.
    const synced = { size: committedBytes };
    const s = store(root, { fs: syncNoting(journalOf(root, sessionId), synced) });
    expect((await s.open(sessionId, 'write')).lastSeq).toBe(2);
    await s.closeAll();
    const size = fs.statSync(journalOf(root, sessionId)).size;
    fs.truncateSync(journalOf(root, sessionId), synced.size + Math.floor((size - synced.size) / 2));
    const fresh = store(root);
    const opened = await fresh.open(sessionId, 'write'); // never Corrupt
    expect(opened.lastSeq).toBe(2); // the open made seq 2 durable before reporting it
    await fresh.closeAll();
  });
});

