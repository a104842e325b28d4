import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect, expectEqual, expectError, type Scenario } from '../context.js';
import type { Json, Peer } from '../wire.js';
import { readAll, user } from './util.js';

/**
 * Every entry under `dir` with its bytes (directories included): the store directory of a
 * server must be the same before and after an ephemeral session's whole life. (For a database
 * store the directory holds only the local tool scratch; the database is checked by the store
 * contract tests.)
 */
function tree(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out.push(`${path.relative(dir, p)}/`);
        walk(p);
      } else out.push(`${path.relative(dir, p)} ${fs.readFileSync(p).toString('base64')}`);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out.join('\n');
}

async function listed(p: Peer): Promise<Json[]> {
  return (await p.call<{ sessions: Json[] }>('session/list', { limit: 1000 })).sessions;
}

/** §17: session/create ephemeral: memory only, gone at close and exit, seen only by its process. */
export const ephemeral: Scenario = {
  name: 'ephemeral',
  summary: 'ephemeral sessions: every method works, nothing written to the store, never opened by a path, listed (marked) only in their process, gone at close and exit',
  async run(t) {
    const store = t.newStore();
    const p = t.spawn(store);
    const init = await p.initialize();
    const caps = (init.capabilities as Json).session as Json;
    if (!caps.ephemeral) {
      t.skip('advertised', 'capabilities.session.ephemeral is not advertised');
      return;
    }
    const before = tree(store);
    let id = '';
    let forked = '';
    await t.check('life-writes-nothing', async () => {
      id = (await p.call<{ sessionId: string }>('session/create', { ephemeral: true, title: 'scratchpad' })).sessionId;
      expectEqual(await p.call('session/append', { sessionId: id, records: ['a', 'b'].map(user) }), { firstSeq: 1, lastSeq: 2 }, 'append');
      expectEqual((await readAll(p, id)).map((r) => r.seq), [1, 2], 'read');
      const ctx = await p.call<{ messages: Json[] }>('session/context', { sessionId: id });
      expectEqual(ctx.messages.length, 2, 'context messages');
      await p.call('state/set', { sessionId: id, key: 'plan', value: { step: 1 } });
      expectEqual((await p.call<{ value: unknown }>('state/get', { sessionId: id, key: 'plan' })).value, { step: 1 }, 'state');
      const { turnId } = await p.call<{ turnId: string }>('turn/start', { sessionId: id, kind: 'user' });
      await p.call('turn/finish', { sessionId: id, turnId, outcome: 'completed' });
      forked = (await p.call<{ sessionId: string }>('session/fork', { sessionId: id, atSeq: 1 })).sessionId;
      expectEqual((await readAll(p, forked)).length, 1, 'the fork (ephemeral too) holds seq 1');
      expectEqual(tree(store), before, 'the store directory after an ephemeral life');
    });
    await t.check('listed-marked', async () => {
      const mine = (await listed(p)).filter((s) => s.sessionId === id || s.sessionId === forked);
      expectEqual(mine.map((s) => s.ephemeral), [true, true], 'ephemeral marker of both');
      expectEqual(mine.find((s) => s.sessionId === id)?.title, 'scratchpad', 'title');
    });
    await t.check('other-process-never-sees-it', async () => {
      const q = await t.started(store);
      expectEqual((await listed(q)).some((s) => s.sessionId === id), false, 'listed in another process');
      expectError(await q.request('session/open', { sessionId: id, mode: 'read' }), -31001, 'SessionNotFound');
      await q.shutdown();
    });
    await t.check('lineage-stays-on-its-side', async () => {
      expectError(await p.request('session/create', { parent: { sessionId: id, relation: 'continuation' } }), -32602, 'InvalidParams');
      expectError(await p.request('tool/allocateScratch', { sessionId: id, requestId: 'r1' }), -32602, 'InvalidParams');
    });
    await t.check('no-path', async () => {
      // §17: an ephemeral session has no path; session/open {path} names durable sessions only, so
      // the path a durable session of this id would have finds nothing (SessionNotFound; -32602
      // from a store whose sessions have no paths at all) and opens nothing.
      const records = (await readAll(p, id)).length;
      for (const at of [path.join(store, 'sessions', id), path.join(store, 'sessions', id, 'journal.jsonl')]) {
        for (const mode of ['read', 'write']) {
          const a = await p.request('session/open', { path: at, mode });
          expect(a.error !== undefined, `session/open {path: ${JSON.stringify(at)}, mode: ${mode}} opened the ephemeral session: ${JSON.stringify(a.result)}`);
          if (a.error!.code === -32602) expectError(a, -32602, 'InvalidParams');
          else expectError(a, -31001, 'SessionNotFound');
        }
      }
      expectEqual((await readAll(p, id)).length, records, 'the ephemeral session\'s records by its id, after');
      expectEqual(tree(store), before, 'the store directory');
    });
    await t.check('secrets-gated', async () => {
      const S = `efS3cret${randomBytes(12).toString('hex')}`;
      const s = (await p.call<{ sessionId: string }>('session/create', { ephemeral: true, secrets: { values: [S] } })).sessionId;
      const err = expectError(await p.request('session/append', { sessionId: s, records: [user(`key ${S}`)] }), -31012, 'SecretRejected');
      expect(!JSON.stringify(err).includes(S), 'the error echoes the secret');
      expectEqual((await readAll(p, s)).length, 0, 'nothing appended');
      await p.call('session/close', { sessionId: s });
    });
    await t.check('gone-at-close', async () => {
      await p.call('session/close', { sessionId: id });
      expectError(await p.request('session/open', { sessionId: id, mode: 'read' }), -31001, 'SessionNotFound');
      expectEqual((await listed(p)).some((s) => s.sessionId === id), false, 'listed after close');
      expectEqual((await listed(p)).some((s) => s.sessionId === forked), true, 'the fork is still there until its own close');
    });
    await t.check('gone-at-exit', async () => {
      const r = await t.started(store);
      const s = (await r.call<{ sessionId: string }>('session/create', { ephemeral: true })).sessionId;
      await r.call('session/append', { sessionId: s, records: [user('x')] });
      await r.shutdown();
      const q = await t.started(store);
      expectError(await q.request('session/open', { sessionId: s, mode: 'read' }), -31001, 'SessionNotFound');
      await q.shutdown();
    });
  },
};
