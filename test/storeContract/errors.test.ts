/**
 * Store contract: refusals and their details — invalid and unknown ids, read-only opens, the
 * writer lease between two instances, an inspection-only store. Details that name files (the
 * file backend's UnsafeStore paths) are file-specific and stay in test/backends/file.
 */
import { expect, it } from 'vitest';
import { StoreError } from '../../src/domain/errors.js';
import { eachBackend, note, readAll, storeError, user } from './backends.js';

const BAD_IDS = ['..', '../x', '.hidden', 'a/b', '', 'x'.repeat(129), 'séance', 'a b', 'a\u0000b', 'a\nb', '/abs', 'a\\b'];

eachBackend('errors', (setup) => {
  it('a malformed id is InvalidSessionId for every method, with one message that never echoes the id', async () => {
    const f = await setup();
    const s = f.store;
    const reference = (await storeError(s.read('a/b'), 'InvalidSessionId')).message;
    for (const id of BAD_IDS) {
      for (const call of [
        () => s.open(id, 'write'), () => s.open(id, 'read'), () => s.append(id, [note(1)]), () => s.read(id), () => s.close(id),
        () => s.compact(id, { summary: 's', throughSeq: 1 }), () => s.history(id), () => s.fork(id), () => s.delete(id), () => s.restore(id),
        () => s.getTurn(id), () => s.context(id), () => s.getState(id, 'k'),
      ]) {
        const err = await storeError(call, 'InvalidSessionId');
        expect(err.message).toBe(reference);
      }
    }
    expect((await s.list()).sessions).toEqual([]);
  });

  it('a valid id with no session is SessionNotFound {sessionId} for every method, and nothing is created', async () => {
    const f = await setup();
    const s = f.store;
    for (const id of ['x'.repeat(128), '01HZZZZZZZZZZZZZZZZZZZZZZZ', 'a.b-c_d']) {
      for (const call of [
        () => s.open(id, 'write'), () => s.open(id, 'read'), () => s.read(id), () => s.append(id, [note(1)]), () => s.close(id),
        () => s.history(id), () => s.fork(id), () => s.delete(id), () => s.delete(id, true), () => s.restore(id), () => s.context(id),
        () => s.create({ parent: { sessionId: id, relation: 'continuation' } }),
        // Regression (PostgreSQL): writes to an id with no session answered ReadOnly notOpen.
        () => s.startTurn(id, 'user'), () => s.compact(id, { summary: 's', throughSeq: 1 }), () => s.setState(id, 'k', 1),
        () => s.deleteState(id, 'k'), () => s.allocateScratch(id, 'req-1'),
      ]) {
        const err = await storeError(call, 'SessionNotFound');
        if (Object.keys(err.details).length > 0) expect(err.details).toMatchObject({ sessionId: id });
      }
    }
    expect((await s.list()).sessions).toEqual([]);
  });

  it('a session open for reading refuses every write with ReadOnly, and changes nothing', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1)]);
    await f.store.close(id);
    const r = await f.reopen();
    expect(await r.open(id, 'read')).toMatchObject({ mode: 'read', lastSeq: 1 });
    for (const call of [
      () => r.append(id, [note(2)]), () => r.startTurn(id, 'user'), () => r.compact(id, { summary: 's', throughSeq: 1 }),
      () => r.setState(id, 'k', 1), () => r.deleteState(id, 'k'), () => r.allocateScratch(id, 'req-1'),
    ]) {
      const err = await storeError(call, 'ReadOnly');
      expect(err.details).toMatchObject({ sessionId: id });
    }
    expect((await readAll(r, id)).map((x) => x.seq)).toEqual([1]);
    expect(await r.open(id, 'write')).toMatchObject({ mode: 'write', lastSeq: 1 }); // upgrade in place
    expect(await r.append(id, [note(2)])).toEqual({ firstSeq: 2, lastSeq: 2 });
  });

  it('one writer per session: a second instance is SessionLocked naming the holder, reads meanwhile, and writes after close', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1)]);
    const b = await f.reopen();
    const err = await storeError(b.open(id, 'write'), 'SessionLocked');
    expect(err.details.holder).toMatchObject({ pid: process.pid });
    await storeError(b.delete(id), 'SessionLocked');
    expect(await b.open(id, 'read')).toMatchObject({ mode: 'read', lastSeq: 1 });
    expect((await b.read(id)).records).toHaveLength(1);
    await f.store.close(id);
    expect(await b.open(id, 'write')).toMatchObject({ mode: 'write', lastSeq: 1 });
    await b.append(id, [note(2)]);
    await storeError(f.store.open(id, 'write'), 'SessionLocked'); // now the other way round
  });

  it('a crashed writer\'s lease is taken over by the next instance, which sees every acknowledged record', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const acks = await Promise.all([f.store.append(id, [note(1)]), f.store.append(id, [note(2), note(3)])]);
    await f.crash(f.store);
    const b = await f.reopen();
    expect(await b.open(id, 'write')).toMatchObject({ mode: 'write', lastSeq: acks[1]!.lastSeq });
    expect(await b.append(id, [user('after')])).toEqual({ firstSeq: 4, lastSeq: 4 });
  });

  it('an inspection-only store reads, lists and builds context, and refuses every write (ReadOnly)', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ title: 'kept' });
    await f.store.append(id, [user('hello')]);
    await f.store.close(id);
    const r = await f.reopen({ readOnly: true });
    expect((await r.list()).sessions.map((s) => [s.sessionId, s.lastSeq])).toEqual([[id, 1]]);
    expect((await r.read(id)).records).toHaveLength(1);
    expect((await r.open(id, 'read')).lastSeq).toBe(1);
    expect((await r.context(id)).messages).toEqual([{ role: 'user', content: 'hello' }]);
    await storeError(r.create({}), 'ReadOnly');
    await storeError(r.open(id, 'write'), 'ReadOnly');
    await storeError(r.fork(id), 'ReadOnly');
    await storeError(r.delete(id), 'ReadOnly');
    await storeError(r.restore(id), 'ReadOnly');
    await storeError(r.append(id, [user('x')]), 'ReadOnly');
    expect(await f.store.open(id, 'write')).toMatchObject({ lastSeq: 1 }); // no lease was taken
  });

  it('errors are StoreErrors whose JSON is kind, message and details only', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const err = await storeError(f.store.append(id, [note(1)], { expectedLastSeq: 5 }), 'Conflict');
    expect(err).toBeInstanceOf(StoreError);
    expect(JSON.parse(JSON.stringify(err))).toEqual({ kind: 'Conflict', details: { expectedLastSeq: 5, lastSeq: 0 }, name: 'StoreError' });
  });
});
