/**
 * Store contract: session/list filters (cwd, cwdPrefix, tags, parentId, updatedAfter/Before,
 * includeDeleted, query) and their paging with the cursor; session/search over message text
 * with its limit and cursor. Filters are matched on summaries: after a reopen (file: from the
 * list cache and index entries) the answers are the same.
 */
import { expect, it } from 'vitest';
import { searchSessions } from '../../src/core/services/search.js';
import type { SessionStore } from '../../src/domain/types.js';
import { eachBackend, note, storeError, user } from './backends.js';

const ids = async (s: SessionStore, opts: Parameters<SessionStore['list']>[0]) => {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await s.list({ ...opts, ...(cursor ? { cursor } : {}) });
    out.push(...page.sessions.map((x) => x.sessionId));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
};

eachBackend('session/list filters and session/search', (setup) => {
  it('filters combine with AND, page with the cursor, and hold after a reopen', async () => {
    const f = await setup();
    const s = f.store;
    const a = (await s.create({ cwd: '/w/app', title: 'Fix the Build', tags: ['ci', 'team:a'] })).sessionId;
    const b = (await s.create({ cwd: '/w/app/sub', tags: ['ci'] })).sessionId;
    const c = (await s.create({ cwd: '/wx', title: 'other' })).sessionId;
    await s.append(c, [user('the DEPLOY went fine')]);
    const d = (await s.create({ cwd: '/w/app', parent: { sessionId: a, relation: 'continuation' } })).sessionId;
    await s.update(b, { title: 'renamed build', tags: ['ci', 'x'] });
    const check = async (store: SessionStore) => {
      expect(new Set(await ids(store, { cwd: '/w/app' }))).toEqual(new Set([a, d]));
      expect(new Set(await ids(store, { cwdPrefix: '/w' }))).toEqual(new Set([a, b, d])); // not /wx
      expect(new Set(await ids(store, { tags: ['ci'] }))).toEqual(new Set([a, b]));
      expect(await ids(store, { tags: ['ci', 'x'] })).toEqual([b]);
      expect(await ids(store, { parentId: a })).toEqual([d]);
      expect(new Set(await ids(store, { query: 'BUILD' }))).toEqual(new Set([a, b])); // titles, case-insensitive
      expect(await ids(store, { query: 'deploy' })).toEqual([c]); // the last message summary
      expect(await ids(store, { query: 'team:' })).toEqual([a]); // a tag
      expect(await ids(store, { cwdPrefix: '/w', tags: ['ci'], query: 'renamed' })).toEqual([b]);
      // a filtered pagination, one by one, lists each match once in the unfiltered order
      const all = await ids(store, {});
      expect(await ids(store, { cwdPrefix: '/w', limit: 1 })).toEqual(all.filter((x) => [a, b, d].includes(x)));
    };
    await check(s);
    await s.closeAll();
    const other = await f.reopen();
    await check(other);
    await check(other); // the second list answers from the list cache
  });

  it('many sessions: every page in newest-first order (ties by id), each session once, filtered pages too, with sessions updated and trashed between pages', async () => {
    const f = await setup();
    const s = f.store;
    const made: string[] = [];
    for (let i = 0; i < 130; i++) made.push((await s.create({ cwd: i % 7 === 0 ? '/seven' : '/other', title: `s${i}` })).sessionId);
    for (const id of made.filter((_, i) => i % 3 === 0)) await s.append(id, [user(`touched ${id}`)]); // later updatedAt, some equal to the millisecond
    const summaries = async (opts: Parameters<SessionStore['list']>[0]) => {
      const out: Array<{ sessionId: string; updatedAt: string }> = [];
      let cursor: string | undefined;
      do {
        const page = await s.list({ ...opts, ...(cursor ? { cursor } : {}) });
        expect(page.sessions.length).toBeLessThanOrEqual(opts?.limit ?? 100);
        out.push(...page.sessions);
        cursor = page.nextCursor;
      } while (cursor);
      return out;
    };
    const all = await summaries({ limit: 17 });
    expect(all.map((x) => x.sessionId).sort()).toEqual([...made].sort());
    const order = [...all].sort((x, y) => (x.updatedAt !== y.updatedAt ? (x.updatedAt < y.updatedAt ? 1 : -1) : x.sessionId < y.sessionId ? 1 : -1));
    expect(all).toEqual(order); // JavaScript's string order, whatever the database's collation
    expect((await summaries({})).map((x) => x.sessionId)).toEqual(all.map((x) => x.sessionId)); // the default page size
    const sevens = all.filter((x) => made.indexOf(x.sessionId) % 7 === 0).map((x) => x.sessionId);
    expect((await summaries({ cwd: '/seven', limit: 4 })).map((x) => x.sessionId)).toEqual(sevens);
    expect((await summaries({ cwd: '/seven', limit: 100 })).map((x) => x.sessionId)).toEqual(sevens);
    // between pages: the newest is appended to (moves before the cursor), an old one is trashed
    const first = await s.list({ limit: 10 });
    const oldest = all[all.length - 1]!.sessionId;
    await s.append(all[0]!.sessionId, [user('again')]);
    await s.delete(oldest);
    const rest: string[] = [];
    for (let cursor = first.nextCursor; cursor;) {
      const page = await s.list({ limit: 10, cursor });
      rest.push(...page.sessions.map((x) => x.sessionId));
      cursor = page.nextCursor;
    }
    expect([...first.sessions.map((x) => x.sessionId), ...rest]).toEqual(all.map((x) => x.sessionId).filter((x) => x !== oldest));
    expect((await summaries({ includeDeleted: true, limit: 50 })).filter((x) => (x as { deleted?: boolean }).deleted).map((x) => x.sessionId)).toEqual([oldest]);
  });

  it('updatedAfter / updatedBefore, validated; includeDeleted lists the trash marked deleted', async () => {
    const f = await setup();
    const s = f.store;
    const a = (await s.create({ title: 'a' })).sessionId;
    const mid = new Date(Date.now() + 5).toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const b = (await s.create({ title: 'b' })).sessionId;
    expect(await ids(s, { updatedAfter: mid })).toEqual([b]);
    expect(await ids(s, { updatedBefore: mid })).toEqual([a]);
    expect(await ids(s, { updatedAfter: mid.replace('Z', '+00:00') })).toEqual([b]);
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-01-01']) {
      expect((await storeError(s.list({ updatedAfter: bad }), 'InvalidArgument')).details.path).toBe('updatedAfter');
    }
    await storeError(s.list({ cwd: '/a', cwdPrefix: '/a' }), 'InvalidArgument');
    await storeError(s.list({ tags: ['no space'] }), 'InvalidArgument');
    await s.close(a);
    await s.delete(a);
    expect(await ids(s, {})).toEqual([b]);
    const withTrash = await s.list({ includeDeleted: true });
    expect(withTrash.sessions.map((x) => [x.sessionId, x.deleted])).toEqual([[b, undefined], [a, true]]);
    expect((await s.list({ includeDeleted: true, query: 'a' })).sessions.map((x) => x.sessionId)).toEqual([a]);
  });

  it('search: hits in (session, seq) order with snippets; limit and cursor page through them; sessionIds narrows', async () => {
    const f = await setup();
    const s = f.store;
    const a = (await s.create({})).sessionId;
    const b = (await s.create({})).sessionId;
    await s.append(a, [user('first Needle here'), note(1), user('nothing'), { kind: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'a needle in parts' }] } }]);
    await s.append(b, [user(`${'x'.repeat(300)} NEEDLE ${'y'.repeat(300)}`), { kind: 'event', type: 'needle', payload: 'needle' }]);
    const all = await searchSessions(s, { query: 'needle' });
    expect(all.hits.map((h) => [h.sessionId, h.seq])).toEqual([[a, 1], [a, 4], [b, 1]]);
    expect(all.hits[0]!.snippet).toBe('first Needle here');
    expect(all.hits[2]!.snippet).toMatch(/^…x+ NEEDLE y+…$/);
    expect(Array.from(all.hits[2]!.snippet).length).toBeLessThanOrEqual(162);
    expect(all.nextCursor).toBeUndefined();
    const p1 = await searchSessions(s, { query: 'needle', limit: 2 });
    expect(p1.hits.map((h) => h.seq)).toEqual([1, 4]);
    const p2 = await searchSessions(s, { query: 'needle', limit: 2, cursor: p1.nextCursor });
    expect(p2.hits.map((h) => [h.sessionId, h.seq])).toEqual([[b, 1]]);
    expect((await searchSessions(s, { query: 'needle', sessionIds: [b] })).hits.map((h) => h.sessionId)).toEqual([b]);
    await storeError(searchSessions(s, { query: 'x', cursor: 'nope' }), 'InvalidArgument');
    await storeError(searchSessions(s, { query: 'x', sessionIds: ['01ZZZZZZZZZZZZZZZZZZZZZZZZ'] }), 'SessionNotFound');
    const reader = await f.reopen({ readOnly: true });
    expect((await searchSessions(reader, { query: 'NEEDLE' })).hits).toEqual(all.hits);
  });

  it('search snippets are scrubbed of a secret registered after the text was stored', async () => {
    const secret = 'sk-late-0123456789abcdefghijklmnop-LATER';
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [user(`the flaky key was ${secret} yesterday`)]);
    await s.open(id, 'write', { values: [secret] });
    const { hits } = await searchSessions(s, { query: 'flaky' });
    expect(hits.map((h) => h.seq)).toEqual([1]);
    expect(hits[0]!.snippet).not.toContain(secret);
    expect(hits[0]!.snippet).toContain('the flaky key was');
  });
});
