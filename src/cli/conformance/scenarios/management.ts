import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, readAll, user } from './util.js';

type Caps = { session?: { update?: unknown; search?: unknown; list?: { filters?: boolean } } };

/** §4.11-4.12 and §4.9's filters: session/update, filtered session/list, session/search (optional capabilities). */
export const management: Scenario = {
  name: 'management',
  summary: 'session/update (title, metadata merge patch, tags) durable across processes; list filters; session/search paging',
  async run(t) {
    const store = t.newStore();
    const p = t.spawn(store);
    const init = await p.initialize() as { capabilities?: Caps };
    const session = init.capabilities?.session;
    if (!session?.update || !session.search || !session.list?.filters) {
      t.skip('capabilities', 'the server does not advertise session.update, session.search and session.list.filters');
      return;
    }
    let sessionId = '';
    await t.check('update', async () => {
      sessionId = await newSession(p, { title: 'old', cwd: '/w/app', metadata: { a: 1, b: { c: 2, d: 3 } }, tags: ['ci'] });
      await p.call('session/append', { sessionId, records: [user('find the needle please')] });
      const r = expectResult<Json>(await p.request('session/update', { sessionId, title: 'New\ntitle', metadata: { b: { c: null }, e: true }, tags: ['ci', 'team:a'] }));
      expectEqual([r.sessionId, r.seq, r.title, r.tags, r.cwd], [sessionId, 2, 'New title', ['ci', 'team:a'], '/w/app'], 'sessionId, seq, title, tags, cwd');
      expectEqual(r.metadata, { a: 1, b: { d: 3 }, e: true }, 'merged metadata');
    });
    await t.check('update-record', async () => {
      const recs = await readAll(p, sessionId);
      expectEqual(recs.map((x) => x.kind), ['message', 'sessionUpdate'], 'kinds');
      expectEqual([recs[1]?.title, recs[1]?.tags], ['New title', ['ci', 'team:a']], 'the record holds the update as given');
    });
    await t.check('update-reflected', async () => {
      const other = await t.started(store);
      const o = expectResult<Json>(await other.request('session/open', { sessionId, mode: 'read' }));
      expectEqual([o.title, o.tags, o.metadata], ['New title', ['ci', 'team:a'], { a: 1, b: { d: 3 }, e: true }], 'open in another process');
      const l = expectResult<{ sessions: Json[] }>(await other.request('session/list', {}));
      const s = l.sessions.find((x) => x.sessionId === sessionId);
      expectEqual([s?.title, s?.tags, s?.cwd], ['New title', ['ci', 'team:a'], '/w/app'], 'listed');
      expectError(await other.request('session/update', { sessionId, title: 'no' }), -31009, 'ReadOnly');
    });
    await t.check('update-refusals', async () => {
      expectError(await p.request('session/update', { sessionId, tags: ['not a tag'] }, { invalid: true }), -32602, 'InvalidParams');
      const empty = expectError(await p.request('session/update', { sessionId }), -32602, 'InvalidParams');
      expect((empty.data?.issues as Json[] | undefined)?.length === 1, 'one issue for an empty update');
      expectEqual((await readAll(p, sessionId)).length, 2, 'nothing was written');
    });
    let second = '';
    await t.check('list-filters', async () => {
      second = await newSession(p, { cwd: '/w/other', title: 'another one' });
      const byTag = expectResult<{ sessions: Json[] }>(await p.request('session/list', { tags: ['team:a'] }));
      expectEqual(byTag.sessions.map((s) => s.sessionId), [sessionId], 'tags');
      const byPrefix = expectResult<{ sessions: Json[] }>(await p.request('session/list', { cwdPrefix: '/w' }));
      expectEqual(byPrefix.sessions.length, 2, 'cwdPrefix');
      const byCwd = expectResult<{ sessions: Json[] }>(await p.request('session/list', { cwd: '/w/other' }));
      expectEqual(byCwd.sessions.map((s) => s.sessionId), [second], 'cwd');
      const byQuery = expectResult<{ sessions: Json[] }>(await p.request('session/list', { query: 'NEW TITLE' }));
      expectEqual(byQuery.sessions.map((s) => s.sessionId), [sessionId], 'query');
      const bad = expectError(await p.request('session/list', { updatedAfter: 'yesterday' }), -32602, 'InvalidParams');
      expectEqual((bad.data?.issues as Json[] | undefined)?.[0]?.path, 'updatedAfter', 'the issue names updatedAfter');
    });
    await t.check('list-includeDeleted', async () => {
      await p.call('session/close', { sessionId: second });
      await p.call('session/delete', { sessionId: second });
      const live = expectResult<{ sessions: Json[] }>(await p.request('session/list', {}));
      expect(!live.sessions.some((s) => s.sessionId === second), 'a deleted session is listed without includeDeleted');
      const all = expectResult<{ sessions: Json[] }>(await p.request('session/list', { includeDeleted: true }));
      expectEqual(all.sessions.find((s) => s.sessionId === second)?.deleted, true, 'deleted mark');
    });
    await t.check('search', async () => {
      const third = await newSession(p);
      await p.call('session/append', { sessionId: third, records: [user('a NEEDLE'), user('no'), user('needle again')] });
      const first = expectResult<{ hits: Json[]; nextCursor?: string }>(await p.request('session/search', { query: 'needle', limit: 2 }));
      expectEqual(first.hits.map((h) => [h.sessionId, h.seq]), [[sessionId, 1], [third, 1]], 'first page in (session, seq) order');
      expectEqual(first.hits[0]?.snippet, 'find the needle please', 'snippet');
      expect(typeof first.nextCursor === 'string', 'no nextCursor after a full page');
      const next = expectResult<{ hits: Json[]; nextCursor?: string }>(await p.request('session/search', { query: 'needle', limit: 2, cursor: first.nextCursor }));
      expectEqual(next.hits.map((h) => [h.sessionId, h.seq]), [[third, 3]], 'second page');
      const only = expectResult<{ hits: Json[] }>(await p.request('session/search', { query: 'needle', sessionIds: [third] }));
      expectEqual(only.hits.length, 2, 'sessionIds');
    });
    await t.check('shutdown', async () => expectEqual(await p.shutdown(), 0, 'exit code'));
  },
};
