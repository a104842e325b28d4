import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionCompactResult, SessionHistoryResult, SessionReadResult } from '../../dist/protocol/index.js';
import { snapshotTree, tempDir } from '../helpers.js';
import { FRAMINGS, type SidecarClient, SidecarError, spawnSidecar, startSidecar } from './harness.js';

/**
 * session/compact, session/history and session/read `generation` over real pipes against the
 * built binary (protocol/README.md section 12), in both framings: results valid against the
 * protocol's schemas, every error code, and SIGKILL at random moments of a loop of compactions
 * under concurrent appends.
 */

type Rec = { kind: 'message'; message: { role: string; content: string } };
type Stored = Record<string, unknown> & { seq: number; kind: string };
type Compacted = { generation: number; checkpointSeq: number; archived: { generation: number; records: number; bytes: number } };
type History = { generations: Array<{ generation: number; throughSeq: number; records: number; bytes: number; createdAt: string }> };

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const msg = (role: string, content: string): Rec => ({ kind: 'message', message: { role, content } });
const journalOf = (store: string, id: string) => path.join(store, 'sessions', id, 'journal.jsonl');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rejection(p: Promise<unknown>): Promise<SidecarError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SidecarError);
  return err as SidecarError;
}

const compact = (c: SidecarClient, params: Record<string, unknown>) => c.request<Compacted>('session/compact', params);
const history = (c: SidecarClient, sessionId: string) => c.request<History>('session/history', { sessionId });

async function readAll(c: SidecarClient, sessionId: string, generation?: number): Promise<Stored[]> {
  const out: Stored[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await c.request<{ records: Stored[]; nextAfterSeq: number | null }>('session/read', {
      sessionId, afterSeq, limit: 500, ...(generation === undefined ? {} : { generation }),
    });
    SessionReadResult.parse(page);
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

function tempsUnder(store: string): string[] {
  return Object.keys(snapshotTree(store)).filter((p) => p.endsWith('.tmp'));
}

describe.each(FRAMINGS)('session/compact, session/history, session/read generation (%s)', (framing) => {
  it('compacts: the result, the checkpoint as read, history, archived generations, context; across a restart', async () => {
    const store = tempDir();
    const c = spawnSidecar({ framing, store });
    const init = await c.initialize();
    expect((init.capabilities.session as Record<string, unknown>).compact).toBe(true);
    const { sessionId } = await c.create({ title: 'compact me', systemPrompt: 'Be brief.' });
    await c.append({ sessionId, records: [msg('user', 'q1'), msg('assistant', 'a1'), msg('user', 'q2')] });
    await c.append({ sessionId, records: [msg('assistant', 'a2')] });
    await c.append({ sessionId, records: [msg('user', 'q3')] });
    await c.append({ sessionId, records: [msg('assistant', 'a3')] });
    const original = await readAll(c, sessionId);
    const bytes = fs.statSync(journalOf(store, sessionId)).size;

    const res = await compact(c, { sessionId, summary: 'We discussed q1\tand q2.\u0007', throughSeq: 4, provider: 'openai', model: 'gpt-x', expectedLastSeq: 6 });
    SessionCompactResult.parse(res);
    expect(res).toEqual({ generation: 1, checkpointSeq: 4, archived: { generation: 0, records: 6, bytes } });

    const h = await history(c, sessionId);
    SessionHistoryResult.parse(h);
    expect(h.generations).toEqual([{ generation: 0, throughSeq: 4, records: 6, bytes, createdAt: expect.stringMatching(RFC3339_MS) }]);

    const active = await readAll(c, sessionId);
    expect(active.map((r) => r.seq)).toEqual([4, 5, 6]);
    expect(active[0]).toEqual({
      seq: 4, ts: h.generations[0]!.createdAt, kind: 'checkpoint', generation: 1, throughSeq: 4, turn: null,
      counters: { summarizedRecords: 4 }, archived: { generation: 0, records: 6, bytes },
      summary: 'We discussed q1\tand q2.', provider: 'openai', model: 'gpt-x',
    });
    expect(active.slice(1)).toEqual(original.slice(4));
    expect(await readAll(c, sessionId, 0)).toEqual(original);
    expect(await readAll(c, sessionId, 1)).toEqual(active);
    const page = await c.read({ sessionId, generation: 0, afterSeq: 1, limit: 2 });
    expect(page.records.map((r) => r.seq)).toEqual([2, 3]);
    expect(page.nextAfterSeq).toBe(3);

    const ctx = await c.request<{ messages: unknown[] }>('session/context', { sessionId });
    expect(ctx.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'We discussed q1\tand q2.' },
      { role: 'user', content: 'q3' },
      { role: 'assistant', content: 'a3' },
    ]);
    expect(await c.append({ sessionId, records: [msg('user', 'q4')] })).toEqual({ firstSeq: 7, lastSeq: 7 });
    await c.shutdown();

    // Another process: the same view; compacting again archives generation 1.
    const d = await startSidecar({ framing, store });
    expect((await readAll(d, sessionId)).map((r) => r.seq)).toEqual([4, 5, 6, 7]);
    expect((await d.open({ sessionId })).lastSeq).toBe(7);
    const again = await compact(d, { sessionId, summary: 'Up to a3.', throughSeq: 6 });
    expect(again).toMatchObject({ generation: 2, checkpointSeq: 6, archived: { generation: 1, records: 4 } });
    expect((await history(d, sessionId)).generations.map((g) => [g.generation, g.throughSeq])).toEqual([[0, 4], [1, 6]]);
    expect((await readAll(d, sessionId)).map((r) => [r.seq, r.kind])).toEqual([[6, 'checkpoint'], [7, 'message']]);
    expect((await readAll(d, sessionId, 1)).map((r) => r.seq)).toEqual([4, 5, 6, 7]);
    expect(tempsUnder(store)).toEqual([]);
    await d.shutdown();
  });

  it('errors: -32602 params, InvalidArgument as -32602 with its path, Conflict with stage, SecretRejected, ReadOnly, SessionNotFound, InvalidSessionId', async () => {
    const store = tempDir();
    const secret = 'Kq7-Vx2-Lm9-Pw4-Zr8';
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'errors' });
    await c.request('session/open', { sessionId, mode: 'write', secrets: { values: [secret] } });
    for (let i = 0; i < 5; i++) await c.append({ sessionId, records: [msg('user', `m${i}`)] });
    await sleep(200); // the debounced index write
    const before = snapshotTree(store);

    const invalid = async (params: unknown, pathWanted: string, method = 'session/compact') => {
      const err = await rejection(c.request(method, params));
      expect(err.code, JSON.stringify(params)).toBe(-32602);
      expect(err.data?.kind).toBe('InvalidParams');
      expect((err.data?.issues as Array<{ path: string }>)[0]?.path).toBe(pathWanted);
      return err;
    };
    // Params the schema refuses.
    await invalid({ sessionId, throughSeq: 2 }, 'summary');
    await invalid({ sessionId, summary: 's' }, 'throughSeq');
    await invalid({ sessionId, summary: 's', throughSeq: 0 }, 'throughSeq');
    await invalid({ sessionId, summary: 's', throughSeq: 1.5 }, 'throughSeq');
    await invalid({ sessionId, summary: 7, throughSeq: 2 }, 'summary');
    await invalid({ sessionId, summary: 's', throughSeq: 2, expectedLastSeq: -1 }, 'expectedLastSeq');
    await invalid({ sessionId, summary: 's', throughSeq: 2, extra: true }, '');
    await invalid({}, 'sessionId', 'session/history');
    await invalid({ sessionId, generation: -1 }, 'generation', 'session/read');
    await invalid({ sessionId, generation: 0.5 }, 'generation', 'session/read');
    // Store-level InvalidArgument, answered as -32602 naming the member.
    const out = await rejection(c.request('session/compact', { sessionId, summary: 's', throughSeq: 6 }));
    expect([out.code, out.data]).toEqual([-31018, { kind: 'OutOfRange', path: 'throughSeq', min: 1, max: 5 }]);
    for (const summary of ['', '  \n\t', '\u0000\u001b\r']) await invalid({ sessionId, summary, throughSeq: 2 }, 'summary');
    // A generation that does not exist (yet): OutOfRange with the generations there are.
    const gen = await rejection(c.request('session/read', { sessionId, generation: 1 }));
    expect([gen.code, gen.data]).toEqual([-31018, { kind: 'OutOfRange', path: 'generation', min: 0, max: 0 }]);

    // Conflict: expectedLastSeq does not match.
    const conflict = await rejection(compact(c, { sessionId, summary: 's', throughSeq: 2, expectedLastSeq: 4 }));
    expect(conflict.code).toBe(-31003);
    expect(conflict.data).toMatchObject({ kind: 'Conflict', stage: 'preCommit', expectedLastSeq: 4, lastSeq: 5 });

    // SecretRejected, never echoing the secret.
    const rejected = await rejection(compact(c, { sessionId, summary: `the password was ${secret}`, throughSeq: 2 }));
    expect(rejected.code).toBe(-31012);
    expect(rejected.data?.kind).toBe('SecretRejected');
    expect(JSON.stringify({ m: rejected.message, d: rejected.data })).not.toContain(secret);
    await rejection(compact(c, { sessionId, summary: 'fine', model: secret, throughSeq: 2 }));

    // SessionNotFound and InvalidSessionId.
    const missing = '01ZZZZZZZZZZZZZZZZZZZZZZZZ';
    for (const p of [compact(c, { sessionId: missing, summary: 's', throughSeq: 1 }), history(c, missing), c.read({ sessionId: missing, generation: 0 })]) {
      const err = await rejection(p);
      expect(err.code).toBe(-31001);
      expect(err.data?.kind).toBe('SessionNotFound');
    }
    for (const p of [compact(c, { sessionId: '../x', summary: 's', throughSeq: 1 }), history(c, 'a/b')]) {
      expect((await rejection(p)).code).toBe(-31002);
    }
    await sleep(100);
    expect(snapshotTree(store), 'no refusal changed anything').toEqual(before);
    expect(Buffer.concat(c.stdout).toString('utf8')).not.toContain(secret);
    expect(c.stderr).not.toContain(secret);
    await c.shutdown();

    // ReadOnly: not open for writing in this process, or opened read-only.
    const d = await startSidecar({ framing, store });
    let err = await rejection(compact(d, { sessionId, summary: 's', throughSeq: 2 }));
    expect(err.code).toBe(-31009);
    expect(err.data).toMatchObject({ kind: 'ReadOnly', reason: 'notOpen' });
    await d.open({ sessionId, mode: 'read' });
    err = await rejection(compact(d, { sessionId, summary: 's', throughSeq: 2 }));
    expect(err.data).toMatchObject({ kind: 'ReadOnly', reason: 'openedReadOnly' });
    expect((await history(d, sessionId)).generations).toEqual([]); // reading needs no write open
    expect(fs.existsSync(path.join(store, 'history'))).toBe(false);
    await d.shutdown();
  });

  it('SIGKILL at random moments of a loop of compactions under concurrent appends: every acknowledged record stays readable', async () => {
    const store = tempDir();
    const acked = new Map<number, Rec>();
    const compactions: Compacted[] = [];
    let sessionId = '';
    const ROUNDS = 8;
    for (let round = 0; round < ROUNDS; round++) {
      const c = await startSidecar({ framing, store });
      if (round === 0) sessionId = (await c.create({ title: 'kill' })).sessionId;
      else {
        const opened = await c.open({ sessionId });
        expect(opened.lastSeq).toBeGreaterThanOrEqual(Math.max(0, ...acked.keys()));
        expect(tempsUnder(store), 'temps removed by the write open').toEqual([]);
      }
      const first = (await c.read({ sessionId, limit: 1 })).records[0];
      let floor = first?.seq ?? 1; // the active journal's first seq: throughSeq may not go below it
      // After each kill: one history entry per archived generation, none for a compaction killed
      // before its rename (even if it left an archive of the active generation behind).
      const active = first?.kind === 'checkpoint' ? Number(first.generation) : 0;
      expect((await history(c, sessionId)).generations.map((g) => g.generation), `round ${round}`).toEqual(Array.from({ length: active }, (_, g) => g));
      let maxAcked = Math.max(0, ...acked.keys());
      let alive = true;
      let killed = false;
      void c.exited.then(() => (alive = false));

      const failures: string[] = [];
      const noteFailure = (e: unknown) => {
        if (!killed) failures.push(String((e as Error).message));
      };
      // Appends: pipelined, up to 8 in flight.
      const appends = (async () => {
        const inFlight = new Set<Promise<unknown>>();
        for (let i = 0; alive && i < 5000; i++) {
          const records = Array.from({ length: 1 + (i % 3) }, (_, k) => msg('user', `r${round}-a${i}-k${k}-${'p'.repeat((i * 37) % 400)}`));
          const p = c.append({ sessionId, records }).then((r) => {
            records.forEach((rec, k) => acked.set(r.firstSeq + k, rec));
            maxAcked = Math.max(maxAcked, r.lastSeq);
          }, noteFailure);
          inFlight.add(p);
          void p.finally(() => inFlight.delete(p));
          if (inFlight.size >= 8) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
      })();
      // Compactions, one after the other; the process is killed a random moment after one of
      // them was sent (or, in some rounds, between two).
      // The delay is drawn over the latency of the compactions answered so far, so that most
      // kills land while one is in flight (before its archive, between its steps, after its rename).
      const killAfter = 1 + Math.floor(Math.random() * 6);
      let latency = 5;
      const compacting = (async () => {
        for (let k = 1; alive; k++) {
          while (alive && maxAcked < floor) await sleep(1);
          if (!alive) break;
          const throughSeq = Math.max(floor, maxAcked - Math.floor(Math.random() * 40));
          const sent = performance.now();
          const p = compact(c, { sessionId, summary: `round ${round} compaction ${k} through ${throughSeq}`, throughSeq });
          if (k === killAfter) {
            setTimeout(() => {
              killed = true;
              c.child.kill('SIGKILL');
            }, Math.random() * latency * 1.2);
          }
          try {
            const res = await p;
            latency = performance.now() - sent;
            compactions.push(res);
            floor = res.checkpointSeq;
          } catch (e) {
            noteFailure(e);
          }
          await sleep(Math.random() * 3);
        }
      })();
      await Promise.all([appends, compacting, c.exited]);
      expect(failures, 'nothing but the kill made a request fail').toEqual([]);
      // The killed holder's lease is taken over at once by the next sidecar (its pid is gone).
    }
    expect(compactions.length).toBeGreaterThan(0);

    const d = await startSidecar({ framing, store });
    const opened = await d.open({ sessionId });
    expect(opened.lastSeq).toBeGreaterThanOrEqual(Math.max(...acked.keys()));
    expect(tempsUnder(store)).toEqual([]);
    const active = await readAll(d, sessionId);
    const generation = active[0]?.kind === 'checkpoint' ? Number(active[0].generation) : 0;
    expect(generation).toBeGreaterThanOrEqual(Math.max(...compactions.map((r) => r.generation)));
    const h = await history(d, sessionId);
    SessionHistoryResult.parse(h);
    expect(h.generations.map((g) => g.generation), 'every archived generation once').toEqual(Array.from({ length: generation }, (_, g) => g));
    for (const r of compactions) {
      expect(h.generations[r.archived.generation], `acknowledged compaction ${r.generation}`).toMatchObject({
        throughSeq: r.checkpointSeq, records: r.archived.records, bytes: r.archived.bytes,
      });
    }
    const bySeq = new Map<number, Stored>();
    for (let g = 0; g <= generation; g++) {
      const recs = g === generation ? active : await readAll(d, sessionId, g);
      expect(recs.map((r) => r.seq), `generation ${g}: seq gapless`).toEqual(recs.map((_, i) => recs[0]!.seq + i));
      if (g > 0) expect(recs[0]).toMatchObject({ kind: 'checkpoint', generation: g });
      const lastOfGeneration = recs[recs.length - 1]!.seq;
      if (g === generation) expect(lastOfGeneration).toBe(opened.lastSeq);
      else {
        // An archive is the whole journal as it was: through (at least) the seq it was compacted through.
        expect(lastOfGeneration).toBeGreaterThanOrEqual(h.generations[g]!.throughSeq);
        expect(recs.length).toBe(h.generations[g]!.records);
        expect(fs.statSync(path.join(store, 'history', sessionId, `${g}.jsonl`)).size).toBe(h.generations[g]!.bytes);
      }
      for (const r of recs) {
        if (r.kind === 'checkpoint') continue;
        const seen = bySeq.get(r.seq);
        if (seen) expect(r, `seq ${r.seq} identical in every generation holding it`).toEqual(seen);
        bySeq.set(r.seq, r);
      }
    }
    let checked = 0;
    for (const [seq, rec] of acked) {
      const { seq: _s, ts: _t, ...stored } = bySeq.get(seq) ?? ({} as Stored);
      expect(stored, `seq ${seq}`).toEqual(rec);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(0);
    // Every seq up to lastSeq is somewhere: the generations overlap or meet, never leave a hole.
    expect([...bySeq.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: opened.lastSeq }, (_, i) => i + 1));
    await d.shutdown();
  });
});
