import { expectEqual, expectError, type Scenario, sleep } from '../context.js';
import type { Json, Peer } from '../wire.js';
import { readAll, user } from './util.js';

const ids = async (p: Peer) => (await p.call<{ sessions: Json[] }>('session/list', { limit: 1000 })).sessions.map((s) => s.sessionId as string);

/** §18: session/prune moves to the trash (never removes), skips sessions open for writing, dryRun moves nothing. */
export const retention: Scenario = {
  name: 'retention',
  summary: 'session/prune: olderThan, keepLast, dryRun; open sessions skipped (a dry run too); pruned sessions restorable; bad durations refused',
  async run(t) {
    const store = t.newStore();
    const p = t.spawn(store);
    const init = await p.initialize();
    if (!((init.capabilities as Json).session as Json).prune) {
      t.skip('advertised', 'capabilities.session.prune is not advertised');
      return;
    }
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = (await p.call<{ sessionId: string }>('session/create', { title: `s${i}` })).sessionId;
      await p.call('session/append', { sessionId: id, records: [user(`m${i}`)] });
      made.push(id);
      await sleep(5);
    }
    const [a, b, c, d] = made as [string, string, string, string];
    for (const id of [a, b, c]) await p.call('session/close', { sessionId: id });
    await sleep(5);
    await t.check('nothing-young', async () => {
      const r = await p.call<Json>('session/prune', { olderThan: '30d' });
      expectEqual(r, { dryRun: false, sessions: [], skipped: [] }, 'result');
    });
    await t.check('dry-run', async () => {
      const r = await p.call<{ dryRun: boolean; sessions: Json[] }>('session/prune', { olderThan: '0s', keepLast: 1, dryRun: true });
      expectEqual(r.dryRun, true, 'dryRun');
      expectEqual(r.sessions.map((s) => s.sessionId), [c, b, a], 'would move (keepLast 1 keeps the newest)');
      expectEqual(r.sessions[0]?.title, 's2', 'title');
      expectEqual((await ids(p)).sort(), [...made].sort(), 'listed after a dry run');
    });
    await t.check('open-skipped', async () => {
      const r = await p.call<{ sessions: Json[]; skipped: Json[] }>('session/prune', { olderThan: '0s', keepLast: 2 });
      // d (open for writing here since its create) is the newest: kept by keepLast; then c kept
      expectEqual(r.sessions.map((s) => s.sessionId), [b, a], 'moved');
      expectEqual(r.skipped, [], 'skipped');
      const q = await t.started(store);
      await q.call('session/open', { sessionId: c, mode: 'write' });
      const dry = await p.call<{ dryRun: boolean; sessions: Json[]; skipped: Json[] }>('session/prune', { olderThan: '0s', dryRun: true });
      expectEqual(dry.skipped, [{ sessionId: d, reason: 'open' }, { sessionId: c, reason: 'open' }], 'dry run skipped: what the real prune skips, with its reason');
      expectEqual(dry.sessions, [], 'dry run would move');
      const r2 = await p.call<{ sessions: Json[]; skipped: Json[] }>('session/prune', { olderThan: '0s' });
      expectEqual(r2.skipped, [{ sessionId: d, reason: 'open' }, { sessionId: c, reason: 'open' }], 'skipped: open for writing here and in another process');
      expectEqual(r2.sessions, [], 'moved');
      expectEqual(await q.call('session/append', { sessionId: c, records: [user('still held')] }), { firstSeq: 2, lastSeq: 2 }, 'append by the holder after the prunes');
      await q.shutdown();
    });
    await t.check('restorable', async () => {
      expectEqual((await ids(p)).sort(), [c, d].sort(), 'listed');
      await p.call('session/restore', { sessionId: a });
      expectEqual((await readAll(p, a)).length, 1, 'records of a restored session');
    });
    await t.check('bad-duration', async () => {
      for (const olderThan of ['30', '1y', 'P1M', 'soon']) expectError(await p.request('session/prune', { olderThan }), -32602, 'InvalidParams');
      expectError(await p.request('session/prune', {}, { invalid: true }), -32602, 'InvalidParams');
    });
  },
};
