import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompactionStep } from '../../../src/backends/file/journal/compact.js';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import type { StoredRecord } from '../../../src/domain/types.js';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexSettled, journalOf, lines, note, sealed, store, storeError, readAll } from './storeHelpers.js';

/**
 * A compaction stalled at one of its steps (the test seam awaits: the event loop runs, other
 * requests are served) while the world changes under it: its journal replaced or appended to,
 * its lease taken away, another writer compacting the same session. At each publishing rename
 * the fence (journal/compact.ts commitFence) must find it and publish nothing more: the journal
 * byte-identical to what is at its path, the right error at stage preCommit, the session
 * read-only here, and no archive a reader would take for a finished generation.
 * Also: the stalled compaction holds its own session's queue, and only that one.
 */

const archiveOf = (root: string, id: string, g: number) => path.join(root, 'history', id, `${g}.jsonl`);
const historyDirOf = (root: string, id: string) => path.join(root, 'history', id);
const holderOf = (root: string, id: string) => path.join(root, 'locks', `${id}.lock.holder.json`);

/** A hook that stops the compaction at `step` until released. */
function stallAt(step: CompactionStep) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const at = new Promise<void>((r) => { reached = r; });
  return {
    hooks: { compactionStep: async (s: CompactionStep) => { if (s === step) { reached(); await gate; } } },
    reached: at,
    release: () => release(),
  };
}


/** A session with `n` notes, left open for writing in `s`. */
async function sessionIn(s: FileSessionStore, n: number): Promise<string> {
  const { sessionId } = await s.create({ title: 'fence' });
  for (let i = 1; i <= n; i++) await s.append(sessionId, [note(i, { pad: 'p'.repeat(200) })]);
  await indexSettled(s);
  return sessionId;
}

/** Takes the lease away as a stale takeover by another host would: a new token in the holder record. */
function takeLease(root: string, id: string): void {
  const holder = holderOf(root, id);
  fs.writeFileSync(holder, JSON.stringify({ ...JSON.parse(fs.readFileSync(holder, 'utf8')), token: 'another-holder' }));
}

/** After a refused compaction: nothing temp, history lists nothing new, no verify error, and a fresh writer compacts. */
async function nothingPublished(root: string, id: string, lastSeq: number): Promise<void> {
  expect(fs.existsSync(`${journalOf(root, id)}.tmp`), 'the new journal\'s temp removed').toBe(false);
  const names = fs.existsSync(historyDirOf(root, id)) ? fs.readdirSync(historyDirOf(root, id)) : [];
  expect(names.filter((n) => n.endsWith('.tmp')), 'no archive temp').toEqual([]);
  const fresh = store(root);
  expect(await fresh.history(id), 'no generation listed').toEqual([]);
  // An archive of the still-active generation 0, if one was published, is never read as one.
  expect((await readAll(fresh, id, 0)).map((r) => r.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  const report = await verifyStore(root);
  expect(report.totals.errors, JSON.stringify(report.sessions.flatMap((s) => s.findings))).toBe(0);
  await fresh.open(id, 'write');
  expect(await fresh.compact(id, { summary: 'after', throughSeq: lastSeq - 1 })).toMatchObject({ generation: 1, archived: { generation: 0, records: lastSeq } });
  expect((await fresh.history(id)).map((h) => h.generation)).toEqual([0]);
  await fresh.closeAll();
}

describe('compaction: the commit-point fence', () => {
  it('the journal replaced while the new journal is written → Conflict preCommit; the journal byte-identical; the archive left is no generation', async () => {
    const root = tempDir();
    const stall = stallAt('archived');
    const s = store(root, { hooks: stall.hooks });
    const id = await sessionIn(s, 6);
    const compaction = s.compact(id, { summary: 's', throughSeq: 4 });
    await stall.reached;
    expect(fs.existsSync(archiveOf(root, id, 0)), 'the archive of generation 0 is in place').toBe(true);
    // Another program renames a copy over the journal (same bytes, another inode).
    const copy = `${journalOf(root, id)}.other`;
    fs.copyFileSync(journalOf(root, id), copy);
    fs.chmodSync(copy, 0o600);
    fs.renameSync(copy, journalOf(root, id));
    const before = fs.readFileSync(journalOf(root, id));
    const ino = fs.statSync(journalOf(root, id)).ino;
    stall.release();
    const err = await storeError(compaction, 'Conflict');
    expect(err.details).toMatchObject({ reason: 'journalChanged', stage: 'preCommit' });
    expect(fs.readFileSync(journalOf(root, id)).equals(before)).toBe(true);
    expect(fs.statSync(journalOf(root, id)).ino).toBe(ino);
    await storeError(s.append(id, [note(7)]), 'ReadOnly'); // fail-stopped here
    await indexSettled(s);
    await nothingPublished(root, id, 6);
  });

  it('the journal appended to from outside (same file, longer) while the new journal is written → Conflict preCommit, nothing published', async () => {
    const root = tempDir();
    const stall = stallAt('written');
    const s = store(root, { hooks: stall.hooks });
    const id = await sessionIn(s, 6);
    const compaction = s.compact(id, { summary: 's', throughSeq: 4 });
    await stall.reached;
    fs.appendFileSync(journalOf(root, id), sealed('{"seq":7,"ts":"2026-01-01T00:00:00.000Z","kind":"note","i":7}'));
    const before = fs.readFileSync(journalOf(root, id));
    stall.release();
    const err = await storeError(compaction, 'Conflict');
    expect(err.details).toMatchObject({ reason: 'journalChanged', stage: 'preCommit' });
    expect(fs.readFileSync(journalOf(root, id)).equals(before)).toBe(true);
    expect(lines(before).length).toBe(1 + 7);
    await indexSettled(s);
    await nothingPublished(root, id, 7);
  });

  it('the lease lost while the new journal is written → LeaseLost preCommit; the journal byte-identical; read-only here', async () => {
    const root = tempDir();
    const stall = stallAt('written');
    const s = store(root, { leases: true, hooks: stall.hooks });
    const id = await sessionIn(s, 6);
    const before = fs.readFileSync(journalOf(root, id));
    const compaction = s.compact(id, { summary: 's', throughSeq: 4 });
    await stall.reached;
    takeLease(root, id);
    stall.release();
    const err = await storeError(compaction, 'LeaseLost');
    expect(err.details.stage).toBe('preCommit');
    expect(fs.readFileSync(journalOf(root, id)).equals(before)).toBe(true);
    await storeError(s.append(id, [note(7)]), 'ReadOnly');
    await s.closeAll();
    fs.rmSync(path.join(root, 'locks'), { recursive: true }); // the "other holder" is gone
    await nothingPublished(root, id, 6);
  });

  it('the lease lost while the archive is copied → LeaseLost preCommit; nothing at all in history', async () => {
    const root = tempDir();
    const stall = stallAt('copied');
    const s = store(root, { leases: true, hooks: stall.hooks });
    const id = await sessionIn(s, 6);
    const before = fs.readFileSync(journalOf(root, id));
    const compaction = s.compact(id, { summary: 's', throughSeq: 4 });
    await stall.reached;
    takeLease(root, id);
    stall.release();
    const err = await storeError(compaction, 'LeaseLost');
    expect(err.details.stage).toBe('preCommit');
    expect(fs.readFileSync(journalOf(root, id)).equals(before)).toBe(true);
    expect(fs.readdirSync(historyDirOf(root, id)), 'the archive was never renamed in').toEqual([]);
    await s.closeAll();
    fs.rmSync(path.join(root, 'locks'), { recursive: true });
    await nothingPublished(root, id, 6);
  });

  it('another writer compacts and appends while this one stalls before its archive: their archive and journal stay theirs', async () => {
    // Leases are off: as on a file system whose locks do not reach the other writer, where only
    // the journal's identity can tell the stalled writer that its generation is gone.
    const root = tempDir();
    const stall = stallAt('scanned');
    const a = store(root, { hooks: stall.hooks });
    const id = await sessionIn(a, 6);
    const compaction = a.compact(id, { summary: 'by a', throughSeq: 4 });
    await stall.reached;
    const b = store(root);
    await b.open(id, 'write');
    await b.append(id, [note(7, { by: 'b' })]);
    await b.append(id, [note(8, { by: 'b' })]);
    expect(await b.compact(id, { summary: 'by b', throughSeq: 7 })).toMatchObject({ generation: 1, archived: { generation: 0, records: 8 } });
    await b.append(id, [note(9, { by: 'b' })]);
    await indexSettled(b);
    const history = snapshotTree(path.join(root, 'history'));
    const sessions = snapshotTree(path.join(root, 'sessions'));
    stall.release();
    const err = await storeError(compaction, 'Conflict');
    expect(err.details).toMatchObject({ reason: 'journalChanged', stage: 'preCommit' });
    expect(snapshotTree(path.join(root, 'history')), 'b\'s archive of generation 0 untouched').toEqual(history);
    expect(snapshotTree(path.join(root, 'sessions'))).toEqual(sessions);
    await b.closeAll();
    const fresh = store(root);
    expect((await readAll(fresh, id, 0)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await readAll(fresh, id)).map((r) => r.seq)).toEqual([7, 8, 9]);
    expect((await verifyStore(root)).totals.errors).toBe(0);
  });
});

describe('compaction: it holds its own session\'s queue, and only that one', () => {
  it('appends and reads of the compacting session wait and come after it in order; another session is served meanwhile', async () => {
    const root = tempDir();
    const stall = stallAt('written');
    const s = store(root, { hooks: stall.hooks });
    const x = await sessionIn(s, 6);
    const y = await sessionIn(s, 1);
    const order: string[] = [];
    const compaction = s.compact(x, { summary: 's', throughSeq: 4 }).then((r) => (order.push('compact'), r));
    await stall.reached;
    const x7 = s.append(x, [note(7)]).then((r) => (order.push('x7'), r));
    const x8 = s.append(x, [note(8)]).then((r) => (order.push('x8'), r));
    const xRead = s.read(x, { afterSeq: 0 }).then((r) => (order.push('x read'), r));
    // The other session commits and reads while the compaction is stalled.
    expect(await s.append(y, [note(2)])).toEqual({ firstSeq: 2, lastSeq: 2 });
    order.push('y2');
    expect((await s.read(y, { afterSeq: 0 })).lastSeq).toBe(2);
    order.push('y read');
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['y2', 'y read']);
    stall.release();
    const [res, a7, a8, page] = await Promise.all([compaction, x7, x8, xRead]);
    expect(res).toMatchObject({ generation: 1, checkpointSeq: 4 });
    expect(order[2]).toBe('compact');
    expect(order.slice(3).filter((o) => o !== 'x read')).toEqual(['x7', 'x8']);
    expect([a7, a8]).toEqual([{ firstSeq: 7, lastSeq: 7 }, { firstSeq: 8, lastSeq: 8 }]);
    expect(page.records.map((r) => r.seq)).toEqual([4, 5, 6, 7, 8]); // the new generation, the appends after its checkpoint
    await s.closeAll();
    const fresh = store(root);
    expect((await readAll(fresh, x)).map((r) => [r.seq, r.kind])).toEqual([[4, 'checkpoint'], [5, 'note'], [6, 'note'], [7, 'note'], [8, 'note']]);
    expect((await readAll(fresh, x, 0)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
