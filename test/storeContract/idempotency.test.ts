/**
 * Store contract: session/append's idempotencyKey — a retry with the same key and records
 * answers the original result (same seqs) and writes nothing, in this instance, in another one
 * after a crash, and while the original is still committing; the same key with other records
 * is Conflict idempotencyKeyReused; keys are per session; a key is validated and passes the
 * secret gate; the stamp is the store's member; compaction drops the keys it folds away.
 */
import { expect, it } from 'vitest';
import { eachBackend, note, readAll, storeError, user } from './backends.js';

eachBackend('idempotency keys', (setup) => {
  it('a retry with the same key answers the original seqs and writes nothing; other records under it are Conflict idempotencyKeyReused', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.open(id, 'write');
    expect(await f.store.append(id, [note(1), note(2)], { idempotencyKey: 'k-1' })).toEqual({ firstSeq: 1, lastSeq: 2 });
    expect(await f.store.append(id, [note(3)])).toEqual({ firstSeq: 3, lastSeq: 3 });
    expect(await f.store.append(id, [note(1), note(2)], { idempotencyKey: 'k-1' })).toEqual({ firstSeq: 1, lastSeq: 2 });
    // an expectedLastSeq that no longer holds does not matter: the original is answered
    expect(await f.store.append(id, [note(1), note(2)], { idempotencyKey: 'k-1', expectedLastSeq: 0 })).toEqual({ firstSeq: 1, lastSeq: 2 });
    const reused = await storeError(f.store.append(id, [note(9)], { idempotencyKey: 'k-1' }), 'Conflict');
    expect(reused.details).toEqual({ reason: 'idempotencyKeyReused', firstSeq: 1, lastSeq: 2 });
    const recs = await readAll(f.store, id);
    expect(recs.map((r) => r.i)).toEqual([1, 2, 3]);
    // the key is stored with the first record of its append (the store's member), nowhere else
    expect(recs[0]?.idempotency).toMatchObject({ key: 'k-1', firstSeq: 1, lastSeq: 2 });
    expect(recs[1]?.idempotency).toBeUndefined();
  });

  it('after a crash, a new instance answers every key the old one committed (one scan), and writes the others', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.open(id, 'write');
    for (let i = 1; i <= 20; i++) expect(await f.store.append(id, [note(i)], { idempotencyKey: `key ${i}` })).toEqual({ firstSeq: i, lastSeq: i });
    await f.crash(f.store);
    const s = await f.reopen();
    await s.open(id, 'write');
    for (let i = 1; i <= 25; i++) expect(await s.append(id, [note(i)], { idempotencyKey: `key ${i}` })).toEqual({ firstSeq: i, lastSeq: i });
    expect((await readAll(s, id)).map((r) => r.i)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    await storeError(s.append(id, [note(99)], { idempotencyKey: 'key 7' }), 'Conflict');
  });

  it('a retry sent while the original is still committing answers the original (never writes twice)', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.open(id, 'write');
    const sent = Array.from({ length: 30 }, (_, i) => f.store.append(id, [note(i)], { idempotencyKey: `p${i % 10}` }).catch((e: unknown) => e));
    const answers = await Promise.all(sent);
    for (let i = 0; i < 10; i++) expect(answers[i]).toEqual({ firstSeq: i + 1, lastSeq: i + 1 });
    // the repeats of p0..p9 carry other records: refused, the originals untouched
    for (let i = 10; i < 30; i++) expect(answers[i]).toMatchObject({ kind: 'Conflict', details: { reason: 'idempotencyKeyReused', firstSeq: (i % 10) + 1 } });
    const same = await Promise.all(Array.from({ length: 5 }, () => f.store.append(id, [note(100)], { idempotencyKey: 'twice' })));
    for (const a of same) expect(a).toEqual({ firstSeq: 11, lastSeq: 11 });
    expect(await f.store.append(id, [note(101)])).toEqual({ firstSeq: 12, lastSeq: 12 });
  });

  it('keys are per session; auto turns inside the append keep the seqs of the original answer', async () => {
    const f = await setup();
    const { sessionId: a } = await f.store.create({ turns: 'auto' });
    const { sessionId: b } = await f.store.create({});
    await f.store.open(a, 'write');
    await f.store.open(b, 'write');
    const first = await f.store.append(a, [user('hi')], { idempotencyKey: 'same' });
    expect(first).toEqual({ firstSeq: 1, lastSeq: 2 }); // the turn start, then the message
    expect(await f.store.append(b, [note(1)], { idempotencyKey: 'same' })).toEqual({ firstSeq: 1, lastSeq: 1 });
    await f.store.closeAll();
    const s = await f.reopen();
    await s.open(a, 'write');
    expect(await s.append(a, [user('hi')], { idempotencyKey: 'same' })).toEqual(first);
    expect((await readAll(s, a)).map((r) => r.kind)).toEqual(['turn', 'message']);
  });

  it('refuses a malformed key, a key holding a secret, and a record bringing the store member; nothing written', async () => {
    const f = await setup();
    const secret = 'correct horse battery staple';
    const { sessionId: id } = await f.store.create({}, { values: [secret] });
    await f.store.open(id, 'write');
    for (const bad of ['', 'x'.repeat(129), 'tab\there', 'é']) {
      expect((await storeError(f.store.append(id, [note(1)], { idempotencyKey: bad }), 'InvalidArgument')).details).toMatchObject({ path: 'idempotencyKey' });
    }
    expect(await f.store.append(id, [note(1)], { idempotencyKey: 'x'.repeat(128) })).toEqual({ firstSeq: 1, lastSeq: 1 });
    const refused = await storeError(f.store.append(id, [note(2)], { idempotencyKey: `k ${secret}` }), 'SecretRejected');
    expect(JSON.stringify(refused.details) + refused.message).not.toContain(secret);
    await storeError(f.store.append(id, [note(2)], { idempotencyKey: `ghp_${'A1b2C3d4E5'.repeat(4).slice(0, 36)}` }), 'SecretRejected');
    await storeError(f.store.append(id, [note(2, { idempotency: { key: 'fake', digest: 'x', firstSeq: 1, lastSeq: 1 } })]), 'InvalidArgument');
    expect((await readAll(f.store, id)).map((r) => r.i)).toEqual([1]);
    if (!f.encrypted) expect(await f.dump()).not.toContain(secret);
  });

  it('a key survives the compaction of records before it, and is dropped with the records a compaction folds away', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.open(id, 'write');
    await f.store.append(id, [note(1)], { idempotencyKey: 'old' });
    await f.store.append(id, [note(2)]);
    await f.store.append(id, [note(3)], { idempotencyKey: 'kept' });
    await f.store.compact(id, { summary: 's', throughSeq: 2 });
    await f.store.closeAll();
    const s = await f.reopen();
    await s.open(id, 'write');
    expect(await s.append(id, [note(3)], { idempotencyKey: 'kept' })).toEqual({ firstSeq: 3, lastSeq: 3 });
    // 'old' was folded into the checkpoint: the key is gone, so the same request is written again
    expect(await s.append(id, [note(1)], { idempotencyKey: 'old' })).toEqual({ firstSeq: 4, lastSeq: 4 });
  });
});
