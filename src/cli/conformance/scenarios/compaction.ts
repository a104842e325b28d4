import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, readAll, user } from './util.js';

/** §12: session/compact and session/history. */
export const compaction: Scenario = {
  name: 'compaction',
  summary: 'compact: checkpoint + suffix, archives in history, generation reads, Conflict (stage), context summary',
  async run(t) {
    const p = await t.started();
    const sessionId = await newSession(p, { systemPrompt: 'sys' });
    await p.call('session/append', { sessionId, records: ['a', 'b', 'c', 'd', 'e'].map(user) });
    let archived = -1;
    await t.check('Conflict-preCommit', async () => {
      const err = expectError(await p.request('session/compact', { sessionId, summary: 's', throughSeq: 3, expectedLastSeq: 4 }), -31003, 'Conflict');
      expectEqual(err.data?.stage, 'preCommit', 'data.stage');
    });
    await t.check('OutOfRange-throughSeq', async () => {
      const err = expectError(await p.request('session/compact', { sessionId, summary: 's', throughSeq: 9 }), -31018, 'OutOfRange');
      expectEqual(err.data?.path, 'throughSeq', 'data.path');
    });
    await t.check('compact', async () => {
      const r = expectResult<{ generation: number; checkpointSeq: number; archived: Json }>(await p.request('session/compact', { sessionId, summary: 'summary of a-c', throughSeq: 3 }));
      expectEqual([r.checkpointSeq, r.archived.records], [3, 5], 'checkpointSeq and archived records');
      archived = r.archived.generation as number;
      expectEqual(r.generation, archived + 1, 'generation');
    });
    await t.check('read-after-compact', async () => {
      const all = await readAll(p, sessionId);
      expectEqual(all.map((r) => [r.seq, r.kind]), [[3, 'checkpoint'], [4, 'message'], [5, 'message']], 'seq and kind');
      expectEqual(all[0]?.summary, 'summary of a-c', 'checkpoint summary');
    });
    await t.check('history', async () => {
      const r = expectResult<{ generations: Json[] }>(await p.request('session/history', { sessionId }));
      expectEqual(r.generations.map((g) => [g.generation, g.throughSeq, g.records]), [[archived, 3, 5]], 'generations');
    });
    await t.check('read-archived-generation', async () => {
      const all = await readAll(p, sessionId, { generation: archived });
      expectEqual(all.map((r) => r.seq), [1, 2, 3, 4, 5], 'seqs of the archive');
    });
    await t.check('append-continues-seq', async () => {
      expectEqual(await p.call('session/append', { sessionId, records: [user('f')] }), { firstSeq: 6, lastSeq: 6 }, 'result');
    });
    await t.check('context-uses-summary', async () => {
      const r = await p.call<{ messages: Json[] }>('session/context', { sessionId });
      expectEqual(r.messages.map((m) => [m.role, m.content]), [['system', 'sys'], ['user', 'summary of a-c'], ['user', 'd'], ['user', 'e'], ['user', 'f']], 'messages');
    });
    await t.check('OutOfRange-generation-atSeq-offset', async () => {
      // State-dependent refusals carry the range the value may take now (§6.2), not -32602.
      const gen = expectError(await p.request('session/read', { sessionId, generation: archived + 5 }), -31018, 'OutOfRange');
      expectEqual([gen.data?.path, gen.data?.min, gen.data?.max], ['generation', 0, archived + 1], 'read generation data');
      const fork = expectError(await p.request('session/fork', { sessionId, atSeq: 2 }), -31018, 'OutOfRange');
      expectEqual([fork.data?.path, fork.data?.min, fork.data?.max], ['atSeq', 3, 6], 'fork atSeq data');
      const { firstSeq } = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c', name: 'write_file', arguments: 'Z'.repeat(300_000) }] } }] });
      const stored = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: 1 })).records[0] as Json;
      const ref = (((stored.message as Json).toolCalls as Json[])[0] as Json).arguments as Json;
      expect(typeof ref?.$blob === 'string', 'large tool-call arguments are not stored as a BlobRef');
      const off = expectError(await p.request('blob/get', { sessionId, ref: ref.$blob, offset: 300_001 }), -31018, 'OutOfRange');
      expectEqual([off.data?.path, off.data?.min, off.data?.max], ['offset', 0, 300_000], 'blob/get offset data');
    });
  },
};
