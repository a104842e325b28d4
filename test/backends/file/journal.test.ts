import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import type { RecordInput, StoredRecord } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { faultFs, indexOf, journalOf, lines, message, note, RFC3339_MS, store } from './storeHelpers.js';

const RECORDS: RecordInput[] = [
  message('user', 'hello'),
  message('assistant', [{ type: 'text', text: 'hi ☃ — 𝄞' }, { type: 'tool_use', id: 't1', input: { q: [1, 2.5, null, true] } }]),
  { kind: 'toolResult', toolUseId: 't1', output: 'line1\nline2\t"quoted"\\', isError: false },
  { kind: 'note', nested: { deep: { deeper: ['a', { b: {} }] } }, empty: [], n: -0.125, big: 9007199254740991 },
  { kind: 'custom', '': 'empty key', 'weird key "x"': '\u0000\u001f\u2028', lone: '\ud800' },
  message('user', 'second batch, single'),
  { kind: 'note', i: 1 },
  { kind: 'note', i: 2 },
];

/** What read must give back for `input` at `seq`: the input plus seq and ts, nothing else. */
function expectStored(rec: StoredRecord, input: RecordInput, seq: number): void {
  const { seq: s, ts, ...rest } = rec;
  expect(s).toBe(seq);
  expect(ts).toMatch(RFC3339_MS);
  expect(rest).toEqual(JSON.parse(JSON.stringify(input)));
  expect(Object.keys(rec)).not.toContain('batchEnd');
  expect(Object.keys(rec)).not.toContain('crc');
}

async function readAll(s: ReturnType<typeof store>, id: string, pageSize: number, kinds?: string[]): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let afterSeq = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await s.read(id, { afterSeq, limit: pageSize, kinds });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    expect(page.nextAfterSeq).toBeGreaterThan(afterSeq);
    afterSeq = page.nextAfterSeq;
  }
  throw new Error('paging did not terminate');
}

describe('append / read round trip', () => {
  it('assigns gapless seqs across single and multi-record batches and reads back identical content', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ title: 'round trip' });
    const before = Date.now();
    expect(await s.append(sessionId, RECORDS.slice(0, 1))).toEqual({ firstSeq: 1, lastSeq: 1 });
    expect(await s.append(sessionId, RECORDS.slice(1, 5))).toEqual({ firstSeq: 2, lastSeq: 5 });
    expect(await s.append(sessionId, RECORDS.slice(5, 6), { expectedLastSeq: 5 })).toEqual({ firstSeq: 6, lastSeq: 6 });
    expect(await s.append(sessionId, RECORDS.slice(6))).toEqual({ firstSeq: 7, lastSeq: 8 });
    const after = Date.now();

    const page = await s.read(sessionId);
    expect(page.lastSeq).toBe(8);
    expect(page.nextAfterSeq).toBeNull();
    expect(page.records).toHaveLength(RECORDS.length);
    page.records.forEach((r, i) => expectStored(r, RECORDS[i] as RecordInput, i + 1));
    for (const r of page.records) {
      const t = Date.parse(r.ts);
      expect(t).toBeGreaterThanOrEqual(before - 1);
      expect(t).toBeLessThanOrEqual(after + 1);
    }
    // one batch, one ts
    expect(new Set(page.records.slice(1, 5).map((r) => r.ts)).size).toBe(1);

    // the on-disk lines carry batchEnd only for multi-record batches
    const disk = lines(fs.readFileSync(journalOf(root, sessionId))).map((l) => JSON.parse(l.toString()));
    expect(disk.map((l) => l.batchEnd)).toEqual([undefined, undefined, 5, 5, 5, 5, undefined, 8, 8]);

    for (const size of [1, 2, 3, 7, 100]) {
      expect((await readAll(s, sessionId, size)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }
    await s.closeAll();
  });

  it('pages with afterSeq, limit and kinds', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, RECORDS);

    const p1 = await s.read(sessionId, { afterSeq: 2, limit: 3 });
    expect(p1.records.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(p1.nextAfterSeq).toBe(5);
    expect(p1.lastSeq).toBe(8);
    const p2 = await s.read(sessionId, { afterSeq: 5, limit: 3 });
    expect(p2.records.map((r) => r.seq)).toEqual([6, 7, 8]);
    expect(p2.nextAfterSeq).toBeNull();
    expect((await s.read(sessionId, { afterSeq: 8 })).records).toEqual([]);
    expect((await s.read(sessionId, { afterSeq: 50 })).records).toEqual([]);

    const msgs = await s.read(sessionId, { kinds: ['message'] });
    expect(msgs.records.map((r) => r.seq)).toEqual([1, 2, 6]);
    expect(msgs.nextAfterSeq).toBeNull();
    const notes = await s.read(sessionId, { kinds: ['note'], limit: 2 });
    expect(notes.records.map((r) => r.seq)).toEqual([4, 7]);
    expect(notes.nextAfterSeq).toBe(7);
    expect((await readAll(s, sessionId, 1, ['note', 'custom'])).map((r) => r.seq)).toEqual([4, 5, 7, 8]);
    expect((await s.read(sessionId, { kinds: ['nothing'] })).records).toEqual([]);
    await s.closeAll();
  });

  it('survives a restart: a new store instance reads the same records and continues the counter', async () => {
    const root = tempDir();
    const s1 = store(root);
    const { sessionId } = await s1.create({ title: 'restart' });
    await s1.append(sessionId, RECORDS.slice(0, 4));
    await s1.append(sessionId, RECORDS.slice(4, 5));
    const first = await s1.read(sessionId);
    await s1.closeAll();

    const s2 = store(root);
    // read without opening, then open read-only, then for writing
    expect(await s2.read(sessionId)).toEqual(first);
    expect((await s2.open(sessionId, 'read')).lastSeq).toBe(5);
    expect(await s2.read(sessionId)).toEqual(first);
    const opened = await s2.open(sessionId, 'write');
    expect(opened).toMatchObject({ sessionId, mode: 'write', lastSeq: 5, title: 'restart' });
    expect(opened.recovered).toBeUndefined();
    expect(await s2.append(sessionId, RECORDS.slice(5, 7))).toEqual({ firstSeq: 6, lastSeq: 7 });
    await s2.closeAll();

    fs.rmSync(`${root}/index`, { recursive: true }); // and once more with the journal as the only source
    fs.mkdirSync(`${root}/index`, { mode: 0o700 });
    const s3 = store(root);
    expect((await s3.open(sessionId, 'write')).lastSeq).toBe(7);
    expect(await s3.append(sessionId, RECORDS.slice(7))).toEqual({ firstSeq: 8, lastSeq: 8 });
    const all = await s3.read(sessionId);
    all.records.forEach((r, i) => expectStored(r, RECORDS[i] as RecordInput, i + 1));
    expect(all.records.slice(0, 5)).toEqual(first.records);
    await s3.closeAll();
  });

  it('answers concurrent appends in arrival order with gapless seqs', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => s.append(sessionId, i % 3 === 0 ? [note(i), note(i)] : [note(i)])),
    );
    let next = 1;
    for (const [i, r] of results.entries()) {
      const n = i % 3 === 0 ? 2 : 1;
      expect(r).toEqual({ firstSeq: next, lastSeq: next + n - 1 });
      next += n;
    }
    const page = await s.read(sessionId);
    expect(page.records.map((r) => r.seq)).toEqual(Array.from({ length: next - 1 }, (_, i) => i + 1));
    expect(page.records.map((r) => r.i)).toEqual(results.flatMap((_, i) => (i % 3 === 0 ? [i, i] : [i])));
    await s.closeAll();
  });
});

describe('a read-only handle and another writer', () => {
  it('sees records another store instance committed, complete batches only', async () => {
    const root = tempDir();
    const writer = store(root);
    const { sessionId } = await writer.create({});
    await writer.append(sessionId, [note(1)]);
    const reader = store(root);
    expect((await reader.open(sessionId, 'read')).lastSeq).toBe(1);
    await writer.append(sessionId, [note(2), note(3)]);
    expect((await reader.read(sessionId)).records.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect((await reader.open(sessionId, 'read')).lastSeq).toBe(3);
    // half of a batch on disk (as if mid-write): not visible, and nothing is changed
    await writer.append(sessionId, [note(4), note(5)]);
    await writer.closeAll();
    const full = fs.readFileSync(journalOf(root, sessionId));
    const ls = lines(full);
    fs.writeFileSync(journalOf(root, sessionId), full.subarray(0, full.length - (ls.at(-1) as Buffer).length));
    // mid-write, no index entry vouches for the batch yet (a writer writes it only after its sync;
    // one that vouches for missing bytes is corruption, corruption.test.ts)
    fs.rmSync(indexOf(root, sessionId));
    const page = await reader.read(sessionId);
    expect(page.lastSeq).toBe(3);
    expect((await reader.list()).sessions.map((x) => x.lastSeq)).toEqual([3]);
    fs.writeFileSync(journalOf(root, sessionId), full); // the rest of the write lands
    expect((await reader.read(sessionId, { afterSeq: 3 })).records.map((r) => r.seq)).toEqual([4, 5]);
    await reader.closeAll();
  });
});

describe('large session', () => {
  const N = 20_000;

  it('reads exact pages at high afterSeq values through the bisecting seek', async () => {
    const root = tempDir();
    const readAt: number[] = [];
    const bigReadAt: number[] = [];
    const counting = faultFs({
      readSync: (fd, buf, off, len, pos) => {
        readAt.push(pos);
        if (len > 4096) bigReadAt.push(pos);
        return nodeFs.readSync(fd, buf, off, len, pos);
      },
    });
    const s = store(root, { fs: counting });
    const { sessionId } = await s.create({});
    for (let seq = 1; seq <= N; ) {
      const batch = Array.from({ length: Math.min(97, N - seq + 1) }, (_, i) => ({ kind: i % 5 === 0 ? 'mark' : 'note', n: seq + i }));
      const r = await s.append(sessionId, batch);
      expect(r.firstSeq).toBe(seq);
      seq = r.lastSeq + 1;
    }
    await s.closeAll();
    const size = fs.statSync(journalOf(root, sessionId)).size;
    expect(size).toBeGreaterThan(1 << 20); // larger than the line scanner's 1 MiB chunks
    const journal = fs.readFileSync(journalOf(root, sessionId));
    const dataStart = journal.indexOf(0x0a) + 1;
    const lineStart = (seq: number) => {
      let at = dataStart;
      for (let i = 1; i < seq; i++) at = journal.indexOf(0x0a, at) + 1;
      return at;
    };

    const s2 = store(root, { fs: counting });
    for (const afterSeq of [0, 1, 96, 97, 4096, 9999, 10_000, 12_345, 16_383, 19_990, 19_999]) {
      for (const limit of [1, 10, 250]) {
        readAt.length = 0;
        bigReadAt.length = 0;
        const page = await s2.read(sessionId, { afterSeq, limit });
        const want = Array.from({ length: Math.min(limit, N - afterSeq) }, (_, i) => afterSeq + 1 + i);
        expect(page.records.map((r) => r.seq)).toEqual(want);
        expect(page.records.map((r) => r.n)).toEqual(want);
        expect(page.lastSeq).toBe(N);
        expect(page.nextAfterSeq).toBe(afterSeq + limit >= N ? null : afterSeq + limit);
        if (afterSeq > 1000) {
          // the page scan starts within one 64 KiB seek window before the wanted line, not at
          // the first record (a linear scan would read from dataStart)
          const target = lineStart(afterSeq + 1);
          expect(bigReadAt).not.toContain(dataStart); // only the first line's prefix is peeked (its seq)
          expect(readAt.some((p) => p <= target && p >= target - (1 << 16))).toBe(true);
        }
      }
    }
    expect((await s2.read(sessionId, { afterSeq: N })).records).toEqual([]);
    const marks = await s2.read(sessionId, { afterSeq: 15_000, limit: 3, kinds: ['mark'] });
    // batches of 97 start at 1, 98, ... ; `mark` is every 5th record of a batch
    const markSeqs: number[] = [];
    for (let start = 1; start <= N; start += 97) for (let i = 0; i < 97 && start + i <= N; i += 5) markSeqs.push(start + i);
    expect(marks.records.map((r) => r.seq)).toEqual(markSeqs.filter((x) => x > 15_000).slice(0, 3));
    expect(marks.nextAfterSeq).toBe(marks.records[2]?.seq);

    // a full paged walk sees every seq once
    const seen = await readAll(s2, sessionId, 1000);
    expect(seen.length).toBe(N);
    expect(seen.every((r, i) => r.seq === i + 1)).toBe(true);
    await s2.closeAll();
  });
});
