/**
 * Store contract: session/prune (protocol §18) on both backends — the engine's prune over each
 * store. Age is measured against `now`, which the tests move into the future (no clock faked).
 */
import { expect, it } from 'vitest';
import { MemoryBackend } from '../../src/backends/memory/memoryBackend.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { SecretSet } from '../../src/domain/secrets/knownSecrets.js';
import type { SessionHeaderInput, SessionStore } from '../../src/domain/types.js';
import { EphemeralRouter } from '../../src/core/services/ephemeral.js';
import { pruneSessions } from '../../src/core/services/prune.js';
import { selectForPrune } from '../../src/domain/retention.js';
import { eachBackend, readAll, storeError, user } from './backends.js';

const DAY = 86_400_000;
const ids = async (s: SessionStore) => (await s.list()).sessions.map((x) => x.sessionId);
const tagged = (title: string, tags?: string[]) => ({ title, ...(tags ? { tags } : {}) }) as SessionHeaderInput;

/** Sessions a, b, c, d updated in that order (d most recently), closed. */
async function four(s: SessionStore, tags: Array<string[] | undefined> = []): Promise<[string, string, string, string]> {
  const out: string[] = [];
  for (const [i, t] of ['a', 'b', 'c', 'd'].entries()) {
    const { sessionId } = await s.create(tagged(t, tags[i]));
    await s.append(sessionId, [user(t)]);
    await s.close(sessionId);
    out.push(sessionId);
    await new Promise((r) => setTimeout(r, 5)); // distinct updatedAt
  }
  return out as [string, string, string, string];
}

eachBackend('prune', (setup) => {
  it('olderThan against the last update, keepLast of the selected, dryRun moves nothing; the moved are in the trash, restorable whole', async () => {
    const { store: s } = await setup();
    const [a, b, c, d] = await four(s);
    expect((await pruneSessions(s, { olderThan: '30d' }, Date.now())).sessions).toEqual([]);
    const dry = await pruneSessions(s, { olderThan: '30d', keepLast: 1, dryRun: true }, Date.now() + 31 * DAY);
    expect(dry.dryRun).toBe(true);
    expect(dry.sessions.map((x) => x.sessionId)).toEqual([c, b, a]);
    expect(dry.sessions[0]).toMatchObject({ title: 'c', updatedAt: expect.any(String), bytes: expect.any(Number) });
    expect((await ids(s)).sort()).toEqual([a, b, c, d].sort());
    const done = await pruneSessions(s, { olderThan: 'P30D', keepLast: 1 }, Date.now() + 31 * DAY);
    expect(done).toMatchObject({ dryRun: false, skipped: [] });
    expect(done.sessions.map((x) => x.sessionId)).toEqual([c, b, a]);
    expect(await ids(s)).toEqual([d]);
    await storeError(s.open(a, 'read'), 'SessionNotFound');
    await s.restore(a);
    expect((await readAll(s, a)).map((r) => r.message)).toEqual([{ role: 'user', content: 'a' }]);
    // keepLast larger than the selection: nothing moves
    expect((await pruneSessions(s, { olderThan: '1s', keepLast: 5 }, Date.now() + DAY)).sessions).toEqual([]);
  });

  it('a session open for writing (in this instance or another) is skipped, never moved; one open for reading here is moved; a dry run reports exactly that', async () => {
    const f = await setup();
    const s = f.store;
    const [a, b, c, d] = (await four(s)) as [string, string, string, string];
    await s.open(a, 'write');
    const other = await f.reopen();
    await other.open(b, 'write');
    await s.open(c, 'read');
    const dry = await pruneSessions(s, { olderThan: '1d', keepLast: 1, dryRun: true }, Date.now() + 2 * DAY);
    expect(dry).toEqual({ dryRun: true, sessions: [expect.objectContaining({ sessionId: c })], skipped: [{ sessionId: b, reason: 'open' }, { sessionId: a, reason: 'open' }] });
    expect((await ids(s)).sort()).toEqual([a, b, c, d].sort());
    expect((await s.read(c)).records).toHaveLength(1); // still open for reading here
    const r = await pruneSessions(s, { olderThan: '1d', keepLast: 1 }, Date.now() + 2 * DAY);
    expect(r.skipped).toEqual([{ sessionId: b, reason: 'open' }, { sessionId: a, reason: 'open' }]);
    expect(r.sessions.map((x) => x.sessionId)).toEqual([c]);
    expect((await ids(s)).sort()).toEqual([a, b, d].sort());
    expect(await s.append(a, [user('still writable')])).toMatchObject({ firstSeq: 2 });
    expect(await other.append(b, [user('still writable')])).toMatchObject({ firstSeq: 2 });
  });

  it('tags (all of them) narrow the selection; a session without tags never matches', async () => {
    const { store: s } = await setup();
    const [a, b, c, d] = await four(s, [['ci', 'x'], ['ci'], undefined, ['x']]);
    const r = await pruneSessions(s, { olderThan: '1h', tags: ['ci', 'x'] }, Date.now() + DAY);
    expect(r.sessions.map((x) => x.sessionId)).toEqual([a]);
    const r2 = await pruneSessions(s, { olderThan: '1h', tags: ['x'], dryRun: true }, Date.now() + DAY);
    expect(r2.sessions.map((x) => x.sessionId)).toEqual([d]);
    expect((await ids(s)).sort()).toEqual([b, c, d].sort());
  });

  it('a malformed olderThan is InvalidArgument and moves nothing; ephemeral sessions are never pruned', async () => {
    const secrets = new SecretSet();
    const f = await setup({ secrets });
    const s = new EphemeralRouter(f.store, () => new Sessions(new MemoryBackend(), { secrets }));
    const [a] = await four(s);
    for (const bad of ['30', '30y', 'P1M', 'P', 'PT', '-1d', '1.5h', '']) {
      expect((await storeError(pruneSessions(s, { olderThan: bad }, Date.now() + DAY), 'InvalidArgument')).details).toMatchObject({ path: 'olderThan' });
    }
    expect(await ids(s)).toHaveLength(4);
    const { sessionId: e } = await s.createEphemeral({});
    const r = await pruneSessions(s, { olderThan: '0s' }, Date.now() + DAY);
    expect(r.sessions.map((x) => x.sessionId)).not.toContain(e);
    expect(r.sessions.map((x) => x.sessionId)).toContain(a);
    expect(await ids(s)).toEqual([e]);
  });
  it('in pages: a page at a time from the list, the result the one selecting everything first gives (ephemeral sessions among them)', async () => {
    const secrets = new SecretSet();
    const f = await setup({ secrets });
    const s = new EphemeralRouter(f.store, () => new Sessions(new MemoryBackend(), { secrets }));
    const made: string[] = [];
    for (let i = 0; i < 11; i++) {
      const { sessionId } = await s.create(tagged(`t${i}`, i % 3 === 0 ? undefined : i % 2 ? ['ci', 'x'] : ['ci']));
      await s.append(sessionId, [user(`m${i}`)]);
      await s.close(sessionId);
      made.push(sessionId);
      await new Promise((r) => setTimeout(r, 3));
    }
    await s.createEphemeral({});
    const now = Date.now() + 2 * DAY;
    const all = (await s.list({ limit: 1000 })).sessions.filter((x) => !x.ephemeral);
    let lists = 0;
    const counting = new Proxy(s, {
      get(target, key, recv) {
        if (key === 'list') return (o: Parameters<SessionStore['list']>[0]) => { lists++; expect(o?.limit).toBe(3); return target.list(o); };
        const v = Reflect.get(target, key, recv) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as SessionStore;
    for (const req of [{ olderThan: '1d', keepLast: 2 }, { olderThan: '1d', tags: ['ci'], keepLast: 1 }, { olderThan: '1d', tags: ['x'] }, { olderThan: '30d' }]) {
      lists = 0;
      const r = await pruneSessions(counting, { ...req, dryRun: true }, now, undefined, { pageSize: 3 });
      const tagsOf = async (id: string) => (await s.header(id)).tags;
      const withTags = await Promise.all(all.map(async (x) => ({ ...x, tags: x.tags ?? await tagsOf(x.sessionId) })));
      const expected = selectForPrune(withTags, { olderThanMs: req.olderThan === '1d' ? DAY : 30 * DAY, keepLast: req.keepLast, tags: req.tags }, now);
      expect(r.sessions.map((x) => x.sessionId), JSON.stringify(req)).toEqual(expected.map((x) => x.sessionId));
      expect(lists).toBeGreaterThanOrEqual(4); // 12 sessions, 3 a page
    }
    const moved = await pruneSessions(s, { olderThan: '1d', keepLast: 4 }, now, undefined, { pageSize: 3 });
    expect(moved.sessions.map((x) => x.sessionId)).toEqual([...made].reverse().slice(4));
    expect((await s.list({ limit: 100 })).sessions.filter((x) => !x.ephemeral).map((x) => x.sessionId)).toEqual([...made].reverse().slice(0, 4));
  });
});
