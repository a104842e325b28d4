/**
 * Store contract: session/rewind — context, turn state and open api requests as of toSeq plus
 * what follows; read still returns everything; counters never reused; refusals change nothing;
 * the state survives a reopen (scan and index/row) and a compaction.
 */
import { expect, it } from 'vitest';
import type { RecordInput } from '../../src/domain/types.js';
import { calls, eachBackend, final, note, observe, readAll, storeError, tool, user } from './backends.js';

const request = (): RecordInput => ({ kind: 'api', direction: 'request', payload: { model: 'm' } });
const response = (): RecordInput => ({ kind: 'api', direction: 'response', payload: { ok: true } });
const toolStart = (): RecordInput => ({ kind: 'toolStart', requestId: 'r', tool: 'bash' });
const contents = (messages: Array<{ role: string; content?: unknown }>) => messages.map((m) => `${m.role}:${String(m.content)}`);

eachBackend('rewind', (setup) => {
  it('the context leaves out the rewound records; read returns every record and the rewind marks them', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ systemPrompt: 'sys' });
    await s.append(id, [user('q1'), final('a1')]);
    await s.append(id, [user('q2'), calls('c1'), tool('c1', 'out'), final('a2')]);
    const res = await s.rewind(id, 2, { expectedLastSeq: 6 });
    expect(res).toEqual({ seq: 7, toSeq: 2, turn: null });
    expect(contents((await s.context(id)).messages)).toEqual(['system:sys', 'user:q1', 'assistant:a1']);
    await s.append(id, [user('q2 again')]);
    expect(contents((await s.context(id)).messages)).toEqual(['system:sys', 'user:q1', 'assistant:a1', 'user:q2 again']);
    const all = await readAll(s, id);
    expect(all.map((r) => r.kind)).toEqual(['message', 'message', 'message', 'message', 'message', 'message', 'rewind', 'message']);
    expect(all[6]).toEqual({ seq: 7, ts: expect.any(String), kind: 'rewind', toSeq: 2, turn: null, openApi: [] });
    // nested: a rewind to a seq inside a rewound range brings back the session as it was then
    await s.rewind(id, 4);
    expect(contents((await s.context(id)).messages)).toEqual(['system:sys', 'user:q1', 'assistant:a1', 'user:q2', 'assistant:null', 'tool:[cancelled: the tool call did not complete; no result was recorded]']);
    await s.rewind(id, 0);
    expect(contents((await s.context(id)).messages)).toEqual(['system:sys']);
    await s.close(id);
    const other = await f.reopen();
    expect(contents((await other.context(id)).messages)).toEqual(['system:sys']);
  });

  it('a rewind never undoes session/update: the header stays as last updated, after a reopen and a compaction too', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ title: 'first' });
    await s.append(id, [user('q1'), final('a1')]);
    await s.update(id, { title: 'renamed', tags: ['kept'], metadata: { k: 1 } });
    await s.append(id, [user('q2')]);
    await s.rewind(id, 2); // before the update
    const expectHeader = (h: { title?: string; tags?: string[]; metadata?: Record<string, unknown> }) =>
      expect({ title: h.title, tags: h.tags, metadata: h.metadata }).toEqual({ title: 'renamed', tags: ['kept'], metadata: { k: 1 } });
    expectHeader(await s.header!(id));
    await s.close(id);
    const other = await f.reopen();
    expectHeader(await other.open(id, 'write'));
    await other.compact(id, { summary: 'so far', throughSeq: 5 });
    expectHeader(await other.header!(id));
  });

  it('a rewind takes effect in arrival order among pipelined writes', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [user('q1'), final('a1')]);
    const [before, rewound, after] = await Promise.all([s.append(id, [user('q2')]), s.rewind(id, 2), s.append(id, [user('q3')])]);
    expect([before.firstSeq, rewound.seq, after.firstSeq]).toEqual([3, 4, 5]);
    expect(contents((await s.context(id)).messages)).toEqual(['user:q1', 'assistant:a1', 'user:q3']);
  });

  it('the turn state is the one as of toSeq; refused while a turn is active unless it goes before it; a retryable turn may be rewound', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    const { turnId: t1 } = await s.startTurn(id, 'user'); // 1
    await s.append(id, [user('q')]); // 2
    await s.transitionTurn(id, t1, { event: 'finish', outcome: 'completed' }); // 3
    const finished = await s.getTurn(id);
    const { turnId: t2 } = await s.startTurn(id, 'user'); // 4
    await s.append(id, [user('q2')]); // 5
    const active = await s.getTurn(id);
    for (const toSeq of [4, 5]) {
      const before = await observe(s, id);
      const err = await storeError(s.rewind(id, toSeq), 'Conflict');
      expect(err.details).toEqual({ reason: 'turnPending', turnId: t2, turnFirstSeq: 4 });
      expect(await observe(s, id)).toEqual(before);
    }
    expect(await s.getTurn(id)).toEqual(active);
    // before the active turn: it is gone, the turn as of toSeq is back
    expect((await s.rewind(id, 3)).turn).toEqual(finished);
    expect(await s.getTurn(id)).toEqual(finished);
    const { turnId: t3 } = await s.startTurn(id, 'user'); // 7
    await s.append(id, [user('q3')]); // 8
    await s.transitionTurn(id, t3, { event: 'fail', error: 'HTTP 429' }); // 9
    // retryable: a rewind into it makes it what it was then (active)
    const r = await s.rewind(id, 8);
    expect(r.turn).toEqual({ turnId: t3, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 7 });
    expect(await s.getTurn(id)).toEqual(r.turn);
    await s.transitionTurn(id, t3, { event: 'finish', outcome: 'completed' });
    await s.close(id);
    const other = await f.reopen();
    expect(await other.getTurn(id)).toMatchObject({ turnId: t3, status: 'completed' });
  });

  it('open api requests are restored as of toSeq; apiSeq and toolSeq are never reused', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [request()]); // 1: apiSeq 1 open
    await s.append(id, [response(), request(), toolStart()]); // 2..4: 1 closed, 2 open, toolSeq 1
    await s.rewind(id, 1); // 5: as of 1, apiSeq 1 is open
    await s.append(id, [response()]); // pairs with apiSeq 1 again (the latest open as of 1)
    await s.append(id, [request(), toolStart()]);
    const all = await readAll(s, id);
    expect(all.slice(5).map((r) => [r.kind, r.apiSeq ?? r.toolSeq])).toEqual([['api', 1], ['api', 3], ['toolStart', 2]]);
    expect(all[4]).toMatchObject({ kind: 'rewind', toSeq: 1, openApi: [1] });
    await storeError(s.append(id, [response(), response()]), 'InvalidArgument'); // only apiSeq 3 is open
    await s.close(id);
    const other = await f.reopen();
    await other.open(id, 'write');
    await other.append(id, [response()]);
    expect((await readAll(other, id)).at(-1)).toMatchObject({ kind: 'api', apiSeq: 3 });
  });

  it('refusals change nothing: toSeq out of range, expectedLastSeq, read mode; after a compaction not before the checkpoint', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    for (let i = 1; i <= 5; i++) await s.append(id, [note(i)]);
    const before = await observe(s, id);
    for (const toSeq of [6, 100]) expect((await storeError(s.rewind(id, toSeq), 'OutOfRange')).details).toEqual({ path: 'toSeq', min: 0, max: 5 });
    expect((await storeError(s.rewind(id, 2, { expectedLastSeq: 4 }), 'Conflict')).details).toMatchObject({ expectedLastSeq: 4, lastSeq: 5 });
    expect(await observe(s, id)).toEqual(before);
    await s.compact(id, { summary: 'the start', throughSeq: 3 });
    for (const toSeq of [0, 2]) expect((await storeError(s.rewind(id, toSeq), 'OutOfRange')).details).toEqual({ path: 'toSeq', min: 3, max: 5 });
    await s.rewind(id, 3);
    expect((await s.context(id)).messages).toEqual([{ role: 'user', content: 'the start' }]);
    await s.close(id);
    const other = await f.reopen();
    await other.open(id, 'read');
    await storeError(other.rewind(id, 3), 'ReadOnly');
  });

  it('compaction keeps a rewind only when it does not go back before throughSeq; the checkpoint carries the rewound state', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [user('q1'), final('a1'), request()]); // 1..3 (apiSeq 1 open)
    await s.append(id, [response(), user('q2'), final('a2')]); // 4..6
    await s.rewind(id, 3); // 7: back to apiSeq 1 open, q2/a2 rewound
    const before = await observe(s, id);
    const err = await storeError(s.compact(id, { summary: 'x', throughSeq: 5 }), 'InvalidArgument');
    expect(err.details).toMatchObject({ path: 'throughSeq', rewindSeq: 7, toSeq: 3 });
    expect(await observe(s, id)).toEqual(before);
    await s.compact(id, { summary: 'q1 and a1', throughSeq: 3 }); // kept: the rewind to 3
    expect((await s.context(id)).messages).toEqual([{ role: 'user', content: 'q1 and a1' }]);
    await s.compact(id, { summary: 'all of it', throughSeq: 7 }); // through the rewind itself
    const [cp] = await readAll(s, id);
    expect(cp).toMatchObject({ kind: 'checkpoint', runtime: { apiSeq: 1, openApi: [1] } });
    await s.append(id, [response()]);
    expect((await readAll(s, id)).at(-1)).toMatchObject({ apiSeq: 1 });
  });
});
