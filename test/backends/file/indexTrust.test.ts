import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { indexOf, journalOf, lines, note, store, syncNoting } from './storeHelpers.js';

/**
 * Mutation gaps of the reader/recovery guards (docs/RELIABILITY.md, Mutation testing): an open
 * trusts an index entry only if the journal still ends where and how it says (open.ts trustHint),
 * and a write open that had to scan syncs what it scanned before it reports it (open.ts, the
 * fsync after the scan). Both survived `npm run mutate` before these tests.
 */

/** A closed session with seqs 1 and 2 committed, and its index entry. */
async function twoRecords(root: string) {
  const s = store(root);
  const { sessionId } = await s.create({});
  await s.append(sessionId, [note(1)]);
  await s.append(sessionId, [note(2)]);
  await s.closeAll();
  const entry = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as Record<string, unknown>;
  expect(entry.lastSeq).toBe(2);
  return { sessionId, entry };
}

describe('an index entry is trusted only if the journal still ends where and how it says', () => {
  it('an entry whose lastSeq or checksum does not match the line at its offset is ignored: the journal answers', async () => {
    for (const tamper of [{ lastSeq: 7 }, { lastCrc: '00000000' }] as Array<Record<string, unknown>>) {
      const root = tempDir();
      const { sessionId, entry } = await twoRecords(root);
      fs.writeFileSync(indexOf(root, sessionId), JSON.stringify({ ...entry, ...tamper }), { mode: 0o600 });
      const s = store(root);
      const opened = await s.open(sessionId, 'write');
      expect(opened.lastSeq, JSON.stringify(tamper)).toBe(2);
      expect((await s.append(sessionId, [note(3)])).firstSeq).toBe(3); // gapless: planned from the journal, not the entry
      await s.closeAll();
      const fresh = store(root);
      expect((await fresh.read(sessionId)).records.map((r) => r.seq)).toEqual([1, 2, 3]);
      await fresh.closeAll();
    }
  });
});

describe('a write open that scanned the journal syncs it before reporting what it found', () => {
  it('bytes a killed writer left unsynced, with no entry covering them, are durable once the open reports them', async () => {
    const root = tempDir();
    const w = store(root);
    const { sessionId } = await w.create({});
    await w.append(sessionId, [note(1)]);
    await w.append(sessionId, [note(2)]);
    await w.closeAll();
    // seq 2 as a killed writer left it: written whole, never synced; the entry stops at seq 1
    const journal = fs.readFileSync(journalOf(root, sessionId));
    const seq2 = lines(journal)[2] as Buffer;
    const committed = journal.length - seq2.length;
    fs.truncateSync(journalOf(root, sessionId), committed);
    const one = store(root);
    await one.open(sessionId, 'write'); // rewrites the entry to end at seq 1
    await one.closeAll();
    fs.appendFileSync(journalOf(root, sessionId), seq2);
    const synced = { size: committed };
    const s = store(root, { fs: syncNoting(journalOf(root, sessionId), synced) });
    expect((await s.open(sessionId, 'write')).lastSeq).toBe(2);
    await s.closeAll();
    // power cut: what was synced survives, plus half of whatever was not
    const size = fs.statSync(journalOf(root, sessionId)).size;
    fs.truncateSync(journalOf(root, sessionId), synced.size + Math.floor((size - synced.size) / 2));
    const fresh = store(root);
    expect((await fresh.open(sessionId, 'write')).lastSeq).toBe(2); // never Corrupt, never loses what was reported
    await fresh.closeAll();
  });
});

