import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EmptyResult, SessionCreateResult, SessionForkResult, SessionListResult, SessionOpenResult, SessionReadResult, TurnGetResult,
} from '../../dist/protocol/index.js';
import { snapshotTree, tempDir } from '../helpers.js';
import { FRAMINGS, rejection, type SidecarClient, spawnSidecar, startSidecar } from './harness.js';

/**
 * Continuations, forks and deletion over real pipes against the built binary
 * (protocol/README.md section 13), in both framings: parent links in create/open/list,
 * session/fork, session/delete (trash and purge), session/restore, and their errors.
 */

type Stored = Record<string, unknown> & { seq: number; kind: string };

const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const msg = (role: string, content: string) => ({ kind: 'message' as const, message: { role, content } });
const journalOf = (store: string, id: string) => path.join(store, 'sessions', id, 'journal.jsonl');
const trashOf = (store: string, id: string) => path.join(store, 'trash', id);
// index/ is left out: a cache the writer rewrites in the background (debounced) after an append,
// so it may change while a refused request is answered; it is rebuilt from the journals anyway.
const DATA_DIRS = ['sessions', 'history', 'recovery', 'trash'];

const fork = async (c: SidecarClient, params: Record<string, unknown>) => {
  const res = await c.request<{ sessionId: string }>('session/fork', params);
  SessionForkResult.parse(res);
  return res;
};
const del = async (c: SidecarClient, params: Record<string, unknown>) => {
  const res = await c.request('session/delete', params);
  expect(EmptyResult.parse(res)).toEqual({});
  return res;
};
const restore = async (c: SidecarClient, params: Record<string, unknown>) => {
  const res = await c.request('session/restore', params);
  expect(EmptyResult.parse(res)).toEqual({});
  return res;
};

async function readAll(c: SidecarClient, sessionId: string): Promise<Stored[]> {
  const page = await c.read({ sessionId, limit: 1000 });
  SessionReadResult.parse(page);
  expect(page.nextAfterSeq).toBeNull();
  return page.records as Stored[];
}

async function listed(c: SidecarClient) {
  const res = await c.list();
  return SessionListResult.parse(res).sessions;
}

/** Paths of session `id` under the data directories (files and directories). */
function pathsOf(store: string, id: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.name === id || e.name.startsWith(`${id}.`)) out.push(path.relative(store, p));
      if (e.isDirectory()) walk(p);
    }
  };
  for (const d of DATA_DIRS) walk(path.join(store, d));
  return out.sort();
}

/** The store's data, without the writer-lease files that opens rewrite. */
function dataTree(store: string): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshotTree(store)).filter(([p]) => DATA_DIRS.includes(p.split(path.sep)[0]!)));
}

describe.each(FRAMINGS)('continuations, forks and deletion (%s)', (framing) => {
  it('initialize advertises fork and delete', async () => {
    const c = spawnSidecar({ framing });
    const init = await c.initialize();
    expect(init.capabilities.session).toMatchObject({ fork: true, delete: { trash: true, purge: true } });
  });

  it('session/create with parent: stored, returned by open and list, also after a restart', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: parentId } = await c.create({ title: 'parent' });
    await c.append({ sessionId: parentId, records: [msg('user', 'q'), msg('assistant', 'a')] });
    const link = { sessionId: parentId, relation: 'continuation', atSeq: 2, summary: { provider: 'anthropic', model: 'claude-x', agentId: 'agent-7' } };
    const created = await c.create({ title: 'child', parent: link as never });
    SessionCreateResult.parse(created);
    const opened = await c.open({ sessionId: created.sessionId, mode: 'read' });
    SessionOpenResult.parse(opened);
    expect(opened.parent).toEqual(link);
    const sessions = await listed(c);
    expect(sessions.find((s) => s.sessionId === created.sessionId)?.parent).toEqual(link);
    expect(sessions.find((s) => s.sessionId === parentId)).not.toHaveProperty('parent');
    await c.shutdown();

    const d = await startSidecar({ framing, store });
    expect((await listed(d)).find((s) => s.sessionId === created.sessionId)?.parent).toEqual(link);
    expect((await d.open({ sessionId: created.sessionId })).parent).toEqual(link);
  });

  it('session/create with a bad parent: -32602 for a bad shape, SessionNotFound for a missing parent; nothing written', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: parentId } = await c.create({});
    const before = dataTree(store);
    const bad: unknown[] = [
      { sessionId: parentId },
      { sessionId: parentId, relation: 'clone' },
      { sessionId: parentId, relation: 'fork', extra: true },
      { sessionId: parentId, relation: 'fork', atSeq: -1 },
      { sessionId: parentId, relation: 'fork', atSeq: 2.5 },
      { sessionId: parentId, relation: 'continuation', summary: { provider: 'p' } },
      { sessionId: parentId, relation: 'continuation', summary: { provider: 'p', model: 'm', extra: 1 } },
      'parent',
    ];
    for (const parent of bad) {
      const err = await rejection(c.request('session/create', { parent }));
      expect(err.code, JSON.stringify(parent)).toBe(-32602);
      expect(err.data?.kind).toBe('InvalidParams');
      const issues = err.data?.issues as Array<{ path: string }>;
      expect(issues.some((i) => i.path.startsWith('parent')), JSON.stringify(issues)).toBe(true);
    }
    const missing = await rejection(c.create({ parent: { sessionId: UNKNOWN_ID, relation: 'fork' } }));
    expect(missing.code).toBe(-31001);
    expect(missing.data).toMatchObject({ kind: 'SessionNotFound' });
    const invalid = await rejection(c.create({ parent: { sessionId: '../x', relation: 'fork' } }));
    expect(invalid.code).toBe(-31002);
    expect(dataTree(store)).toEqual(before);
  });

  it('session/fork: a copy up to atSeq (default all), linked, open for writing; the original untouched', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: src } = await c.create({ title: 'source', systemPrompt: 'Be brief.', turns: 'auto' });
    await c.append({ sessionId: src, records: [msg('user', 'q1'), msg('assistant', 'a1')] }); // 1-4: turn, user, assistant, turn
    await c.append({ sessionId: src, records: [{ kind: 'event', type: 'tool.started', payload: { id: 'c1' } }] }); // 5
    const source = await readAll(c, src);
    expect(source.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    const bytes = fs.readFileSync(journalOf(store, src));

    const whole = await fork(c, { sessionId: src });
    expect(await readAll(c, whole.sessionId)).toEqual(source);
    const opened = await c.open({ sessionId: whole.sessionId, mode: 'read' });
    expect(opened).toMatchObject({ title: 'source', systemPrompt: 'Be brief.', turns: 'auto', lastSeq: 5, parent: { sessionId: src, relation: 'fork', atSeq: 5 } });

    // inside the first batch: the turn it started is pending in the fork
    const cut = await fork(c, { sessionId: src, atSeq: 2 });
    expect(await readAll(c, cut.sessionId)).toEqual(source.slice(0, 2));
    const turn = TurnGetResult.parse(await c.request('turn/get', { sessionId: cut.sessionId }));
    expect(turn.turn).toMatchObject({ turnId: source[0]!.turnId, status: 'active', firstSeq: 1 });
    // opened for writing in this connection: appends continue at atSeq + 1
    expect(await c.append({ sessionId: cut.sessionId, records: [msg('assistant', 'a1 again')] })).toEqual({ firstSeq: 3, lastSeq: 4 });
    expect((await readAll(c, cut.sessionId)).slice(2)).toMatchObject([{ seq: 3, kind: 'message' }, { seq: 4, kind: 'turn', event: 'finish' }]);

    const sessions = await listed(c);
    expect(sessions.find((s) => s.sessionId === cut.sessionId)).toMatchObject({ lastSeq: 4, parent: { sessionId: src, relation: 'fork', atSeq: 2 } });
    expect(sessions.find((s) => s.sessionId === whole.sessionId)).toMatchObject({ lastSeq: 5, parent: { sessionId: src, relation: 'fork', atSeq: 5 } });
    expect(fs.readFileSync(journalOf(store, src))).toEqual(bytes);
    expect((await c.append({ sessionId: src, records: [msg('user', 'q2')] })).firstSeq).toBe(6);
    await c.shutdown();

    const d = await startSidecar({ framing, store });
    const reopened = await d.open({ sessionId: cut.sessionId });
    expect(reopened).toMatchObject({ lastSeq: 4 });
    expect(reopened).not.toHaveProperty('recovered');
  });

  it('session/fork of a compacted session starts at the checkpoint', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: src } = await c.create({});
    for (let i = 1; i <= 6; i++) await c.append({ sessionId: src, records: [msg(i % 2 ? 'user' : 'assistant', `m${i}`)] });
    await c.request('session/compact', { sessionId: src, summary: 'six messages', throughSeq: 4 });
    const active = await readAll(c, src);
    expect(active.map((r) => r.seq)).toEqual([4, 5, 6]);
    const { sessionId } = await fork(c, { sessionId: src });
    expect(await readAll(c, sessionId)).toEqual(asForked(active));
    expect(fs.readFileSync(journalOf(store, sessionId), 'utf8')).not.toContain('m1');
    const err = await rejection(c.request('session/fork', { sessionId: src, atSeq: 3 }));
    expect([err.code, err.data]).toEqual([-31018, { kind: 'OutOfRange', path: 'atSeq', min: 4, max: 6 }]);
  });

  it('session/fork errors: -32602 for bad params, OutOfRange for atSeq past lastSeq, SessionNotFound, InvalidSessionId', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({});
    await c.append({ sessionId, records: [msg('user', 'q'), msg('assistant', 'a')] });
    const before = dataTree(store);
    for (const params of [{}, { sessionId, atSeq: -1 }, { sessionId, atSeq: 1.5 }, { sessionId, atSeq: '1' }, { sessionId, extra: 1 }, { sessionId: 7 }]) {
      const err = await rejection(c.request('session/fork', params));
      expect(err.code, JSON.stringify(params)).toBe(-32602);
      expect(err.data?.kind).toBe('InvalidParams');
    }
    const range = await rejection(c.request('session/fork', { sessionId, atSeq: 3 }));
    expect([range.code, range.data]).toEqual([-31018, { kind: 'OutOfRange', path: 'atSeq', min: 0, max: 2 }]);
    const missing = await rejection(c.request('session/fork', { sessionId: UNKNOWN_ID }));
    expect(missing.code).toBe(-31001);
    expect(missing.data?.kind).toBe('SessionNotFound');
    const invalid = await rejection(c.request('session/fork', { sessionId: '../x' }));
    expect(invalid.code).toBe(-31002);
    expect(dataTree(store)).toEqual(before);
  });

  it('session/delete moves to trash/, session/restore brings it back; purge removes it for good', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'doomed' });
    await c.append({ sessionId, records: [msg('user', 'q'), msg('assistant', 'a')] });
    const { sessionId: keep } = await c.create({ title: 'keep' });
    const records = await readAll(c, sessionId);
    const entry = (await listed(c)).find((s) => s.sessionId === sessionId);
    const journal = fs.readFileSync(journalOf(store, sessionId));

    await del(c, { sessionId }); // open for writing in this connection: closed first
    expect((await listed(c)).map((s) => s.sessionId)).toEqual([keep]);
    for (const method of ['session/open', 'session/read', 'session/fork']) {
      const err = await rejection(c.request(method, { sessionId }));
      expect(err.code, method).toBe(-31001);
    }
    expect((await rejection(c.append({ sessionId, records: [msg('user', 'late')] }))).code).toBe(-31001);
    expect(pathsOf(store, sessionId).every((p) => p.startsWith(`trash${path.sep}`))).toBe(true);
    expect(fs.readFileSync(path.join(trashOf(store, sessionId), 'session', 'journal.jsonl'))).toEqual(journal);
    expect(fs.existsSync(path.join(trashOf(store, sessionId), 'index.json'))).toBe(true);

    await restore(c, { sessionId });
    expect(fs.existsSync(trashOf(store, sessionId))).toBe(false);
    expect(await readAll(c, sessionId)).toEqual(records);
    expect((await listed(c)).find((s) => s.sessionId === sessionId)).toEqual(entry);
    expect(await c.open({ sessionId })).toMatchObject({ lastSeq: 2, title: 'doomed' });
    expect(await c.append({ sessionId, records: [msg('user', 'back')] })).toEqual({ firstSeq: 3, lastSeq: 3 });

    // purge, live
    await del(c, { sessionId, purge: true });
    expect(pathsOf(store, sessionId)).toEqual([]);
    expect((await rejection(c.request('session/restore', { sessionId }))).code).toBe(-31001);
    // purge, from the trash
    await del(c, { sessionId: keep });
    expect(pathsOf(store, keep).length).toBeGreaterThan(0);
    await del(c, { sessionId: keep, purge: true });
    expect(pathsOf(store, keep)).toEqual([]);
    expect(await listed(c)).toEqual([]);
    await c.shutdown();
    const d = await startSidecar({ framing, store });
    expect(await listed(d)).toEqual([]);
  });

  it('session/delete and session/restore errors: -32602, SessionNotFound, InvalidSessionId, Conflict', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({});
    await c.append({ sessionId, records: [msg('user', 'q')] });
    const before = dataTree(store);
    for (const [method, params] of [
      ['session/delete', {}], ['session/delete', { sessionId, purge: 'yes' }], ['session/delete', { sessionId, extra: 1 }],
      ['session/restore', {}], ['session/restore', { sessionId, purge: true }],
    ] as const) {
      const err = await rejection(c.request(method, params));
      expect(err.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
    }
    for (const method of ['session/delete', 'session/restore']) {
      const missing = await rejection(c.request(method, { sessionId: UNKNOWN_ID }));
      expect(missing.code, method).toBe(-31001);
      expect(missing.data?.kind).toBe('SessionNotFound');
      expect((await rejection(c.request(method, { sessionId: '../x' }))).code, method).toBe(-31002);
    }
    expect((await rejection(c.request('session/delete', { sessionId: UNKNOWN_ID, purge: true }))).code).toBe(-31001);
    // restore of a live session that is not in the trash
    expect((await rejection(c.request('session/restore', { sessionId }))).code).toBe(-31001);
    expect(dataTree(store)).toEqual(before);

    // Conflict: the id live again (copied back by hand) while the deleted one is in the trash
    await del(c, { sessionId });
    fs.cpSync(path.join(trashOf(store, sessionId), 'session'), path.join(store, 'sessions', sessionId), { recursive: true });
    const conflicted = dataTree(store);
    const exists = await rejection(c.request('session/restore', { sessionId }));
    expect(exists.code).toBe(-31003);
    expect(exists.data).toMatchObject({ kind: 'Conflict', reason: 'exists', sessionId });
    const inTrash = await rejection(c.request('session/delete', { sessionId }));
    expect(inTrash.code).toBe(-31003);
    expect(inTrash.data).toMatchObject({ kind: 'Conflict', reason: 'inTrash', sessionId });
    expect(dataTree(store)).toEqual(conflicted);
    // purge takes both
    await del(c, { sessionId, purge: true });
    expect(pathsOf(store, sessionId)).toEqual([]);
  });

  it('session/delete twice without restore: Conflict (inTrash), the trashed copy untouched', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({});
    await c.append({ sessionId, records: [msg('user', 'keep me')] });
    await del(c, { sessionId });
    const trashed = dataTree(store);
    const err = await rejection(c.request('session/delete', { sessionId }));
    expect(err.code).toBe(-31003);
    expect(err.data).toMatchObject({ kind: 'Conflict', reason: 'inTrash', sessionId });
    expect(dataTree(store)).toEqual(trashed);
    await restore(c, { sessionId });
    expect((await readAll(c, sessionId)).map((r) => r.seq)).toEqual([1]);
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
