import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParentLink, SessionCreateParams } from '../../../protocol/index.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import type { ParentLink as StoreParentLink, RecordInput, StoredRecord, TurnState } from '../../../src/domain/types.js';
import { snapshotTree, tempDir } from '../../helpers.js';
import { eio, faultFs, indexOf, indexSettled, journalOf, lines, message, note, sealed, store, storeError, unsealed } from './storeHelpers.js';

/**
 * Continuations, forks and deletion at the store level (protocol/README.md section 13):
 * the parent link in the header, session/fork (records, bytes, turn state, compacted sources,
 * secrets), session/delete to trash/, session/restore, and purge.
 * The same over the wire, in both framings, is test/conformance/lineage.test.ts.
 */

const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const trashOf = (root: string, id: string) => path.join(root, 'trash', id);
const historyDirOf = (root: string, id: string) => path.join(root, 'history', id);
const recoveryDirOf = (root: string, id: string) => path.join(root, 'recovery', id);

async function readAll(s: FileSessionStore, id: string, generation?: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await s.read(id, { afterSeq, limit: 3, ...(generation === undefined ? {} : { generation }) });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

/** Where a session's data lives: its journal, archives, index entry, recovery evidence, and the trash. */
const DATA_DIRS = ['sessions', 'history', 'index', 'recovery', 'trash'];

/** Every path under DATA_DIRS that belongs to session `id` (files and directories), relative to root. */
function pathsOf(root: string, id: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (path.relative(root, p).split(path.sep).some((part) => part === id || part.startsWith(`${id}.`))) out.push(path.relative(root, p));
      if (e.isDirectory()) walk(p);
    }
  };
  for (const d of DATA_DIRS) walk(path.join(root, d));
  return out.sort();
}

/** Bytes of every file of session `id`, keyed by path relative to the root. */
function filesOf(root: string, id: string): Record<string, string> {
  const all = snapshotTree(root);
  return Object.fromEntries(Object.entries(all).filter(([p]) => pathsOf(root, id).includes(p)));
}

/** A source line as a fork must hold it: the same line, re-sealed without `batchEnd`. */
function withoutBatchEnd(line: Buffer): Buffer {
  const text = unsealed(line);
  const stripped = text.replace(/^(\{"seq":\d+,"ts":"[^"]*"),"batchEnd":\d+,/, '$1,');
  return stripped === text ? line : sealed(stripped);
}

function journalLines(root: string, id: string): Buffer[] {
  return lines(fs.readFileSync(journalOf(root, id)));
}

function headerOf(root: string, id: string): Record<string, unknown> {
  return JSON.parse(journalLines(root, id)[0]!.toString('utf8')) as Record<string, unknown>;
}

/** The store's data (DATA_DIRS), without the writer-lease files of locks/ that every writable open rewrites. */
function dataTree(root: string): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshotTree(root)).filter(([p]) => DATA_DIRS.includes(p.split(path.sep)[0]!)));
}

function sessionDirs(root: string): string[] {
  return fs.readdirSync(path.join(root, 'sessions')).sort();
}

/**
 * A session with multi-record batches: seqs 1 | 2-4 | 5 | 6-7 | 8.
 */
const BATCHES: RecordInput[][] = [
  [message('user', 'first question')],
  [message('assistant', 'thinking'), { kind: 'event', type: 'tool.started', payload: { id: 'c1' } }, message('tool', 'out')],
  [note(5, { nested: { deep: [1, 'two', null] } })],
  [message('assistant', 'answer'), note(7)],
  [message('user', 'second question \u00e9\u{1F600}')],
];

async function richSession(s: FileSessionStore, header: Record<string, unknown> = {}): Promise<string> {
  const { sessionId } = await s.create({
    title: 'rich', cwd: '/work/x', systemPrompt: 'Be terse.', llm: { provider: 'openai', model: 'gpt-x' },
    metadata: { agent: 'test', tags: ['a'] }, ...header,
  });
  for (const batch of BATCHES) await s.append(sessionId, batch);
  return sessionId;
}

describe('parent link', () => {
  it('is stored in the header and returned by open and list, also after a restart and an index rebuild', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: parentId } = await s.create({ title: 'parent' });
    await s.append(parentId, [message('user', 'hi'), message('assistant', 'hello')]);
    const link: StoreParentLink = { sessionId: parentId, relation: 'continuation', atSeq: 2, summary: { provider: 'anthropic', model: 'claude-x', agentId: 'summarizer' } };
    const { sessionId } = await s.create({ title: 'child', parent: link });
    const { sessionId: forkLinked } = await s.create({ parent: { sessionId: parentId, relation: 'fork' } });

    expect(headerOf(root, sessionId).parent).toEqual(link);
    expect((await s.open(sessionId, 'write')).parent).toEqual(link);
    const listed = (await s.list()).sessions;
    expect(listed.find((x) => x.sessionId === sessionId)?.parent).toEqual(link);
    expect(listed.find((x) => x.sessionId === forkLinked)?.parent).toEqual({ sessionId: parentId, relation: 'fork' });
    expect(listed.find((x) => x.sessionId === parentId)).not.toHaveProperty('parent');
    await indexSettled(s);
    await s.closeAll();

    const t = store(root);
    expect((await t.open(sessionId, 'read')).parent).toEqual(link);
    expect((await t.list()).sessions.find((x) => x.sessionId === sessionId)?.parent).toEqual(link);
    await t.closeAll();

    // Without index entries the list is rebuilt from the journals: the link comes from the header.
    for (const id of [sessionId, forkLinked, parentId]) fs.rmSync(indexOf(root, id));
    const u = store(root);
    const rebuilt = (await u.list()).sessions;
    expect(rebuilt.find((x) => x.sessionId === sessionId)?.parent).toEqual(link);
    expect(rebuilt.find((x) => x.sessionId === forkLinked)?.parent).toEqual({ sessionId: parentId, relation: 'fork' });
    expect((await u.open(forkLinked, 'write')).parent).toEqual({ sessionId: parentId, relation: 'fork' });
    await u.closeAll();
  });

  it('the parent must exist: unknown, deleted or invalid ids are refused and nothing is created', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: gone } = await s.create({ title: 'to delete' });
    await s.delete(gone);
    const before = sessionDirs(root);
    const e1 = await storeError(s.create({ parent: { sessionId: UNKNOWN_ID, relation: 'continuation' } }), 'SessionNotFound');
    expect(e1.details).toMatchObject({ sessionId: UNKNOWN_ID });
    await storeError(s.create({ parent: { sessionId: gone, relation: 'fork', atSeq: 0 } }), 'SessionNotFound');
    await storeError(s.create({ parent: { sessionId: '../escape', relation: 'fork' } }), 'InvalidSessionId');
    expect(sessionDirs(root)).toEqual(before);
    // restored, it is a valid parent again
    await s.restore(gone);
    const { sessionId } = await s.create({ parent: { sessionId: gone, relation: 'fork' } });
    expect((await s.open(sessionId, 'read')).parent).toEqual({ sessionId: gone, relation: 'fork' });
    await s.closeAll();
  });

  it('has a strict shape in the protocol (extra members, unknown relations, bad atSeq or summary are refused)', () => {
    const id = UNKNOWN_ID;
    const ok = [
      { sessionId: id, relation: 'fork' },
      { sessionId: id, relation: 'continuation', atSeq: 0 },
      { sessionId: id, relation: 'continuation', atSeq: 12, summary: { provider: 'p', model: 'm' } },
      { sessionId: id, relation: 'continuation', summary: { provider: 'p', model: 'm', agentId: 'a' } },
    ];
    for (const p of ok) {
      expect(ParentLink.safeParse(p).success, JSON.stringify(p)).toBe(true);
      expect(SessionCreateParams.safeParse({ parent: p }).success, JSON.stringify(p)).toBe(true);
    }
    const bad: unknown[] = [
      { sessionId: id },
      { relation: 'fork' },
      { sessionId: id, relation: 'clone' },
      { sessionId: id, relation: 'fork', extra: 1 },
      { sessionId: id, relation: 'fork', atSeq: -1 },
      { sessionId: id, relation: 'fork', atSeq: 1.5 },
      { sessionId: id, relation: 'fork', atSeq: '3' },
      { sessionId: id, relation: 'continuation', summary: { provider: 'p' } },
      { sessionId: id, relation: 'continuation', summary: { provider: 'p', model: 'm', tokens: 3 } },
      { sessionId: id, relation: 'continuation', summary: 'text' },
      'parent-id',
      null,
    ];
    for (const p of bad) {
      expect(ParentLink.safeParse(p).success, JSON.stringify(p)).toBe(false);
      expect(SessionCreateParams.safeParse({ parent: p }).success, JSON.stringify(p)).toBe(false);
    }
  });
});

describe('fork', () => {
  it('at every atSeq (0, inside batches, the last, the default): the records and lines of the source, its header, the link', async () => {
    const root = tempDir();
    const s = store(root);
    const src = await richSession(s);
    const source = await readAll(s, src);
    const srcLines = journalLines(root, src);
    const srcBytes = fs.readFileSync(journalOf(root, src));
    const lastSeq = source.length;
    expect(lastSeq).toBe(8);

    const forks = new Map<number | undefined, string>();
    for (const atSeq of [0, 1, 2, 3, 4, 6, 7, 8, undefined]) {
      const { sessionId } = await s.fork(src, atSeq);
      forks.set(atSeq, sessionId);
      const at = atSeq ?? lastSeq;
      expect(sessionId).not.toBe(src);
      const records = await readAll(s, sessionId);
      expect(records, `atSeq ${at}`).toEqual(source.slice(0, at));
      // byte for byte the source's lines, each a batch of its own (a cut batch is no torn tail)
      expect(journalLines(root, sessionId).slice(1).map((b) => b.toString('utf8')), `atSeq ${at}`)
        .toEqual(srcLines.slice(1, at + 1).map((b) => withoutBatchEnd(b).toString('utf8')));
      const header = headerOf(root, sessionId);
      expect(header).toMatchObject({
        sessionId, title: 'rich', cwd: '/work/x', systemPrompt: 'Be terse.', llm: { provider: 'openai', model: 'gpt-x' },
        metadata: { agent: 'test', tags: ['a'] },
      });
      expect(header.parent).toMatchObject({ sessionId: src, relation: 'fork' });
      expect((header.parent as StoreParentLink).atSeq ?? 0).toBe(at);
      expect(Object.keys(header.parent as object).sort()).toEqual(at > 0 ? ['atSeq', 'relation', 'sessionId'] : expect.arrayContaining(['relation', 'sessionId']));
      const opened = await s.open(sessionId, 'write');
      expect(opened).toMatchObject({ mode: 'write', lastSeq: at, parent: header.parent });
      expect(opened).not.toHaveProperty('recovered');
    }
    expect(new Set(forks.values()).size).toBe(forks.size);
    expect(fs.readFileSync(journalOf(root, src))).toEqual(srcBytes);
    await indexSettled(s);
    await s.closeAll();

    // A fresh process opens every fork cleanly for writing: nothing cut, no evidence kept.
    const t = store(root);
    for (const [atSeq, id] of forks) {
      const at = atSeq ?? lastSeq;
      const opened = await t.open(id, 'write');
      expect(opened, `atSeq ${at}`).toMatchObject({ lastSeq: at });
      expect(opened).not.toHaveProperty('recovered');
      expect(fs.existsSync(recoveryDirOf(root, id))).toBe(false);
      expect(await readAll(t, id)).toEqual(source.slice(0, at));
    }
    const listed = (await t.list()).sessions;
    for (const [atSeq, id] of forks) {
      expect(listed.find((x) => x.sessionId === id)).toMatchObject({ lastSeq: atSeq ?? lastSeq, parent: { sessionId: src, relation: 'fork' } });
    }
    expect(fs.readFileSync(journalOf(root, src))).toEqual(srcBytes);
    await t.closeAll();
  });

  it('leaves the source untouched (journal bytes, history, its open writer) and continues the fork at atSeq + 1', async () => {
    const root = tempDir();
    const s = store(root);
    const src = await richSession(s);
    await s.compact(src, { summary: 'so far', throughSeq: 2 });
    await s.append(src, [note(9)]);
    await indexSettled(s);
    const before = filesOf(root, src);
    const journalBefore = fs.readFileSync(journalOf(root, src));
    const historyBefore = snapshotTree(historyDirOf(root, src));

    const { sessionId } = await s.fork(src, 5);
    // the fork is open for writing in this store, no open needed
    expect(await s.append(sessionId, [note(100)])).toEqual({ firstSeq: 6, lastSeq: 6 });
    expect(await s.append(sessionId, [note(101), note(102)])).toEqual({ firstSeq: 7, lastSeq: 8 });
    expect((await readAll(s, sessionId)).map((r) => r.seq)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    // the source's writer is unaffected: it continues at its own lastSeq + 1
    expect(await s.append(src, [note(10)])).toEqual({ firstSeq: 10, lastSeq: 10 });
    expect(fs.readFileSync(journalOf(root, src)).subarray(0, journalBefore.length)).toEqual(journalBefore);
    expect(snapshotTree(historyDirOf(root, src))).toEqual(historyBefore);
    await indexSettled(s);
    await s.closeAll();

    // Forking a closed session changes none of its files (not even the index entry).
    const t = store(root);
    await t.list();
    await sleep(20);
    const closedBefore = filesOf(root, src);
    expect(Object.keys(closedBefore)).toEqual(Object.keys(before));
    const { sessionId: again } = await t.fork(src);
    await indexSettled(t);
    await t.closeAll();
    expect(filesOf(root, src)).toEqual(closedBefore);
    expect((await readAll(store(root), again)).map((r) => r.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('takes the appends sent before it (the source open for writing)', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: src } = await s.create({});
    const pending = [s.append(src, [note(1)]), s.append(src, [note(2), note(3)])];
    const { sessionId } = await s.fork(src);
    await Promise.all(pending);
    expect((await readAll(s, sessionId)).map((r) => r.seq)).toEqual([1, 2, 3]);
    await s.closeAll();
  });

  it('of a compacted session starts at its checkpoint, not the archives', async () => {
    const root = tempDir();
    const s = store(root);
    const src = await richSession(s, { title: 'compacted' });
    const compacted = await s.compact(src, { summary: 'They asked and got answers.', throughSeq: 4, provider: 'openai', model: 'gpt-x' });
    expect(compacted.checkpointSeq).toBe(4);
    await s.append(src, [message('assistant', 'after compaction')]);
    const active = await readAll(s, src);
    expect(active[0]).toMatchObject({ seq: 4, kind: 'checkpoint' });

    const { sessionId } = await s.fork(src);
    const records = await readAll(s, sessionId);
    // the same records; the checkpoint restarts the fork's generations (it has no archives of its own)
    expect(records).toEqual(asForked(active));
    expect(records[0]).toMatchObject({ seq: 4, kind: 'checkpoint', generation: 0, summary: 'They asked and got answers.', ts: active[0]!.ts });
    expect(records[0]).not.toHaveProperty('archived');
    expect(records.map((r) => r.seq)).toEqual([4, 5, 6, 7, 8, 9]);
    // the fork's journal holds only the header and the active records: none of the archived ones
    const forkJournal = fs.readFileSync(journalOf(root, sessionId), 'utf8');
    expect(journalLines(root, sessionId)).toHaveLength(1 + active.length);
    expect(forkJournal).not.toContain('first question');
    expect(forkJournal).not.toContain('"seq":1,');
    expect(fs.existsSync(historyDirOf(root, sessionId))).toBe(false);
    expect(await s.context(sessionId)).toEqual(await s.context(src));
    expect(await s.getTurn(sessionId)).toEqual(await s.getTurn(src));

    // at the checkpoint itself: just the checkpoint
    const { sessionId: atCheckpoint } = await s.fork(src, 4);
    expect(await readAll(s, atCheckpoint)).toEqual(asForked([active[0] as Record<string, unknown>]));
    expect(await s.append(atCheckpoint, [note(1)])).toEqual({ firstSeq: 5, lastSeq: 5 });
    expect(headerOf(root, atCheckpoint).parent).toEqual({ sessionId: src, relation: 'fork', atSeq: 4 });

    // archived seqs, and seqs past the end, cannot be forked
    const before = sessionDirs(root);
    for (const atSeq of [0, 1, 3, 10, 1000]) {
      const err = await storeError(s.fork(src, atSeq), 'OutOfRange');
      expect(err.details, `atSeq ${atSeq}`).toMatchObject({ path: 'atSeq' });
    }
    expect(sessionDirs(root)).toEqual(before);
    await indexSettled(s);
    await s.closeAll();

    const t = store(root);
    expect(await t.open(sessionId, 'write')).toMatchObject({ lastSeq: 9 });
    expect(await readAll(t, sessionId)).toEqual(asForked(active));
    expect(await t.history(sessionId)).toEqual([]);
    await t.closeAll();
  });

  it('of a compacted session carries the turn state its checkpoint holds', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: src } = await s.create({});
    await s.append(src, [note(1), note(2)]);
    const { turnId } = await s.startTurn(src, 'user'); // 3
    await s.append(src, [message('user', 'q')]); // 4
    await s.transitionTurn(src, turnId, { event: 'phase', phase: 'compacting' }); // 5
    await s.compact(src, { summary: 'mid-turn', throughSeq: 5 });
    const pending = await s.getTurn(src);
    expect(pending).toEqual({ turnId, kind: 'user', phase: 'compacting', status: 'active', firstSeq: 3 });
    await s.transitionTurn(src, turnId, { event: 'finish', outcome: 'completed' }); // 6

    const { sessionId: atCheckpoint } = await s.fork(src, 5);
    expect((await readAll(s, atCheckpoint)).map((r) => r.kind)).toEqual(['checkpoint']);
    expect(await s.getTurn(atCheckpoint)).toEqual(pending);
    const { sessionId: whole } = await s.fork(src);
    expect(await s.getTurn(whole)).toEqual({ ...pending, status: 'completed', lastSeq: 6 });
    await indexSettled(s);
    await s.closeAll();
    for (const id of [atCheckpoint, whole]) fs.rmSync(indexOf(root, id)); // rebuilt from the journal
    const t = store(root);
    expect((await t.open(atCheckpoint, 'write')).turn).toEqual(pending);
    await t.transitionTurn(atCheckpoint, turnId, { event: 'finish', outcome: 'interrupted' });
    expect(await t.getTurn(atCheckpoint)).toEqual({ ...pending, status: 'interrupted', lastSeq: 6 });
    await t.closeAll();
  });

  // A fork has no archives of its own: its history lists only what it archived itself, and every
  // generation listed can be read (the source's archived generations are not the fork's).
  it('of a compacted session: its history names only generations it can read', async () => {
    const root = tempDir();
    const s = store(root);
    const src = await richSession(s);
    await s.compact(src, { summary: 'sum', throughSeq: 4 });
    const { sessionId } = await s.fork(src);
    expect(await s.history(sessionId)).toEqual([]);
    await storeError(s.read(sessionId, { generation: 1 }), 'OutOfRange');
    const before = await readAll(s, sessionId);
    expect(await readAll(s, sessionId, 0)).toEqual(before); // generation 0 is the fork's active journal
    await s.append(sessionId, [note(9)]);
    await s.compact(sessionId, { summary: 'again', throughSeq: 8 });
    const history = await s.history(sessionId);
    expect(history).toEqual([expect.objectContaining({ generation: 0, throughSeq: 8, records: 6 })]);
    for (const h of history) {
      const archived = await readAll(s, sessionId, h.generation);
      expect(archived).toHaveLength(h.records);
      expect(archived.slice(0, before.length)).toEqual(before);
    }
    expect((await readAll(s, sessionId))[0]).toMatchObject({ seq: 8, kind: 'checkpoint', generation: 1, archived: { generation: 0, records: 6 } });
    await indexSettled(s);
    await s.closeAll();
    const t = store(root);
    expect(await t.history(sessionId)).toEqual(history);
    await t.closeAll();
  });

  it('refuses atSeq out of range, unknown and invalid ids, writing nothing', async () => {
    const root = tempDir();
    const s = store(root);
    const src = await richSession(s);
    const before = sessionDirs(root);
    for (const atSeq of [-1, 9, 100, Number.MAX_SAFE_INTEGER]) {
      const err = await storeError(s.fork(src, atSeq), 'OutOfRange');
      expect(err.details).toMatchObject({ path: 'atSeq' });
    }
    await storeError(s.fork(UNKNOWN_ID), 'SessionNotFound');
    await storeError(s.fork('../x'), 'InvalidSessionId');
    expect(sessionDirs(root)).toEqual(before);
    // an empty session forks to an empty one
    const { sessionId: empty } = await s.create({ title: 'empty' });
    const { sessionId } = await s.fork(empty);
    expect(await readAll(s, sessionId)).toEqual([]);
    expect(await s.open(sessionId, 'write')).toMatchObject({ lastSeq: 0, title: 'empty' });
    await storeError(s.fork(empty, 1), 'OutOfRange');
    await s.closeAll();
  });

  it("has the source's turn state at atSeq (manual turns), and continues it", async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: src } = await s.create({ title: 'turns' });
    // The oracle: getTurn of the source after each step, by the lastSeq the step left.
    const stateAt = new Map<number, TurnState | null>([[0, null]]);
    const step = async (f: () => Promise<unknown>) => {
      await f();
      const { records } = await s.read(src, { afterSeq: 0, limit: 1000 });
      stateAt.set(records.length, await s.getTurn(src));
    };
    let turnId = '';
    await step(async () => ({ turnId } = await s.startTurn(src, 'user'))); // 1
    await step(() => s.append(src, [message('user', 'q'), message('assistant', 'a')])); // 2-3
    await step(() => s.transitionTurn(src, turnId, { event: 'phase', phase: 'providerStream' })); // 4
    await step(() => s.transitionTurn(src, turnId, { event: 'finish', outcome: 'completed' })); // 5
    await step(async () => ({ turnId } = await s.startTurn(src, 'background'))); // 6
    await step(() => s.transitionTurn(src, turnId, { event: 'fail', error: 'provider down' })); // 7
    const source = await readAll(s, src);
    expect(source).toHaveLength(7);
    expect(source[1]).toMatchObject({ turnId: source[0]!.turnId });

    for (let atSeq = 0; atSeq <= 7; atSeq++) {
      let known = atSeq;
      while (!stateAt.has(known)) known -= 1; // inside a batch: messages do not change a manual turn
      const { sessionId } = await s.fork(src, atSeq);
      expect(await s.getTurn(sessionId), `atSeq ${atSeq}`).toEqual(stateAt.get(known));
      expect((await s.open(sessionId, 'write')).turn).toEqual(stateAt.get(known));
      expect(await readAll(s, sessionId)).toEqual(source.slice(0, atSeq));
    }

    // The fork at 7 holds a retryable turn: the same rules apply to it as to the source.
    const { sessionId: retry } = await s.fork(src, 7);
    await storeError(s.startTurn(retry, 'user'), 'InvalidTurnTransition');
    await s.transitionTurn(retry, turnId, { event: 'resume' });
    await s.transitionTurn(retry, turnId, { event: 'finish', outcome: 'completed' });
    expect(await s.getTurn(retry)).toMatchObject({ turnId, status: 'completed', firstSeq: 6, lastSeq: 9 });
    expect(await s.getTurn(src)).toMatchObject({ turnId, status: 'retryable' });
    await indexSettled(s);
    await s.closeAll();
    const t = store(root);
    expect(await t.getTurn(retry)).toMatchObject({ turnId, status: 'completed', lastSeq: 9 });
    await t.closeAll();
  });

  it('cut inside an auto-turn batch: the turn is pending in the fork, which then continues it', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: src } = await s.create({ turns: 'auto' });
    expect(await s.append(src, [message('user', 'q'), message('assistant', 'a')])).toEqual({ firstSeq: 1, lastSeq: 4 });
    const source = await readAll(s, src);
    expect(source.map((r) => r.kind)).toEqual(['turn', 'message', 'message', 'turn']);
    const turnId = source[0]!.turnId as string;
    const pending = { turnId, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 1 };

    for (const atSeq of [1, 2, 3]) {
      const { sessionId } = await s.fork(src, atSeq);
      expect(await s.getTurn(sessionId), `atSeq ${atSeq}`).toEqual(pending);
      expect(headerOf(root, sessionId).turns).toBe('auto');
    }
    const { sessionId: fork } = await s.fork(src, 3);
    await indexSettled(s);
    await s.closeAll();

    const t = store(root);
    const opened = await t.open(fork, 'write');
    expect(opened).toMatchObject({ lastSeq: 3, turn: pending });
    expect(opened).not.toHaveProperty('recovered');
    // a new user message while the turn is pending is refused, as in the source at seq 3
    await storeError(t.append(fork, [message('user', 'again')]), 'InvalidTurnTransition');
    expect(await t.append(fork, [message('assistant', 'more')])).toEqual({ firstSeq: 4, lastSeq: 5 });
    expect(await t.getTurn(fork)).toEqual({ ...pending, status: 'completed', lastSeq: 5 });
    const tail = await readAll(t, fork);
    expect(tail.slice(3)).toMatchObject([{ seq: 4, turnId, kind: 'message' }, { seq: 5, kind: 'turn', turnId, event: 'finish' }]);
    await t.closeAll();
  });

  it('is guarded by the registered secrets: none may be copied, and the source secretEnv goes with the fork', async () => {
    const root = tempDir();
    const secret = 'purple-elephant-42-xyz';
    const envSecret = 'teal-walrus-77-abc';
    const env = { LINEAGE_TEST_TOKEN: envSecret };
    const s = store(root, { env });
    // written before `secret` is known anywhere
    const { sessionId: src } = await s.create({ title: 'leaky' });
    await s.append(src, [note(1), message('user', `the word is ${secret}`), note(3)]);
    // registered for another session: no journal of this store may receive it from now on
    await s.create({ title: 'other' }, { values: [secret] });
    const before = sessionDirs(root);
    const err = await storeError(s.fork(src), 'SecretRejected');
    expect(err.message).not.toContain(secret);
    expect(sessionDirs(root)).toEqual(before);
    // up to before the record that holds it, the fork is allowed
    const { sessionId: early } = await s.fork(src, 1);
    expect((await readAll(s, early)).map((r) => r.seq)).toEqual([1]);
    await storeError(s.fork(src, 2), 'SecretRejected');
    await s.closeAll();
    for (const [p, text] of Object.entries(snapshotTree(root))) {
      if (!p.includes(src)) expect(Buffer.from(text, 'base64').toString('utf8'), p).not.toContain(secret);
    }

    // A session whose header names an env secret: its fork is guarded by the same one.
    const t = store(root, { env });
    const { sessionId: guarded } = await t.create({ title: 'guarded' }, { env: ['LINEAGE_TEST_TOKEN'] });
    await t.append(guarded, [note(1)]);
    const { sessionId: fork } = await t.fork(guarded);
    expect(headerOf(root, fork).secretEnv).toEqual(['LINEAGE_TEST_TOKEN']);
    await t.closeAll();
    const u = store(root, { env }); // a new process: the secret comes from the fork's header
    expect((await u.open(fork, 'write')).secrets).toEqual({ registered: 1 });
    await storeError(u.append(fork, [message('user', `key ${envSecret}`)]), 'SecretRejected');
    expect(fs.readFileSync(journalOf(root, fork), 'utf8')).not.toContain(envSecret);
    await u.closeAll();
  });
});

/** A session with everything a session can own: journal, archived generation, index entry, recovery evidence. */
async function fullSession(root: string): Promise<string> {
  const s = store(root);
  const id = await richSession(s, { title: 'full' });
  await s.compact(id, { summary: 'sum', throughSeq: 3 });
  await s.append(id, [note(9)]);
  await indexSettled(s);
  await s.closeAll();
  // a torn tail: the next writable open keeps it under recovery/ and cuts it
  fs.appendFileSync(journalOf(root, id), '{"seq":10,"ts":"2026-01-0');
  const t = store(root);
  expect((await t.open(id, 'write')).recovered).toBeDefined();
  await indexSettled(t);
  await t.closeAll();
  expect(fs.readdirSync(recoveryDirOf(root, id))).toHaveLength(1);
  expect(fs.readdirSync(historyDirOf(root, id))).toEqual(['0.jsonl']);
  expect(fs.existsSync(indexOf(root, id))).toBe(true);
  return id;
}

describe('delete, restore, purge', () => {
  it('delete moves journal, history, index entry and recovery evidence to trash/<id>/; restore brings them back', async () => {
    const root = tempDir();
    const id = await fullSession(root);
    const bystander = await fullSession(root);
    const s = store(root);
    const records = await readAll(s, id);
    const archived = await readAll(s, id, 0);
    const history = await s.history(id);
    const listed = (await s.list()).sessions.find((x) => x.sessionId === id);
    expect(listed).toBeDefined();
    await sleep(20);
    const before = filesOf(root, id);
    const bystanderBefore = filesOf(root, bystander);
    const evidence = fs.readdirSync(recoveryDirOf(root, id));

    await s.delete(id);
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([bystander]);
    await storeError(s.open(id, 'read'), 'SessionNotFound');
    await storeError(s.open(id, 'write'), 'SessionNotFound');
    await storeError(s.read(id), 'SessionNotFound');
    await storeError(s.history(id), 'SessionNotFound');
    await storeError(s.fork(id), 'SessionNotFound');
    await storeError(s.create({ parent: { sessionId: id, relation: 'continuation' } }), 'SessionNotFound');
    // every file of it now lives under trash/<id>/, byte for byte
    const trash = trashOf(root, id);
    expect(pathsOf(root, id).filter((p) => !p.startsWith(`trash${path.sep}`))).toEqual([]);
    expect(fs.readFileSync(path.join(trash, 'session', 'journal.jsonl')).toString('base64')).toBe(before[path.join('sessions', id, 'journal.jsonl')]);
    expect(fs.readFileSync(path.join(trash, 'history', '0.jsonl')).toString('base64')).toBe(before[path.join('history', id, '0.jsonl')]);
    expect(fs.readFileSync(path.join(trash, 'index.json')).toString('base64')).toBe(before[path.join('index', `${id}.json`)]);
    expect(fs.readdirSync(path.join(trash, 'recovery'))).toEqual(evidence);
    expect(Object.keys(snapshotTree(trash))).toHaveLength(Object.keys(before).length);
    expect(filesOf(root, bystander)).toEqual(bystanderBefore);
    await s.closeAll();

    // restore, in another process
    const t = store(root);
    await t.restore(id);
    expect(fs.existsSync(trash)).toBe(false);
    expect(filesOf(root, id)).toEqual(before);
    expect(await readAll(t, id)).toEqual(records);
    expect(await readAll(t, id, 0)).toEqual(archived);
    expect(await t.history(id)).toEqual(history);
    expect((await t.list()).sessions.find((x) => x.sessionId === id)).toEqual(listed);
    expect(await t.append(id, [note(10)]).catch((e: unknown) => e)).toMatchObject({ kind: 'ReadOnly' });
    expect(await t.open(id, 'write')).toMatchObject({ lastSeq: 9, title: 'full' });
    expect(await t.append(id, [note(10)])).toEqual({ firstSeq: 10, lastSeq: 10 });
    await storeError(t.restore(id), 'SessionNotFound');
    expect(filesOf(root, bystander)).toEqual(bystanderBefore);
    await t.closeAll();
  });

  it('delete of a session open in this store closes it first; its pending index write lands in the trash', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: id } = await s.create({ title: 'open' });
    await s.append(id, [note(1)]);
    const { sessionId: reader } = await s.create({ title: 'reader' });
    await s.close(reader);
    await s.open(reader, 'read');
    const last = s.append(id, [note(2), note(3)]); // in flight, with an index write scheduled after it
    await s.delete(id);
    expect(await last).toEqual({ firstSeq: 2, lastSeq: 3 });
    await s.delete(reader);
    await sleep(150); // longer than the index write delay
    expect(pathsOf(root, id).filter((p) => !p.startsWith(`trash${path.sep}`))).toEqual([]);
    expect(pathsOf(root, reader).filter((p) => !p.startsWith(`trash${path.sep}`))).toEqual([]);
    // the open writer is gone: no append reaches the trashed journal
    const trashed = fs.readFileSync(path.join(trashOf(root, id), 'session', 'journal.jsonl'));
    await storeError(s.append(id, [note(4)]), 'SessionNotFound');
    await storeError(s.startTurn(id, 'user'), 'SessionNotFound');
    await storeError(s.close(id), 'SessionNotFound');
    expect(fs.readFileSync(path.join(trashOf(root, id), 'session', 'journal.jsonl'))).toEqual(trashed);
    const entry = JSON.parse(fs.readFileSync(path.join(trashOf(root, id), 'index.json'), 'utf8')) as { lastSeq: number };
    expect(entry.lastSeq).toBe(3);
    expect((await s.list()).sessions).toEqual([]);

    await s.restore(id);
    expect(await s.open(id, 'write')).toMatchObject({ lastSeq: 3 });
    expect(await s.append(id, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    expect((await readAll(s, id)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await s.closeAll();
  });

  it('delete twice without a restore is Conflict (inTrash)', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.delete(sessionId);
    const err = await storeError(s.delete(sessionId), 'Conflict');
    expect(err.details).toMatchObject({ reason: 'inTrash', sessionId });
  });

  it('delete twice: the second never touches the trashed copy', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    await s.delete(sessionId);
    const trashed = snapshotTree(trashOf(root, sessionId));
    await s.delete(sessionId).catch(() => undefined);
    expect(snapshotTree(trashOf(root, sessionId))).toEqual(trashed);
    await s.restore(sessionId);
    expect((await readAll(s, sessionId)).map((r) => r.seq)).toEqual([1]);
    await s.closeAll();
  });

  it('delete of a live session whose id is already in the trash is Conflict (inTrash) and moves nothing', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    await indexSettled(s);
    await s.delete(sessionId);
    // the same id live again (a copy put back by hand)
    fs.cpSync(path.join(trashOf(root, sessionId), 'session'), path.join(root, 'sessions', sessionId), { recursive: true });
    const before = dataTree(root);
    const err = await storeError(s.delete(sessionId), 'Conflict');
    expect(err.details).toMatchObject({ reason: 'inTrash', sessionId });
    expect(dataTree(root)).toEqual(before);
    // restore refuses too: the live one would be replaced
    const err2 = await storeError(s.restore(sessionId), 'Conflict');
    expect(err2.details).toMatchObject({ reason: 'exists', sessionId });
    expect(dataTree(root)).toEqual(before);
    expect((await readAll(s, sessionId)).map((r) => r.seq)).toEqual([1]);
    await s.closeAll();
  });

  it('a delete that failed before moving anything leaves a session that can still be deleted and restored', async () => {
    const root = tempDir();
    let failNext = true;
    const fsl = faultFs({
      renameSync: (from, to) => {
        if (failNext && from.endsWith(path.join('sessions', path.basename(from))) && to.includes(`${path.sep}trash${path.sep}`)) {
          failNext = false;
          throw eio();
        }
        fs.renameSync(from, to);
      },
    });
    const s = store(root, { fs: fsl });
    const { sessionId } = await s.create({ title: 'stays' });
    await s.append(sessionId, [note(1)]);
    await indexSettled(s);
    const journal = fs.readFileSync(journalOf(root, sessionId));
    const err = await storeError(s.delete(sessionId), 'NotWritten');
    expect(err.details).toMatchObject({ sessionId, errno: 'EIO' });
    // nothing moved: still live, listed and readable; no trash entry left behind
    expect(fs.existsSync(trashOf(root, sessionId))).toBe(false);
    await storeError(s.restore(sessionId), 'SessionNotFound');
    expect(fs.readFileSync(journalOf(root, sessionId))).toEqual(journal);
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([sessionId]);
    expect((await readAll(s, sessionId)).map((r) => r.seq)).toEqual([1]);
    // the retry succeeds, and the session comes back whole
    await s.delete(sessionId);
    expect((await s.list()).sessions).toEqual([]);
    expect(fs.readFileSync(path.join(trashOf(root, sessionId), 'session', 'journal.jsonl'))).toEqual(journal);
    await s.restore(sessionId);
    expect(fs.readFileSync(journalOf(root, sessionId))).toEqual(journal);
    expect(await s.open(sessionId, 'write')).toMatchObject({ title: 'stays', lastSeq: 1 });
    await s.closeAll();
  });

  it('an empty trash/<id>/ (a delete that crashed before its first rename) neither blocks a delete nor restores anything', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ title: 'live' });
    await s.append(sessionId, [note(1)]);
    await indexSettled(s);
    fs.mkdirSync(trashOf(root, sessionId), { recursive: true, mode: 0o700 });
    const before = dataTree(root);
    await storeError(s.restore(sessionId), 'SessionNotFound');
    expect(dataTree(root)).toEqual(before);
    await s.delete(sessionId);
    expect(fs.existsSync(journalOf(root, sessionId))).toBe(false);
    await s.restore(sessionId);
    expect(await s.open(sessionId, 'write')).toMatchObject({ title: 'live', lastSeq: 1 });
    await s.closeAll();
  });

  it('restore when the id exists again is Conflict (exists); restore of what is not in the trash is SessionNotFound', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ title: 'original' });
    await s.append(sessionId, [note(1), note(2)]);
    await s.delete(sessionId);
    // another session under the same id (copied in by hand)
    const { sessionId: other } = await s.create({ title: 'other' });
    await s.close(other);
    fs.mkdirSync(path.join(root, 'sessions', sessionId), { mode: 0o700 });
    const otherJournal = fs.readFileSync(journalOf(root, other), 'utf8').replace(other, sessionId);
    fs.writeFileSync(journalOf(root, sessionId), sealed(unsealed(Buffer.from(otherJournal.split('\n')[0]!))), { mode: 0o600 });
    expect(await s.open(sessionId, 'read')).toMatchObject({ title: 'other', lastSeq: 0 });
    await s.close(sessionId);
    const before = dataTree(root);
    const err = await storeError(s.restore(sessionId), 'Conflict');
    expect(err.details).toMatchObject({ reason: 'exists', sessionId });
    expect(dataTree(root)).toEqual(before);

    await storeError(s.restore(UNKNOWN_ID), 'SessionNotFound');
    await storeError(s.restore(other), 'SessionNotFound');
    await storeError(s.restore('../trash'), 'InvalidSessionId');
    expect(dataTree(root)).toEqual(before);

    // purge removes both: the live one and the one in the trash
    await s.delete(sessionId, true);
    expect(pathsOf(root, sessionId)).toEqual([]);
    expect(fs.existsSync(trashOf(root, sessionId))).toBe(false);
    await storeError(s.restore(sessionId), 'SessionNotFound');
    await s.closeAll();
  });

  it('restore once the live copy is gone brings the original back', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ title: 'original' });
    await s.append(sessionId, [note(1), note(2)]);
    await s.delete(sessionId);
    fs.cpSync(path.join(trashOf(root, sessionId), 'session'), path.join(root, 'sessions', sessionId), { recursive: true });
    await storeError(s.restore(sessionId), 'Conflict');
    fs.rmSync(path.join(root, 'sessions', sessionId), { recursive: true });
    await s.restore(sessionId);
    expect(await s.open(sessionId, 'read')).toMatchObject({ title: 'original', lastSeq: 2 });
    await s.closeAll();
  });

  it('purge of a live session removes every file of it and nothing else', async () => {
    const root = tempDir();
    const id = await fullSession(root);
    const bystander = await fullSession(root);
    const bystanderBefore = filesOf(root, bystander);
    const s = store(root);
    await s.open(id, 'write');
    expect(pathsOf(root, id).length).toBeGreaterThan(0);
    await s.delete(id, true);
    await sleep(150);
    expect(pathsOf(root, id)).toEqual([]);
    await storeError(s.open(id, 'read'), 'SessionNotFound');
    await storeError(s.restore(id), 'SessionNotFound');
    await storeError(s.delete(id, true), 'SessionNotFound');
    await storeError(s.delete(id), 'SessionNotFound');
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([bystander]);
    expect(filesOf(root, bystander)).toEqual(bystanderBefore);
    await s.closeAll();
  });

  it('purge of a session never compacted, in a store that never archived anything', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    expect(fs.existsSync(path.join(root, 'history'))).toBe(false);
    await s.delete(sessionId, true);
    expect(pathsOf(root, sessionId)).toEqual([]);
    await sleep(150);
    expect(pathsOf(root, sessionId)).toEqual([]);
    expect((await s.list()).sessions).toEqual([]);
    await s.closeAll();
  });

  it('purge of a trashed session removes every file of it, and nothing else', async () => {
    const root = tempDir();
    const id = await fullSession(root);
    const other = await fullSession(root);
    const s = store(root);
    await s.delete(other);
    await s.delete(id);
    const otherTrash = snapshotTree(trashOf(root, other));
    expect(pathsOf(root, id).length).toBeGreaterThan(0);
    await s.delete(id, true);
    expect(pathsOf(root, id)).toEqual([]);
    await storeError(s.restore(id), 'SessionNotFound');
    await storeError(s.delete(id, true), 'SessionNotFound');
    expect(snapshotTree(trashOf(root, other))).toEqual(otherTrash);
    await s.restore(other);
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([other]);
    await s.closeAll();
  });

  it('delete of an unknown or invalid id is refused and changes nothing', async () => {
    const root = tempDir();
    const s = store(root);
    await s.create({});
    const before = dataTree(root);
    await storeError(s.delete(UNKNOWN_ID), 'SessionNotFound');
    await storeError(s.delete(UNKNOWN_ID, true), 'SessionNotFound');
    await storeError(s.delete('../sessions'), 'InvalidSessionId');
    await storeError(s.delete('.hidden', true), 'InvalidSessionId');
    expect(dataTree(root)).toEqual(before);
    expect(fs.existsSync(path.join(root, 'trash', UNKNOWN_ID))).toBe(false);
    await s.closeAll();
  });

  it('nothing is deleted implicitly: forks and continuations outlive their deleted or purged parent', async () => {
    const root = tempDir();
    const s = store(root);
    const parent = await richSession(s);
    const { sessionId: fork } = await s.fork(parent, 4);
    const { sessionId: cont } = await s.create({ parent: { sessionId: parent, relation: 'continuation', atSeq: 8 } });
    await indexSettled(s);
    await s.closeAll();
    const forkFiles = filesOf(root, fork);
    const contFiles = filesOf(root, cont);
    const t = store(root);
    await t.delete(parent);
    await t.restore(parent);
    await t.delete(parent, true);
    expect(filesOf(root, fork)).toEqual(forkFiles);
    expect(filesOf(root, cont)).toEqual(contFiles);
    expect((await t.open(fork, 'read')).parent).toEqual({ sessionId: parent, relation: 'fork', atSeq: 4 });
    expect((await t.list()).sessions.map((x) => x.sessionId).sort()).toEqual([fork, cont].sort());
    // deleting a fork leaves nothing else changed either
    const contBefore = filesOf(root, cont);
    await t.delete(fork, true);
    expect(filesOf(root, cont)).toEqual(contBefore);
    await t.closeAll();
  });

  // A session/list (or read) that meets a stale index entry never writes it (only writers may
  // advance the index): a delete or purge right after it leaves no index/<id>.json behind.
  it('delete or purge right after a list that met a stale index entry leaves no index entry behind', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: purged } = await s.create({});
    await s.append(purged, [note(1)]);
    const { sessionId: trashed } = await s.create({});
    await s.append(trashed, [note(1)]);
    await indexSettled(s);
    await s.closeAll();
    for (const id of [purged, trashed]) fs.rmSync(indexOf(root, id)); // stale: the next list rebuilds them
    const t = store(root);
    await t.list();
    await t.delete(purged, true);
    await t.delete(trashed);
    await sleep(200);
    expect(pathsOf(root, purged)).toEqual([]);
    expect(pathsOf(root, trashed).filter((p) => !p.startsWith(`trash${path.sep}`))).toEqual([]);
    await t.restore(trashed);
    expect((await readAll(t, trashed)).map((r) => r.seq)).toEqual([1]);
  });
});

/** A fork keeps every record but restarts its generations: its checkpoint is generation 0 and names no archive. */
function asForked(records: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return records.map((r) => {
    if (r.kind !== 'checkpoint') return r;
    const { archived: _a, ...rest } = r;
    return { ...rest, generation: 0 };
  });
}
