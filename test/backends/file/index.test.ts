import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { indexOf, indexSettled, journalOf, lines, message, note, store, storeError } from './storeHelpers.js';

const LONG = `${'word '.repeat(60)}end`;

/** A session with a title and a mix of message and non-message records; returns what list must say. */
async function fixture() {
  const root = tempDir();
  const s = store(root);
  const { sessionId, createdAt } = await s.create({ title: 'indexed' });
  await s.append(sessionId, [{ kind: 'note', text: 'not a message' }]);
  await s.append(sessionId, [message('user', '  hello \n\n  world\t!  ')]);
  await s.append(sessionId, [message('assistant', [{ type: 'text', text: 'part one' }, { type: 'image' }, 'two'])]);
  await s.append(sessionId, [message('system', '   '), { kind: 'toolResult', output: 'x' }]); // nothing to summarize
  await s.append(sessionId, [message('user', LONG)]);
  await s.append(sessionId, [note(7)]);
  const page = await s.read(sessionId);
  await s.closeAll();
  const expected: SessionSummary = {
    sessionId, title: 'indexed', createdAt, updatedAt: (page.records.at(-1) as { ts: string }).ts, lastSeq: 7,
    bytes: fs.statSync(journalOf(root, sessionId)).size,
    firstMessage: 'user: hello world !',
    lastMessage: `user: ${LONG.replace(/\s+/g, ' ').slice(0, 113)}…`,
  };
  return { root, sessionId, expected, index: indexOf(root, sessionId) };
}

function readIndex(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** list and both open modes agree with `expected`; a write-mode open rewrites the index entry. */
async function expectRebuilt(f: Awaited<ReturnType<typeof fixture>>): Promise<void> {
  const s = store(f.root);
  expect((await s.list()).sessions).toEqual([f.expected]);
  expect((await s.open(f.sessionId, 'read')).lastSeq).toBe(7);
  expect((await s.read(f.sessionId)).records).toHaveLength(7);
  expect((await s.open(f.sessionId, 'write')).lastSeq).toBe(7);
  await s.closeAll();
  const entry = readIndex(f.index);
  expect(entry).toMatchObject({ ...f.expected, records: 7, ino: fs.statSync(journalOf(f.root, f.sessionId)).ino });
  expect((await store(f.root).list()).sessions).toEqual([f.expected]);
}

describe('index entries', () => {
  it('summarize the session: lastSeq, bytes, first and last message cut at 120 characters', async () => {
    const f = await fixture();
    expect((f.expected.lastMessage as string).length).toBe(120);
    // written by the process that appended (its writer's count, not a rescan): 7 records in 6 commits
    expect(readIndex(f.index)).toMatchObject({ ...f.expected, records: 7 });
    expect((await store(f.root).list()).sessions).toEqual([f.expected]);
    // code points, not UTF-16 units: an astral character is never split
    const s = store(f.root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [message('user', '😀'.repeat(200))]);
    const listed = (await s.list()).sessions.find((x) => x.sessionId === sessionId) as SessionSummary;
    expect(Array.from(listed.firstMessage as string)).toHaveLength(120);
    expect(listed.firstMessage).toBe(`user: ${'😀'.repeat(113)}…`);
    await s.closeAll();
  });

  it('a deleted entry is rebuilt from the journal', async () => {
    const f = await fixture();
    fs.rmSync(f.index);
    await expectRebuilt(f);
  });

  it('a damaged or foreign entry is rebuilt', async () => {
    const f = await fixture();
    const good = readIndex(f.index);
    const variants: Array<string | Record<string, unknown>> = [
      '', 'not json', '{"v":1,', '[]', 'null',
      { ...good, v: 2 }, { ...good, sessionId: 'someone-else' }, { ...good, bytes: 'many' }, { ...good, lastCrc: undefined },
    ];
    for (const v of variants) {
      fs.writeFileSync(f.index, typeof v === 'string' ? v : JSON.stringify(v));
      await expectRebuilt(f);
    }
    // an entry that is not a private file is not read
    fs.chmodSync(f.index, 0o644);
    fs.writeFileSync(f.index, JSON.stringify({ ...good, lastSeq: 99 }));
    await expectRebuilt(f);
  });

  it('an entry that does not match the journal is not trusted', async () => {
    const f = await fixture();
    const good = readIndex(f.index);
    const journal = fs.readFileSync(journalOf(f.root, f.sessionId));
    const ls = lines(journal);
    const endOf = (lineNo: number) => ls.slice(0, lineNo).reduce((n, l) => n + l.length, 0);
    const crcOf = (lineNo: number) => /"crc":"([0-9a-f]{8})"/.exec((ls[lineNo - 1] as Buffer).toString())?.[1];
    const lies: Array<Record<string, unknown>> = [
      { bytes: journal.length - 5, lastSeq: 99, records: 99 }, // not a line end
      { bytes: journal.length + 100, lastSeq: 99, records: 99 }, // past the end
      { bytes: endOf(4), lastSeq: 99, records: 3, lastCrc: crcOf(4) }, // a line end, the wrong seq
      { bytes: endOf(4), lastSeq: 3, records: 3, lastCrc: 'deadbeef' }, // a line end, the wrong crc
      { bytes: journal.length, lastSeq: 5, records: 5, lastCrc: crcOf(ls.length) }, // the end, the wrong seq
      { bytes: journal.length, lastSeq: 99, records: 99, ino: (good.ino as number) + 1 }, // another file
      { bytes: 3, lastSeq: 0, records: 0 }, // inside the header
    ];
    for (const lie of lies) {
      fs.writeFileSync(f.index, JSON.stringify({ ...good, ...lie }));
      const s = store(f.root);
      expect((await s.open(f.sessionId, 'read')).lastSeq).toBe(7);
      const page = await s.read(f.sessionId);
      expect(page.lastSeq).toBe(7);
      expect(page.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      await s.closeAll();
      if (lie.bytes !== journal.length || lie.ino !== undefined) {
        // list checks the journal's length and inode only
        expect((await store(f.root).list()).sessions.map((x) => x.lastSeq)).toEqual([7]);
      }
      const w = store(f.root);
      expect((await w.open(f.sessionId, 'write')).lastSeq).toBe(7);
      expect(await w.append(f.sessionId, [note(8)])).toEqual({ firstSeq: 8, lastSeq: 8 });
      await w.closeAll();
      fs.writeFileSync(journalOf(f.root, f.sessionId), journal); // back to 7 records, same inode
    }
    // an entry vouching for a true prefix is used, and the rest of the journal is scanned
    fs.writeFileSync(f.index, JSON.stringify({ ...good, bytes: endOf(4), lastSeq: 3, records: 3, lastCrc: crcOf(4), firstMessage: 'user: hello world !', lastMessage: 'assistant: part one two' }));
    expect((await store(f.root).list()).sessions).toEqual([f.expected]);
    const s = store(f.root);
    expect((await s.open(f.sessionId, 'read')).lastSeq).toBe(7);
    await s.closeAll();
  });

  it('a failing index write does not fail the append', async () => {
    const root = tempDir();
    const warnings: string[] = [];
    const s = store(root, { warn: (m) => warnings.push(m) });
    const { sessionId } = await s.create({});
    fs.rmSync(indexOf(root, sessionId));
    fs.mkdirSync(indexOf(root, sessionId)); // the rename over it fails (EISDIR), even for root
    expect(await s.append(sessionId, [message('user', 'still durable')])).toEqual({ firstSeq: 1, lastSeq: 1 });
    expect(await s.append(sessionId, [note(2)])).toEqual({ firstSeq: 2, lastSeq: 2 });
    await indexSettled(s);
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((w) => w === `index entry of session ${sessionId} not written; it will be rebuilt from the journal`)).toBe(true);
    expect(fs.readdirSync(path.join(root, 'index'))).toEqual([`${sessionId}.json`]); // no temp files left behind
    expect((await s.list()).sessions.map((x) => [x.lastSeq, x.firstMessage])).toEqual([[2, 'user: still durable']]);
    await s.closeAll();

    // the index folder itself gone: create and append still succeed
    fs.rmSync(path.join(root, 'index'), { recursive: true });
    fs.writeFileSync(path.join(root, 'index'), '');
    warnings.length = 0;
    const { sessionId: second } = await s.create({});
    expect(await s.append(second, [note(1)])).toEqual({ firstSeq: 1, lastSeq: 1 });
    await indexSettled(s);
    expect(warnings).toContain(`index entry of session ${second} not written; it will be rebuilt from the journal`);
    expect((await s.list()).sessions.map((x) => x.lastSeq).sort()).toEqual([1, 2]);
    await s.closeAll();

    fs.rmSync(path.join(root, 'index'));
    const fresh = store(root);
    expect((await fresh.open(sessionId, 'write')).lastSeq).toBe(2);
    expect((await fresh.open(second, 'write')).lastSeq).toBe(1);
    await fresh.closeAll();
  });
});

describe('list', () => {
  async function sessions(count: number, clock: () => number) {
    const root = tempDir();
    const s = store(root, { clock });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await s.create({ title: `s${i}` })).sessionId);
    return { root, s, ids };
  }

  async function listAll(s: ReturnType<typeof store>, limit: number): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 100; guard++) {
      const page = await s.list({ limit, cursor });
      expect(page.sessions.length).toBeLessThanOrEqual(limit);
      out.push(...page.sessions);
      if (!page.nextCursor) return out;
      cursor = page.nextCursor;
    }
    throw new Error('list paging did not terminate');
  }

  it('pages with limit and cursor, most recently updated first, every session once', async () => {
    let now = Date.parse('2031-05-01T10:00:00.000Z');
    const { root, s, ids } = await sessions(7, () => (now += 1000));
    // updates in a scrambled order; session 5 is never appended to
    for (const i of [3, 0, 6, 1, 4, 2]) await s.append(ids[i] as string, [note(i)]);
    const order = [2, 4, 1, 6, 0, 3, 5].map((i) => ids[i]);
    for (const limit of [1, 2, 3, 6, 7, 100]) {
      expect((await listAll(s, limit)).map((x) => x.sessionId)).toEqual(order);
    }
    expect((await s.list({ limit: 7 })).nextCursor).toBeUndefined();
    // an append moves that session to the front
    await s.append(ids[5] as string, [note(5)]);
    expect((await s.list({ limit: 1 })).sessions[0]?.sessionId).toBe(ids[5]);
    await s.closeAll();
    // and a restarted store, reading index entries only, agrees
    const fresh = store(root);
    const listed = await listAll(fresh, 2);
    expect(listed.map((x) => x.sessionId)).toEqual([5, 2, 4, 1, 6, 0, 3].map((i) => ids[i]));
    expect(listed.map((x) => x.updatedAt)).toEqual([...listed.map((x) => x.updatedAt)].sort().reverse());
    await storeError(fresh.list({ cursor: 'not a cursor' }), 'InvalidArgument');
  });

  it('pages exactly through sessions with equal update times (ties: newer id first)', async () => {
    const { s, ids } = await sessions(9, () => Date.parse('2031-05-01T10:00:00.000Z'));
    const listed = await listAll(s, 4);
    expect(listed.map((x) => x.sessionId)).toEqual([...ids].sort().reverse());
    expect(new Set(listed.map((x) => x.sessionId)).size).toBe(9);
    await s.closeAll();
  });

  it('is not broken by a read-only session whose journal another writer damaged', async () => {
    const root = tempDir();
    const writer = store(root);
    const { sessionId: damaged } = await writer.create({ title: 'damaged' });
    const { sessionId: fine } = await writer.create({ title: 'fine' });
    await writer.append(damaged, [note(1)]);
    await writer.closeAll();
    const warnings: string[] = [];
    const s = store(root, { warn: (m) => warnings.push(m) });
    await s.open(damaged, 'read');
    // bytes from elsewhere: a damaged line followed by a valid one (corruption, not a torn tail)
    const valid = lines(fs.readFileSync(journalOf(root, damaged))).at(-1) as Buffer;
    fs.appendFileSync(journalOf(root, damaged), Buffer.concat([Buffer.from('garbage\n'), valid]));
    await storeError(s.read(damaged), 'Corrupt');
    // list answers like a store that never opened it: the other sessions, a warning for this one
    const fresh = await store(root, { warn: () => {} }).list();
    expect(fresh.sessions.map((x) => x.sessionId)).toEqual([fine]);
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([fine]);
    expect(warnings).toContain(`session ${damaged} left out of the list: Corrupt`);
    await s.closeAll();
  });

  it('leaves out a create that never completed and folders that are not sessions', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.closeAll();
    fs.mkdirSync(path.join(root, 'sessions', 'half-created'), { mode: 0o700 });
    fs.writeFileSync(path.join(root, 'sessions', 'half-created', 'journal.jsonl.tmp'), 'x', { mode: 0o600 });
    fs.mkdirSync(path.join(root, 'sessions', '.hidden'), { mode: 0o700 });
    expect((await store(root).list()).sessions.map((x) => x.sessionId)).toEqual([sessionId]);
  });
});
