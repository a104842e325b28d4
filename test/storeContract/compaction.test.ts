/**
 * Store contract: compaction — the checkpoint, history, reads of a generation, refusals,
 * turns and counters carried, context after it.
 *
 * Documented difference: `archived.bytes` (and a history entry's `bytes`) is the size of the
 * archived generation as the compacting backend counts it (file: the archive file's bytes;
 * PostgreSQL: the stored record texts) — protocol/README.md, STORAGE.md "Moving a store". Only
 * that it is positive and that history repeats it is asserted here.
 */
import { expect, it } from 'vitest';
import { eachBackend, msg, note, readAll, storeError, user } from './backends.js';

eachBackend('compaction', (setup) => {
  const session = async (n: number, header: Record<string, unknown> = {}) => {
    const f = await setup();
    const { sessionId } = await f.store.create(header);
    for (let i = 1; i <= n; i++) await f.store.append(sessionId, [note(i)]);
    return { f, s: f.store, id: sessionId };
  };

  it('replaces the records through throughSeq by a checkpoint; archives them as a generation; history lists it; appends continue', async () => {
    const { f, s, id } = await session(6);
    expect(await s.history(id)).toEqual([]);
    const res = await s.compact(id, { summary: 'the first three', throughSeq: 3, provider: 'openai', model: 'gpt-x' });
    expect(res).toEqual({ generation: 1, checkpointSeq: 3, archived: { generation: 0, records: 6, bytes: expect.any(Number) } });
    expect(res.archived.bytes).toBeGreaterThan(0);
    const active = await readAll(s, id);
    expect(active.map((r) => [r.seq, r.kind])).toEqual([[3, 'checkpoint'], [4, 'note'], [5, 'note'], [6, 'note']]);
    expect(active[0]).toMatchObject({ summary: 'the first three', generation: 1, provider: 'openai', model: 'gpt-x' });
    const history = await s.history(id);
    expect(history).toEqual([{ generation: 0, throughSeq: 3, records: 6, bytes: res.archived.bytes, createdAt: expect.any(String) }]);
    expect((await readAll(s, id, { generation: 0 })).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await s.append(id, [note(7)])).toEqual({ firstSeq: 7, lastSeq: 7 });
    const other = await f.reopen();
    expect(await other.history(id)).toEqual(history);
    expect((await readAll(other, id)).map((r) => r.seq)).toEqual([3, 4, 5, 6, 7]);
    expect((await other.list()).sessions[0]).toMatchObject({ sessionId: id, lastSeq: 7 });
  });

  it('reads of a generation page and filter by kind; a generation that does not exist is OutOfRange (generation, 0..current)', async () => {
    const { s, id } = await session(9);
    expect((await readAll(s, id, { generation: 0 })).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]); // 0 = active before compaction
    expect((await storeError(s.read(id, { generation: 1 }), 'OutOfRange')).details).toEqual({ path: 'generation', min: 0, max: 0 });
    await s.compact(id, { summary: 'x', throughSeq: 6 });
    const page = await s.read(id, { generation: 0, afterSeq: 2, limit: 3 });
    expect(page.records.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(page).toMatchObject({ lastSeq: 9, nextAfterSeq: 5 });
    expect((await s.read(id, { generation: 1, kinds: ['checkpoint'] })).records.map((r) => r.seq)).toEqual([6]);
    expect((await storeError(s.read(id, { generation: 2 }), 'OutOfRange')).details).toEqual({ path: 'generation', min: 0, max: 1 });
    await storeError(s.read('01ZZZZZZZZZZZZZZZZZZZZZZZZ', { generation: 0 }), 'SessionNotFound');
  });

  it('refusals change nothing: expectedLastSeq (Conflict preCommit), throughSeq OutOfRange (min, max), empty summaries', async () => {
    const { s, id } = await session(5);
    const err = await storeError(s.compact(id, { summary: 's', throughSeq: 3, expectedLastSeq: 4 }), 'Conflict');
    expect(err.details).toMatchObject({ expectedLastSeq: 4, lastSeq: 5, stage: 'preCommit' });
    for (const throughSeq of [0, -1, 6, 100]) {
      expect((await storeError(s.compact(id, { summary: 's', throughSeq }), 'OutOfRange')).details).toEqual({ path: 'throughSeq', min: 1, max: 5 });
    }
    for (const summary of ['', '   ', '\n\t \n', '\u0000\u0001\u001b', ' \r\n\u007f ']) {
      expect((await storeError(s.compact(id, { summary, throughSeq: 2 }), 'InvalidArgument')).details.path).toBe('summary');
    }
    expect(await s.history(id)).toEqual([]);
    expect((await readAll(s, id)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await s.compact(id, { summary: 's', throughSeq: 3, expectedLastSeq: 5 })).toMatchObject({ generation: 1, checkpointSeq: 3 });
    for (const throughSeq of [1, 2]) { // already summarized
      expect((await storeError(s.compact(id, { summary: 's', throughSeq }), 'OutOfRange')).details).toEqual({ path: 'throughSeq', min: 3, max: 5 });
    }
    const { sessionId: empty } = await s.create({});
    // Nothing to compact: the range is empty (min 1 > max 0).
    expect((await storeError(s.compact(empty, { summary: 's', throughSeq: 1 }), 'OutOfRange')).details).toEqual({ path: 'throughSeq', min: 1, max: 0 });
  });

  it('the summary is sanitized (control characters removed), credentials redacted, registered secrets refused', async () => {
    const secret = 'Zq8kP3vWm7xRt2n-sidecar';
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ systemPrompt: 'be brief' }, { values: [secret] });
    for (let i = 1; i <= 3; i++) await s.append(id, [note(i)]);
    for (const c of [{ summary: `the key is ${secret}.` }, { summary: `encoded: ${Buffer.from(secret).toString('base64')}` }, { summary: 'fine', provider: `p-${secret}` }, { summary: 'fine', model: secret }]) {
      const err = await storeError(s.compact(id, { throughSeq: 2, ...c }), 'SecretRejected');
      expect(`${err.message}${JSON.stringify(err.details)}`).not.toContain(secret);
    }
    expect(await s.history(id)).toEqual([]);
    const raw = 'a\u0000b\u0007c\td\ne\r\u001bf\u007fg\u0085h\u009fi\u2028j é 🙂';
    const clean = 'abc\td\nefghi\u2028j é 🙂';
    await s.compact(id, { summary: raw, throughSeq: 2 });
    expect((await s.read(id)).records[0]?.summary).toBe(clean);
    expect((await s.context(id)).messages[1]).toEqual({ role: 'user', content: clean });
    const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    await s.compact(id, { summary: `the user pasted ${token} earlier`, throughSeq: 3 });
    const cp = (await s.read(id)).records[0]!;
    expect(cp.summary).not.toContain(token);
    expect(cp.summary).toContain('the user pasted');
  });

  it('a pending turn started before throughSeq stays pending after compaction and on another instance; it can finish', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [note(1), note(2)]);
    const { turnId } = await s.startTurn(id, 'user'); // 3
    await s.append(id, [user('hi')]); // 4
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'providerStream' }); // 5
    await s.append(id, [msg({ role: 'assistant', content: 'partial' }), note(7)]); // 6, 7
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'executingTools' }); // 8
    const turnBefore = await s.getTurn(id);
    await s.compact(id, { summary: 'mid-turn', throughSeq: 5 });
    expect((await s.read(id)).records[0]!.turn).toMatchObject({ turnId, status: 'active', phase: 'providerStream', firstSeq: 3 });
    expect(await s.getTurn(id)).toEqual(turnBefore);
    await s.close(id);
    const fresh = await f.reopen();
    expect((await fresh.open(id, 'write')).turn).toEqual(turnBefore);
    await storeError(fresh.startTurn(id, 'user'), 'InvalidTurnTransition');
    await fresh.transitionTurn(id, turnId, { event: 'finish', outcome: 'completed' });
    const last = (await fresh.read(id)).lastSeq;
    await fresh.compact(id, { summary: 'done', throughSeq: last });
    expect((await readAll(fresh, id)).map((r) => r.kind)).toEqual(['checkpoint']);
    await fresh.close(id);
    expect((await (await f.reopen()).open(id, 'read')).turn).toMatchObject({ turnId, status: 'completed' });
  });

  it('context after compaction: the system prompt, the latest summary as a user message, then the suffix', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ systemPrompt: 'You are terse.' });
    for (const [i, c] of ['q1', 'a1', 'q2', 'a2', 'q3', 'a3'].entries()) await s.append(id, [msg({ role: i % 2 === 0 ? 'user' : 'assistant', content: c })]);
    await s.compact(id, { summary: 'we talked about q1 and q2', throughSeq: 4 });
    expect((await s.context(id)).messages).toEqual([
      { role: 'system', content: 'You are terse.' }, { role: 'user', content: 'we talked about q1 and q2' }, { role: 'user', content: 'q3' }, { role: 'assistant', content: 'a3' },
    ]);
    await s.append(id, [user('q4')]);
    await s.compact(id, { summary: 'up to a3', throughSeq: 6 });
    const expected = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'up to a3' }, { role: 'user', content: 'q4' }];
    expect((await s.context(id)).messages).toEqual(expected);
    expect((await (await f.reopen()).context(id)).messages).toEqual(expected);
    expect((await s.history(id)).map((h) => [h.generation, h.throughSeq, h.records])).toEqual([[0, 4, 6], [1, 6, 4]]);
  });

  it('runs after every write called before it and before every write called after it', async () => {
    const { s, id } = await session(2);
    const [a, c, b] = await Promise.all([s.append(id, [note(3)]), s.compact(id, { summary: 's', throughSeq: 3 }), s.append(id, [note(4)])]);
    expect(a).toEqual({ firstSeq: 3, lastSeq: 3 });
    expect(c).toMatchObject({ checkpointSeq: 3, archived: { records: 3 } });
    expect(b).toEqual({ firstSeq: 4, lastSeq: 4 });
    expect((await readAll(s, id)).map((r) => [r.seq, r.kind])).toEqual([[3, 'checkpoint'], [4, 'note']]);
  });
});
