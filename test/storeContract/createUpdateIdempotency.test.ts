/**
 * Store contract: idempotencyKey on session/create (scope: the store's live sessions; the key in
 * the header, written with the session) and on session/update (scope: the session, shared with
 * its appends' keys; the key on the sessionUpdate record). A retry answers the original — in
 * this instance, pipelined behind the original, and in a new instance after a crash — and writes
 * nothing; the same key with other params is Conflict idempotencyKeyReused; the key is never
 * shown, never inherited by a fork, and freed by deleting its session.
 */
import { expect, it } from 'vitest';
import { eachBackend, note, readAll, storeError } from './backends.js';

eachBackend('create and update idempotency keys', (setup) => {
  it('a create retried with its key answers the same session, opened for writing, in this instance and after a crash', async () => {
    const f = await setup();
    const first = await f.store.create({ title: 'agent run', tags: ['a'] }, {}, { idempotencyKey: 'create-1' });
    expect(await f.store.create({ title: 'agent run', tags: ['a'] }, {}, { idempotencyKey: 'create-1' })).toEqual(first);
    const other = await f.store.create({ title: 'agent run', tags: ['a'] }, {}, { idempotencyKey: 'create-2' });
    expect(other.sessionId).not.toBe(first.sessionId);
    await f.store.append(first.sessionId, [note(1)]);
    await f.crash(f.store);
    const s = await f.reopen();
    const retried = await s.create({ title: 'agent run', tags: ['a'] }, {}, { idempotencyKey: 'create-1' });
    expect(retried).toEqual(first);
    expect(await s.append(first.sessionId, [note(2)])).toEqual({ firstSeq: 2, lastSeq: 2 }); // opened for writing by the retry
    const reused = await storeError(s.create({ title: 'another run' }, {}, { idempotencyKey: 'create-1' }), 'Conflict');
    expect(reused.details).toEqual({ reason: 'idempotencyKeyReused', sessionId: first.sessionId });
    expect(JSON.stringify(reused.details) + reused.message).not.toContain('create-1');
    const listed = await s.list({ limit: 100 });
    expect(listed.sessions.map((x) => x.sessionId).sort()).toEqual([first.sessionId, other.sessionId].sort());
    // the key is the store's: never shown in what a client reads back
    const opened = await s.open(first.sessionId, 'write');
    expect(JSON.stringify(opened) + JSON.stringify(listed)).not.toContain('create-1');
    expect(JSON.stringify(await s.update(first.sessionId, { title: 'renamed' }))).not.toContain('create-1');
  });

  it('a create retried with its key after its session was closed (the file backend then lists it from its index entry) answers it, also in a new instance', async () => {
    const f = await setup();
    const first = await f.store.create({ title: 'closed run' }, {}, { idempotencyKey: 'closed-1' });
    await f.store.append(first.sessionId, [note(1)]);
    await f.store.close(first.sessionId);
    expect(await f.store.create({ title: 'closed run' }, {}, { idempotencyKey: 'closed-1' })).toEqual(first);
    await f.store.append(first.sessionId, [note(2)]);
    await f.store.close(first.sessionId);
    await f.crash(f.store);
    const s = await f.reopen();
    expect(await s.create({ title: 'closed run' }, {}, { idempotencyKey: 'closed-1' })).toEqual(first);
    const reused = await storeError(s.create({ title: 'other' }, {}, { idempotencyKey: 'closed-1' }), 'Conflict');
    expect(reused.details).toEqual({ reason: 'idempotencyKeyReused', sessionId: first.sessionId });
    expect((await s.list({ limit: 100 })).sessions.map((x) => x.sessionId)).toEqual([first.sessionId]);
    expect(JSON.stringify(await s.list({ limit: 100 }))).not.toContain('closed-1');
  });

  it('creates pipelined with one key make one session; a fork does not inherit the key; deleting the session frees it', async () => {
    const f = await setup();
    const answers = await Promise.all(Array.from({ length: 6 }, () => f.store.create({ cwd: '/w' }, {}, { idempotencyKey: 'pipelined' })));
    const id = answers[0]!.sessionId;
    for (const a of answers) expect(a.sessionId).toBe(id);
    await f.store.append(id, [note(1)]);
    const fork = await f.store.fork(id);
    expect(fork.sessionId).not.toBe(id);
    expect((await f.store.create({ cwd: '/w' }, {}, { idempotencyKey: 'pipelined' })).sessionId).toBe(id);
    expect((await f.store.list({ limit: 100 })).sessions).toHaveLength(2);
    await f.store.close(id);
    await f.store.delete(id);
    const again = await f.store.create({ cwd: '/w' }, {}, { idempotencyKey: 'pipelined' });
    expect(again.sessionId).not.toBe(id);
  });

  it('an update retried with its key answers the original seq and writes nothing, also after a crash; keys are shared with appends', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const first = await f.store.update(id, { title: 'one', metadata: { n: 1 } }, { idempotencyKey: 'u-1' });
    expect(first.seq).toBe(1);
    await f.store.append(id, [note(2)]);
    expect((await f.store.update(id, { title: 'one', metadata: { n: 1 } }, { idempotencyKey: 'u-1' })).seq).toBe(1);
    await f.crash(f.store);
    const s = await f.reopen();
    await s.open(id, 'write');
    const retried = await s.update(id, { title: 'one', metadata: { n: 1 } }, { idempotencyKey: 'u-1' });
    expect(retried).toMatchObject({ seq: 1, title: 'one', metadata: { n: 1 } });
    expect(JSON.stringify(retried)).not.toContain('u-1');
    const reused = await storeError(s.update(id, { title: 'two' }, { idempotencyKey: 'u-1' }), 'Conflict');
    expect(reused.details).toMatchObject({ reason: 'idempotencyKeyReused', firstSeq: 1, lastSeq: 1 });
    await storeError(s.append(id, [note(3)], { idempotencyKey: 'u-1' }), 'Conflict');
    await s.append(id, [note(3)], { idempotencyKey: 'a-1' });
    await storeError(s.update(id, { title: 'three' }, { idempotencyKey: 'a-1' }), 'Conflict');
    const recs = await readAll(s, id);
    expect(recs.map((r) => r.kind)).toEqual(['sessionUpdate', 'note', 'note']);
    expect(recs[0]?.idempotency).toMatchObject({ key: 'u-1', firstSeq: 1, lastSeq: 1 });
    await storeError(s.update(id, { title: 'x' }, { idempotencyKey: '' }), 'InvalidArgument');
  });
});
