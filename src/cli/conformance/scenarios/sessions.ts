import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, user } from './util.js';

/** §4.5-4.10: create, open, append, read, list, close, and their documented errors. */
export const sessions: Scenario = {
  name: 'sessions',
  summary: 'create/open/append/read/list/close success paths; SessionNotFound, InvalidSessionId, Conflict, ReadOnly, SessionLocked',
  async run(t) {
    const store = t.newStore();
    const p = await t.started(store);
    let sessionId = '';
    await t.check('create', async () => {
      const r = expectResult<Json>(await p.request('session/create', { title: 't', cwd: '/w', systemPrompt: 'Be brief.', metadata: { a: 1 } }));
      sessionId = r.sessionId as string;
      expect(/^[A-Za-z0-9._-]{1,128}$/.test(sessionId), 'sessionId format');
      expectEqual(r.secrets, { registered: 0 }, 'secrets');
    });
    await t.check('append', async () => {
      expectEqual(expectResult(await p.request('session/append', { sessionId, records: [user('a'), user('b')] })), { firstSeq: 1, lastSeq: 2 }, 'result');
    });
    await t.check('append-expectedLastSeq', async () => {
      expectEqual(expectResult(await p.request('session/append', { sessionId, records: [user('c')], expectedLastSeq: 2 })), { firstSeq: 3, lastSeq: 3 }, 'result');
    });
    await t.check('Conflict', async () => {
      expectError(await p.request('session/append', { sessionId, records: [user('x')], expectedLastSeq: 1 }), -31003, 'Conflict');
    });
    await t.check('read', async () => {
      const r = expectResult<{ records: Json[]; lastSeq: number; nextAfterSeq: number | null }>(await p.request('session/read', { sessionId }));
      expectEqual(r.records.map((x) => x.seq), [1, 2, 3], 'seqs');
      expectEqual(r.lastSeq, 3, 'lastSeq');
      expectEqual(r.nextAfterSeq, null, 'nextAfterSeq');
    });
    await t.check('list', async () => {
      const r = expectResult<{ sessions: Json[] }>(await p.request('session/list', {}));
      const s = r.sessions.find((x) => x.sessionId === sessionId);
      expect(s, 'the session is not listed');
      expectEqual([s.title, s.lastSeq], ['t', 3], 'title and lastSeq');
    });
    await t.check('InvalidParams-append', async () => {
      const err = expectError(await p.request('session/append', { sessionId, records: [] }, { invalid: true }), -32602, 'InvalidParams');
      expect((err.data?.issues as Json[])?.some((i) => String(i.path).startsWith('records')), 'no issue names records');
    });
    await t.check('SessionNotFound', async () => {
      expectError(await p.request('session/open', { sessionId: 'no-such-session' }), -31001, 'SessionNotFound');
    });
    await t.check('InvalidSessionId', async () => {
      expectError(await p.request('session/open', { sessionId: '../escape' }), -31002, 'InvalidSessionId');
    });
    await t.check('SessionLocked', async () => {
      const q = await t.started(store);
      expectError(await q.request('session/open', { sessionId }), -31014, 'SessionLocked');
      const r = expectResult<Json>(await q.request('session/open', { sessionId, mode: 'read' }));
      expectEqual([r.mode, r.lastSeq, r.title], ['read', 3, 't'], 'mode, lastSeq, title');
      expectError(await q.request('session/append', { sessionId, records: [user('x')] }), -31009, 'ReadOnly');
    });
    await t.check('close', async () => {
      expectEqual(expectResult(await p.request('session/close', { sessionId })), {}, 'result');
    });
    await t.check('open-write', async () => {
      const r = expectResult<Json>(await p.request('session/open', { sessionId }));
      expectEqual([r.mode, r.lastSeq, r.systemPrompt, r.cwd], ['write', 3, 'Be brief.', '/w'], 'mode, lastSeq, systemPrompt, cwd');
    });
    await t.check('list-paging', async () => {
      for (let i = 0; i < 3; i++) await newSession(p);
      const first = expectResult<{ sessions: Json[]; nextCursor?: string }>(await p.request('session/list', { limit: 2 }));
      expectEqual(first.sessions.length, 2, 'first page');
      expect(typeof first.nextCursor === 'string', 'no nextCursor after a full page');
      const second = expectResult<{ sessions: Json[]; nextCursor?: string }>(await p.request('session/list', { limit: 10, cursor: first.nextCursor }));
      const ids = [...first.sessions, ...second.sessions].map((s) => s.sessionId);
      expectEqual(new Set(ids).size, 4, 'distinct sessions over both pages');
    });
    await t.check('shutdown', async () => expectEqual(await p.shutdown(), 0, 'exit code'));
  },
};
