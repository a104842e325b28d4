/**
 * Store contract: create, open, append, read, list, close — what a client observes through
 * SessionStore, on the file and the PostgreSQL backend alike.
 */
import { expect, it } from 'vitest';
import { eachBackend, note, readAll, storeError, user } from './backends.js';

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

eachBackend('sessions', (setup) => {
  it('create stores the header as given (only the name of the API key variable); open returns it, also from another instance', async () => {
    const secret = `sk-test-${Math.random().toString(36).slice(2)}-do-not-store`;
    const f = await setup({ env: { CONTRACT_API_KEY: secret } });
    const header = {
      cwd: '/work/project', title: 'header ☃', systemPrompt: 'be brief',
      llm: { provider: 'openai', model: 'gpt-x', baseUrl: 'https://api.example/v1', apiKeyEnv: 'CONTRACT_API_KEY' },
      metadata: { tags: ['a', 'b'], nested: { n: 1 } },
    };
    const created = await f.store.create(header);
    expect(created).toEqual({ sessionId: expect.any(String), createdAt: expect.stringMatching(RFC3339_MS), secrets: { registered: 1 } });
    await f.store.append(created.sessionId, [user('hi')]);
    const other = await f.reopen();
    const opened = await other.open(created.sessionId, 'read');
    expect(opened).toEqual({ ...header, sessionId: created.sessionId, createdAt: created.createdAt, mode: 'read', lastSeq: 1, secrets: { registered: 1 }, turn: null });
    expect(JSON.stringify(await readAll(other, created.sessionId))).not.toContain(secret);
  });

  it('appends get contiguous seqs and a millisecond UTC ts; read returns them as appended, also after a restart', async () => {
    const f = await setup();
    const { sessionId } = await f.store.create({ title: 't' });
    expect(await f.store.append(sessionId, [note(1)])).toEqual({ firstSeq: 1, lastSeq: 1 });
    expect(await f.store.append(sessionId, [note(2, { deep: { a: [1, 'ü', null] } }), user('q')])).toEqual({ firstSeq: 2, lastSeq: 3 });
    const page = await f.store.read(sessionId);
    expect(page).toEqual({ records: expect.any(Array), lastSeq: 3, nextAfterSeq: null });
    expect(page.records).toEqual([
      { seq: 1, ts: expect.stringMatching(RFC3339_MS), kind: 'note', i: 1 },
      { seq: 2, ts: expect.stringMatching(RFC3339_MS), kind: 'note', i: 2, deep: { a: [1, 'ü', null] } },
      { seq: 3, ts: page.records[1]!.ts, kind: 'message', message: { role: 'user', content: 'q' } },
    ]);
    await f.store.close(sessionId);
    const again = await f.reopen();
    expect((await again.open(sessionId, 'write')).lastSeq).toBe(3);
    expect((await again.read(sessionId)).records).toEqual(page.records);
    expect(await again.append(sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
  });

  it('read pages by afterSeq and limit (nextAfterSeq), and filters by kind without breaking the paging', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    for (let i = 1; i <= 10; i++) await f.store.append(id, [i % 3 === 0 ? user(`u${i}`) : note(i)]);
    const p1 = await f.store.read(id, { limit: 4 });
    expect(p1.records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(p1).toMatchObject({ lastSeq: 10, nextAfterSeq: 4 });
    const p2 = await f.store.read(id, { afterSeq: 4, limit: 4 });
    expect(p2.records.map((r) => r.seq)).toEqual([5, 6, 7, 8]);
    const p3 = await f.store.read(id, { afterSeq: 8, limit: 4 });
    expect(p3).toMatchObject({ nextAfterSeq: null, lastSeq: 10 });
    expect(p3.records.map((r) => r.seq)).toEqual([9, 10]);
    expect((await f.store.read(id, { afterSeq: 10 })).records).toEqual([]);
    const msgs = await f.store.read(id, { kinds: ['message'] });
    expect(msgs.records.map((r) => r.seq)).toEqual([3, 6, 9]);
    const firstMsg = await f.store.read(id, { kinds: ['message'], limit: 1 });
    expect(firstMsg.records.map((r) => r.seq)).toEqual([3]);
    expect(firstMsg.nextAfterSeq).not.toBeNull();
    const rest = await f.store.read(id, { kinds: ['message'], afterSeq: firstMsg.nextAfterSeq! });
    expect(rest.records.map((r) => r.seq)).toEqual([6, 9]);
  });

  it('expectedLastSeq that does not match is Conflict {expectedLastSeq, lastSeq}, nothing written; of two racing on one expectation exactly one wins', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1), note(2), note(3)]);
    for (const expectedLastSeq of [0, 2, 4, 100]) {
      const err = await storeError(f.store.append(id, [note(9)], { expectedLastSeq }), 'Conflict');
      expect(err.details).toEqual({ expectedLastSeq, lastSeq: 3 });
    }
    const results = await Promise.allSettled([
      f.store.append(id, [note(4)], { expectedLastSeq: 3 }),
      f.store.append(id, [note(4)], { expectedLastSeq: 3 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'Conflict', details: { lastSeq: 4 } });
    expect((await readAll(f.store, id)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it('a batch is all or nothing: a reserved member name or an oversized record refuses the whole batch', async () => {
    const max = 200;
    const f = await setup({ maxRecordBytes: max });
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1)]);
    for (const key of ['seq', 'ts', 'batchEnd', 'crc']) {
      await expect(f.store.append(id, [note(2), { kind: 'note', [key]: 1 }])).rejects.toThrow(key);
    }
    const sized = (bytes: number) => ({ kind: 'note', text: 'x'.repeat(bytes - JSON.stringify({ kind: 'note', text: '' }).length) });
    let err = await storeError(f.store.append(id, [note(4), note(5), sized(max + 1), note(6)]), 'PayloadTooLarge');
    expect(err.details).toMatchObject({ index: 2, maxBytes: max });
    expect(err.message).not.toContain('xxxx');
    err = await storeError(f.store.append(id, [{ kind: 'note', text: 'é'.repeat(100) }]), 'PayloadTooLarge'); // UTF-8 bytes
    expect((await readAll(f.store, id)).map((r) => r.seq)).toEqual([1]);
    expect(await f.store.append(id, [sized(max)])).toEqual({ firstSeq: 2, lastSeq: 2 });
    await storeError(f.store.create({ systemPrompt: 'x'.repeat(400) }), 'PayloadTooLarge');
    expect((await f.store.list()).sessions).toHaveLength(1);
  });

  it('list: most recently updated first, paged by cursor, with title, lastSeq and first/last message', async () => {
    const f = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { sessionId } = await f.store.create({ title: `s${i}` });
      ids.push(sessionId);
      await new Promise((r) => setTimeout(r, 3)); // distinct updatedAt (ordering, not timing, is asserted)
    }
    await f.store.append(ids[1]!, [user('first question'), note(1), user('last question')]);
    const all = await f.store.list();
    expect(all.sessions.map((s) => s.sessionId)).toEqual([ids[1], ids[4], ids[3], ids[2], ids[0]]);
    expect(all.nextCursor).toBeUndefined();
    expect(all.sessions[0]).toMatchObject({ title: 's1', lastSeq: 3, firstMessage: 'user: first question', lastMessage: 'user: last question' });
    expect(all.sessions[0]!.bytes).toBeGreaterThan(0);
    expect(Date.parse(all.sessions[0]!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(all.sessions[0]!.createdAt));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await f.store.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.sessions.map((s) => s.sessionId));
    const other = await f.reopen();
    expect((await other.list()).sessions.map((s) => s.sessionId)).toEqual(seen);
  });

  it('pipelined appends commit in call order with contiguous seqs; every acknowledged one is readable from another instance at once', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const other = await f.reopen();
    const acks = await Promise.all(Array.from({ length: 24 }, (_, i) => f.store.append(id, i % 4 === 0 ? [note(i), note(i)] : [note(i)])));
    let next = 1;
    for (const [i, a] of acks.entries()) {
      const n = i % 4 === 0 ? 2 : 1;
      expect(a).toEqual({ firstSeq: next, lastSeq: next + n - 1 });
      next += n;
    }
    const recs = await readAll(other, id);
    expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: next - 1 }, (_, i) => i + 1));
    // read your writes, one append at a time, through the other instance
    for (let i = 0; i < 5; i++) {
      const { lastSeq } = await f.store.append(id, [note(100 + i)]);
      expect((await other.read(id, { afterSeq: lastSeq - 1 })).records).toEqual([expect.objectContaining({ seq: lastSeq, i: 100 + i })]);
    }
  });

  // Regression (PostgreSQL): an append whose records reference a blob waited for the database
  // before it reached the commit queue, so appends, turn events and state writes called after
  // it were committed first (seqs out of call order), and close released the lease under it.
  it('pipelined writes of every sort take effect in call order, also behind an append that references a blob', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ blobThreshold: 1024 });
    await f.store.append(id, [user('x'.repeat(5000))]);
    const ref = (await f.store.read(id)).records[0]!.message as Record<string, unknown>;
    const results = await Promise.all([
      f.store.append(id, [{ kind: 'event', type: 'again', payload: ref.content }, note(1)]),
      f.store.append(id, [note(2)]),
      f.store.startTurn(id, 'user'),
      f.store.append(id, [{ kind: 'event', type: 'again', payload: ref.content }]),
      f.store.setState(id, 'k', 'v'),
      f.store.append(id, [note(3)], { expectedLastSeq: 6 }),
      f.store.read(id),
    ]);
    expect(results[0]).toEqual({ firstSeq: 2, lastSeq: 3 });
    expect(results[1]).toEqual({ firstSeq: 4, lastSeq: 4 });
    expect(results[3]).toEqual({ firstSeq: 6, lastSeq: 6 });
    expect(results[5]).toEqual({ firstSeq: 7, lastSeq: 7 });
    expect((results[6] as { lastSeq: number }).lastSeq).toBe(7); // a read sees every write called before it
    const recs = await readAll(f.store, id);
    expect(recs.map((r) => [r.seq, r.kind])).toEqual([[1, 'message'], [2, 'event'], [3, 'note'], [4, 'note'], [5, 'turn'], [6, 'event'], [7, 'note']]);
    expect(recs[5]!.turnId).toBe(recs[4]!.turnId);
    const closing = [f.store.append(id, [{ kind: 'event', type: 'last', payload: ref.content }]), f.store.close(id)];
    await Promise.all(closing);
    expect((await f.store.read(id, { afterSeq: 7 })).records.map((r) => r.kind)).toEqual(['event']);
  });

  it('close waits for the appends sent before it; the session is then read-only in that instance until opened again', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const pending = [f.store.append(id, [note(1)]), f.store.append(id, [note(2)])];
    await f.store.close(id);
    await Promise.all(pending);
    expect((await readAll(f.store, id)).map((r) => r.seq)).toEqual([1, 2]);
    await storeError(f.store.append(id, [note(3)]), 'ReadOnly');
    await f.store.open(id, 'write');
    expect(await f.store.append(id, [note(3)])).toEqual({ firstSeq: 3, lastSeq: 3 });
  });
});
