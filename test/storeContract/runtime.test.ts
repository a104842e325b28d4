/**
 * Store contract: runtime records and their counters (apiSeq, toolSeq), state values, blobs,
 * scratch directories.
 *
 * Documented difference: tool scratch directories are on the local disk of the sidecar that
 * allocates them on both backends (file: <store>/sessions/<id>/scratch; PostgreSQL:
 * <workspace>/.session-sidecar/scratch/<id>) — STORAGE.md. Only the toolSeq numbering and that
 * the directories exist are asserted here, not where they are.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { eachBackend, readAll, storeError, user } from './backends.js';

const api = (direction: 'request' | 'response', payload: unknown = { n: 1 }) => ({ kind: 'api', direction, payload });
const start = (extra: Record<string, unknown> = {}) => ({ kind: 'toolStart', requestId: 'r1', tool: 'bash', ...extra });
/** An assistant message with one tool call whose arguments are `args` (a BlobRef position). */
const call = (args: unknown) => ({ kind: 'message' as const, message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: args as string }] } });
const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

eachBackend('runtime', (setup) => {
  it('api records: a response pairs with the latest open request, across close and another instance', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [api('request'), api('response'), api('request')]);
    await f.store.close(id);
    const b = await f.reopen();
    await b.open(id, 'write');
    await b.append(id, [api('request'), api('response'), api('response'), api('request')]);
    expect((await b.read(id)).records.map((r) => [r.direction, r.apiSeq])).toEqual([
      ['request', 1], ['response', 1], ['request', 2], ['request', 3], ['response', 3], ['response', 2], ['request', 4],
    ]);
  });

  it('api records: a response with no open request or a client-chosen apiSeq is refused, writing nothing', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const err = await storeError(f.store.append(id, [user('hi'), api('response')]), 'InvalidArgument');
    expect(err.message).toMatch(/no open request/);
    expect(err.details.path).toBe('records[1].direction');
    await storeError(f.store.append(id, [{ ...api('request'), apiSeq: 7 }]), 'InvalidArgument');
    expect((await f.store.read(id)).records).toEqual([]);
  });

  it('counters continue across a compaction and a crash (the checkpoint carries them)', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [api('request'), api('response'), api('request'), start(), start()]);
    await f.store.compact(id, { summary: 's', throughSeq: 5 });
    await f.crash(f.store);
    const t = await f.reopen();
    await t.open(id, 'write');
    await t.append(id, [api('response'), api('request'), start()]);
    expect((await t.read(id, { kinds: ['api', 'toolStart'] })).records.map((r) => r.apiSeq ?? `t${String(r.toolSeq)}`)).toEqual([2, 3, 't3']);
  });

  it('tool records: toolSeq assigned in order, a larger explicit one accepted, a used one refused; finish/stream of an unstarted tool refused', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    await s.append(id, [start(), start({ toolSeq: 5 }), start()]);
    await storeError(s.append(id, [start({ toolSeq: 2 })]), 'InvalidArgument');
    expect((await s.read(id)).records.map((r) => r.toolSeq)).toEqual([1, 5, 6]);
    await storeError(s.append(id, [{ kind: 'toolFinish', toolSeq: 9, requestId: 'r', success: true }]), 'InvalidArgument');
    await storeError(s.append(id, [{ kind: 'toolStream', toolSeq: 9, stream: 'stdout', text: 'x' }]), 'InvalidArgument');
    await s.append(id, [{ kind: 'toolFinish', toolSeq: 1, requestId: 'r1', success: true, exitCode: 0 }]);
    expect((await s.read(id)).lastSeq).toBe(4);
  });

  it('tool stream chunks round-trip exactly (UTF-8 text, any bytes as base64); malformed chunks are refused', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const binary = Buffer.from([0, 255, 0xc3, 0x28, 10, 13, 0x80]);
    const text = 'héllo ✓ 日本 \u0000 \t end';
    await f.store.append(id, [start(), { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text }, { kind: 'toolStream', toolSeq: 1, stream: 'stderr', dataBase64: binary.toString('base64') }]);
    for (const bad of [{ text: 'a', dataBase64: 'YQ==' }, {}, { dataBase64: 'YQ' }, { dataBase64: 'YR==' }]) {
      await storeError(f.store.append(id, [{ kind: 'toolStream', toolSeq: 1, stream: 'stdout', ...bad }]), 'InvalidArgument');
    }
    const { records } = await (await f.reopen()).read(id, { kinds: ['toolStream'] });
    expect(records[0]?.text).toBe(text);
    expect(Buffer.from(records[1]?.dataBase64 as string, 'base64')).toEqual(binary);
  });

  it('scratch: toolSeqs reserved in order, directories with tmp/ inside; a toolStart never takes a reserved one; not reissued after a restart', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ keepScratch: 'always' });
    const a = await s.allocateScratch(id, 'r1');
    const b = await s.allocateScratch(id, 'r2');
    expect([a.toolSeq, b.toolSeq]).toEqual([1, 2]);
    expect(fs.statSync(a.dir).isDirectory()).toBe(true);
    expect(fs.readdirSync(a.tmpDir)).toEqual([]);
    expect(a.dir).not.toBe(b.dir);
    await s.append(id, [start({ toolSeq: 2, requestId: 'r2' }), start({ toolSeq: 1 }), start({ requestId: 'r3' })]);
    await storeError(s.append(id, [start({ toolSeq: 1 })]), 'InvalidArgument');
    expect((await s.read(id)).records.map((r) => r.toolSeq)).toEqual([2, 1, 3]);
    expect((await s.allocateScratch(id, 'r4')).toolSeq).toBe(4); // reserved, never started
    await s.close(id);
    const t = await f.reopen();
    await t.open(id, 'write');
    await t.append(id, [start({ requestId: 'r5' })]);
    expect((await t.read(id, { afterSeq: 3 })).records[0]).toMatchObject({ kind: 'toolStart', toolSeq: 5 });
  });

  it('state values: set, get, replace, delete string and JSON values; visible to another instance', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    expect(await s.getState(id, 'bashState')).toBeNull();
    await s.setState(id, 'bashState', 'export A=1\ncd /tmp\n');
    await s.setState(id, 'cfg', { a: [1, 2], b: null, c: 'é' });
    await s.setState(id, 'cfg', { a: [3] });
    await s.close(id);
    const t = await f.reopen();
    expect(await t.getState(id, 'bashState')).toBe('export A=1\ncd /tmp\n');
    expect(await t.getState(id, 'cfg')).toEqual({ a: [3] });
    await storeError(t.setState(id, 'k', 1), 'ReadOnly');
    await storeError(t.deleteState(id, 'k'), 'ReadOnly');
    await t.open(id, 'write');
    expect(await t.deleteState(id, 'cfg')).toBe(true);
    expect(await t.deleteState(id, 'cfg')).toBe(false);
    expect(await t.getState(id, 'cfg')).toBeNull();
    expect((await t.read(id)).records).toEqual([]); // state is not in the journal
  });

  it('state values: bad keys, oversized values and registered secrets refused; credentials redacted', async () => {
    const f = await setup();
    const s = f.store;
    const secret = 'hunter2-very-secret-value';
    const { sessionId: id } = await s.create({}, { values: [secret] });
    for (const key of ['', '.hidden', '../x', 'a/b', 'a..b', 'x'.repeat(129)]) await storeError(s.setState(id, key, 1), 'InvalidArgument');
    for (const key of ['', '../x']) await storeError(s.getState(id, key), 'InvalidArgument');
    await storeError(s.setState(id, 'big', 'x'.repeat(1 << 20)), 'PayloadTooLarge');
    const err = await storeError(s.setState(id, 'env', `export TOKEN=${secret}`), 'SecretRejected');
    expect(`${err.message}${JSON.stringify(err.details)}`).not.toContain(secret);
    await storeError(s.setState(id, secret, 1), 'SecretRejected'); // a key that is a secret
    const token = `ghp_${'A1b2C3d4E5'.repeat(4).slice(0, 36)}`;
    const { redactions } = await s.setState(id, 'env', `export GH=${token}`);
    expect(redactions).toEqual([{ path: expect.any(String), rule: expect.any(String) }]);
    expect(await s.getState(id, 'env')).toMatch(/^export GH=/);
    expect(await s.getState(id, 'env')).not.toContain(token);
    expect(await s.getState(id, 'big')).toBeNull();
  });

  it('blobs: strings past the threshold at a BlobRef position become a BlobRef; read inlines on request; context always; getBlob reads chunks', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ blobThreshold: 1024 });
    const big = 'é'.repeat(600); // 1200 UTF-8 bytes
    await s.append(id, [call(big), call('{}')]);
    const recs = await readAll(s, id);
    expect(recs[0]?.message).toEqual({ role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: { $blob: sha(big), bytes: 1200 } }] });
    expect(recs[1]?.message).toEqual(call('{}').message);
    const other = await f.reopen();
    expect((await other.read(id, { inline: true })).records[0]?.message).toEqual(call(big).message);
    expect((await other.context(id)).messages[0]).toEqual(call(big).message);
    expect(await other.getBlob(id, sha(big), 2, 4)).toEqual({ bytes: Buffer.from(big).subarray(2, 6), offset: 2, size: 1200 });
    expect((await other.getBlob(id, sha(big))).bytes.toString('utf8')).toBe(big);
    expect((await storeError(other.getBlob(id, sha(big), 5000), 'OutOfRange')).details).toEqual({ path: 'offset', min: 0, max: 1200 });
  });

  it('blobs: only at the schema\'s BlobRef positions (protocol/blobPositions.ts); a large string anywhere else stays in the record', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ blobThreshold: 1024 });
    const big = 'q'.repeat(3000);
    const elsewhere = [
      user(big),
      { kind: 'message', message: { role: 'assistant', content: [{ type: 'text', text: big }], toolCalls: [{ id: big, name: 'edit', arguments: '{}', extra: big }], note: big } },
      { kind: 'event', type: 'upload', payload: { data: big, list: [big] } },
      { kind: 'interruption', reason: 'cancelled', phase: 'executingTools', toolResults: [{ id: 'c1', name: 'edit', result: big }] },
      { kind: 'api', direction: 'request', payload: big },
    ];
    await s.append(id, elsewhere as never);
    await s.append(id, [
      { kind: 'interruption', reason: 'cancelled', phase: 'providerStream', assistantText: big, toolCalls: [{ id: 'c2', name: 'edit', arguments: big }] },
      start(), { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: big },
    ] as never);
    const recs = await readAll(s, id);
    for (const [i, r] of recs.slice(0, elsewhere.length).entries()) {
      expect(JSON.stringify(r), `record ${i}`).not.toContain('$blob');
      const { seq: _seq, ts: _ts, apiSeq: _a, ...rest } = r as Record<string, unknown>;
      expect(rest, `record ${i}`).toEqual(elsewhere[i]);
    }
    const ref = { $blob: sha(big), bytes: 3000 };
    expect(recs[elsewhere.length]).toMatchObject({ assistantText: ref, toolCalls: [{ id: 'c2', name: 'edit', arguments: ref }] });
    expect(recs[elsewhere.length + 2]).toMatchObject({ kind: 'toolStream', text: ref });
  });

  it('blobs: attachments at a BlobRef position stored whatever their size with their mediaType; a ref read back is accepted there; both refused anywhere else; bad refs refused', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({});
    const png = Buffer.from('not really a png').toString('base64');
    await s.append(id, [call({ $attach: png, mediaType: 'image/png' })]);
    const ref = ((await s.read(id)).records[0]?.message as { toolCalls: Array<{ arguments: unknown }> }).toolCalls[0]?.arguments;
    expect(ref).toEqual({ $blob: sha(png), bytes: png.length, mediaType: 'image/png' });
    const { sessionId: other } = await s.create({});
    await s.append(other, [call(ref)]); // re-sent without re-uploading, in another session
    expect((await s.read(other, { inline: true })).records[0]?.message).toEqual(call(png).message);
    for (const misplaced of [{ image: { $attach: png } }, { image: ref }, [ref]]) {
      const err = await storeError(s.append(id, [{ kind: 'event', type: 'x', payload: misplaced }]), 'InvalidArgument');
      expect(err.message).toMatch(/may stand only where the schema allows a BlobRef/);
    }
    await storeError(s.append(id, [user({ $attach: png } as unknown as string)]), 'InvalidArgument');
    for (const bad of [{ $blob: sha('nothing'), bytes: 7 }, { $blob: sha(png), bytes: 1 }, { $attach: 1 }, { $blob: sha(png), bytes: png.length, extra: 1 }]) {
      await storeError(s.append(id, [call(bad)]), 'InvalidArgument');
    }
    expect(await s.getBlob(id, sha(png), 4, 8)).toEqual({ bytes: Buffer.from(png).subarray(4, 12), offset: 4, size: png.length });
    expect((await s.read(id)).lastSeq).toBe(1);
  });

  it('blobs: a ref to a blob holding a registered secret of the referencing session is refused', async () => {
    const f = await setup();
    const secret = 'open-sesame-0123456789';
    const { sessionId: a } = await f.store.create({ blobThreshold: 1024 });
    await f.store.append(a, [call(`prefix ${secret} ${'x'.repeat(2000)}`)]);
    const ref = ((await f.store.read(a)).records[0]?.message as { toolCalls: Array<{ arguments: unknown }> }).toolCalls[0]?.arguments;
    expect(ref).toMatchObject({ $blob: expect.any(String) });
    await f.store.closeAll();
    const t = await f.reopen();
    const { sessionId: b } = await t.create({}, { values: [secret] });
    const err = await storeError(t.append(b, [call(ref)]), 'SecretRejected');
    expect(JSON.stringify(err)).not.toContain(secret);
    expect((await t.read(b)).records).toEqual([]);
  });
});
