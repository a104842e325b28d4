import { expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { canonical, newSession, readAll, user } from './util.js';

/** §13: provenance, fork, delete (trash, purge), restore. */
export const lineage: Scenario = {
  name: 'lineage',
  summary: 'parent links, fork at a seq, delete to trash, restore, purge; SessionNotFound',
  async run(t) {
    const p = await t.started();
    const parent = await newSession(p, { title: 'parent' });
    await p.call('session/append', { sessionId: parent, records: ['a', 'b', 'c'].map(user) });
    let fork = '';
    await t.check('fork', async () => {
      fork = expectResult<{ sessionId: string }>(await p.request('session/fork', { sessionId: parent, atSeq: 2 })).sessionId;
      const [mine, theirs] = [await readAll(p, fork), (await readAll(p, parent)).slice(0, 2)];
      expectEqual(canonical(mine), canonical(theirs), 'the fork holds the parent records up to atSeq, seq and ts included');
      expectEqual(await p.call('session/append', { sessionId: fork, records: [user('d')] }), { firstSeq: 3, lastSeq: 3 }, 'append to the fork');
    });
    await t.check('fork-parent-link', async () => {
      await p.call('session/close', { sessionId: fork });
      const r = await p.call<Json>('session/open', { sessionId: fork, mode: 'read' });
      expectEqual(r.parent, { sessionId: parent, relation: 'fork', atSeq: 2 }, 'parent');
      expectEqual(r.title, 'parent', 'title copied');
    });
    await t.check('create-with-parent', async () => {
      const c = await p.call<{ sessionId: string }>('session/create', { parent: { sessionId: parent, relation: 'continuation', atSeq: 3 } });
      const listed = (await p.call<{ sessions: Json[] }>('session/list', {})).sessions.find((s) => s.sessionId === c.sessionId);
      expectEqual(listed?.parent, { sessionId: parent, relation: 'continuation', atSeq: 3 }, 'listed parent');
      expectError(await p.request('session/create', { parent: { sessionId: 'missing', relation: 'fork' } }), -31001, 'SessionNotFound');
    });
    await t.check('delete', async () => {
      expectEqual(expectResult(await p.request('session/delete', { sessionId: parent })), {}, 'result');
      const listed = (await p.call<{ sessions: Json[] }>('session/list', {})).sessions.map((s) => s.sessionId);
      expectEqual(listed.includes(parent), false, 'still listed');
      expectError(await p.request('session/open', { sessionId: parent }), -31001, 'SessionNotFound');
    });
    await t.check('restore', async () => {
      expectEqual(expectResult(await p.request('session/restore', { sessionId: parent })), {}, 'result');
      expectEqual((await readAll(p, parent)).length, 3, 'records after restore');
      expectError(await p.request('session/restore', { sessionId: parent }), -31001, 'SessionNotFound');
    });
    await t.check('purge', async () => {
      expectResult(await p.request('session/delete', { sessionId: fork, purge: true }));
      expectError(await p.request('session/restore', { sessionId: fork }), -31001, 'SessionNotFound');
      expectError(await p.request('session/delete', { sessionId: 'never-was' }), -31001, 'SessionNotFound');
    });
  },
};
