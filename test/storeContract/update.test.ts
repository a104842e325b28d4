/**
 * Store contract: session/update — a sessionUpdate record through the commit queue; the
 * effective header (title replaced and sanitized, metadata merge-patched per RFC 7396, tags
 * replaced) seen by open, list, read and another instance, after reopen, after compaction,
 * and (file) without the index and list cache; refusals change nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { eachBackend, note, readAll, storeError } from './backends.js';

eachBackend('session/update', (setup, backend) => {
  it('replaces the title (sanitized), merge-patches metadata, replaces tags; returns the new header; a record in read', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ title: 'old', cwd: '/w', metadata: { a: 1, nested: { x: 1, y: 2 }, drop: true }, tags: ['ci'] });
    await s.append(id, [note(1)]);
    const res = await s.update(id, { title: ' New\n\ttitle\u0007 ', metadata: { nested: { y: null, z: 3 }, drop: null, b: [1, 2] }, tags: ['x', 'team:a'] });
    expect(res).toMatchObject({ sessionId: id, seq: 2, title: 'New title', cwd: '/w', tags: ['x', 'team:a'] });
    expect(res.metadata).toEqual({ a: 1, nested: { x: 1, z: 3 }, b: [1, 2] });
    const recs = await readAll(s, id);
    expect(recs.map((r) => r.kind)).toEqual(['note', 'sessionUpdate']);
    expect(recs[1]).toMatchObject({ seq: 2, kind: 'sessionUpdate', title: 'New title', tags: ['x', 'team:a'], metadata: { nested: { y: null, z: 3 }, drop: null, b: [1, 2] } });
    expect(await s.open(id, 'write')).toMatchObject({ title: 'New title', tags: ['x', 'team:a'], metadata: res.metadata, lastSeq: 2 });
    expect((await s.list()).sessions[0]).toMatchObject({ sessionId: id, title: 'New title', tags: ['x', 'team:a'], cwd: '/w' });
    expect(await s.header?.(id)).toMatchObject({ title: 'New title', tags: ['x', 'team:a'] }); // what session/prune's tag filter reads
    // a second update applies to the first's result; empty title and tags remove them
    const second = await s.update(id, { title: '', tags: [], metadata: { a: null } });
    expect(second.title).toBeUndefined();
    expect(second.tags).toBeUndefined();
    expect(second.metadata).toEqual({ nested: { x: 1, z: 3 }, b: [1, 2] });
    expect(await s.append(id, [note(3)])).toEqual({ firstSeq: 4, lastSeq: 4 }); // ordered with appends
  });

  it('a title given to session/create is kept the same way: one line, no control characters; blank is no title', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ title: ' Fix\r\nthe\tbuild\u0007 ' });
    expect(await f.store.open(id, 'read')).toMatchObject({ title: 'Fix the build' });
    expect((await f.store.list()).sessions[0]).toMatchObject({ sessionId: id, title: 'Fix the build' });
    const { sessionId: blank } = await f.store.create({ title: ' \n\u0001 ' });
    expect((await f.store.open(blank, 'read')).title).toBeUndefined();
  });

  it('is durable: another instance (read-only, or after a crash) and a reopen see it; list reflects it', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ title: 'first' });
    await f.store.update(id, { title: 'second', tags: ['t1'], metadata: { k: 'v' } });
    const reader = await f.reopen();
    expect(await reader.open(id, 'read')).toMatchObject({ title: 'second', tags: ['t1'], metadata: { k: 'v' } });
    await f.store.update(id, { title: 'third' });
    expect(await reader.open(id, 'read')).toMatchObject({ title: 'third', tags: ['t1'] }); // caught up
    await f.crash(f.store);
    const next = await f.reopen();
    expect(await next.open(id, 'write')).toMatchObject({ title: 'third', tags: ['t1'], metadata: { k: 'v' } });
    expect((await next.list()).sessions.find((x) => x.sessionId === id)).toMatchObject({ title: 'third', tags: ['t1'] });
  });

  it('survives compaction: the checkpoint carries title, metadata and tags', async () => {
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ title: 'a', metadata: { keep: 1 } });
    await s.update(id, { title: 'renamed', tags: ['kept'], metadata: { more: 2 } });
    await s.append(id, [note(2), note(3)]);
    await s.compact(id, { summary: 'sum', throughSeq: 3 });
    const [cp] = await readAll(s, id);
    expect(cp).toMatchObject({ kind: 'checkpoint', header: { title: 'renamed', tags: ['kept'], metadata: { keep: 1, more: 2 } } });
    await s.closeAll();
    const other = await f.reopen();
    expect(await other.open(id, 'write')).toMatchObject({ title: 'renamed', tags: ['kept'], metadata: { keep: 1, more: 2 } });
    expect((await other.update(id, { metadata: { keep: null } })).metadata).toEqual({ more: 2 });
    expect((await other.list()).sessions[0]).toMatchObject({ title: 'renamed', tags: ['kept'] });
  });

  it.runIf(backend === 'file')('file: after the index and the list cache are lost, open and list rebuild the update from the journal', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ title: 'a', tags: ['old'] });
    await f.store.update(id, { title: 'b', tags: ['new'] });
    await f.store.closeAll();
    const root = (f.store as { root: string }).root;
    fs.rmSync(path.join(root, 'index'), { recursive: true, force: true });
    const other = await f.reopen();
    expect((await other.list()).sessions[0]).toMatchObject({ sessionId: id, title: 'b', tags: ['new'] });
    expect(await other.open(id, 'read')).toMatchObject({ title: 'b', tags: ['new'] });
  });

  it('refusals change nothing: not open for writing, empty update, bad tags, a registered secret, a header too large', async () => {
    const secret = 'sk-test-0123456789abcdefghijklmnop-SECRET';
    const f = await setup({ maxRecordBytes: 4096 });
    const s = f.store;
    const { sessionId: id } = await s.create({ title: 't' }, { values: [secret] });
    await storeError(s.update(id, {}), 'InvalidArgument');
    expect((await storeError(s.update(id, { tags: ['bad tag'] }), 'InvalidArgument')).details.path).toBe('tags[0]');
    await storeError(s.update(id, { tags: ['a', 'a'] }), 'InvalidArgument');
    await storeError(s.update(id, { tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }), 'InvalidArgument');
    await storeError(s.update(id, { title: `x ${secret}` }), 'SecretRejected');
    await storeError(s.update(id, { metadata: { note: secret } }), 'SecretRejected');
    await s.update(id, { metadata: { big: 'y'.repeat(2000) } });
    await storeError(s.update(id, { metadata: { big2: 'z'.repeat(2500) } }), 'PayloadTooLarge'); // the result, not the patch, is too large
    expect((await readAll(s, id)).map((r) => r.kind)).toEqual(['sessionUpdate']);
    const reader = await f.reopen();
    await reader.open(id, 'read');
    await storeError(reader.update(id, { title: 'no' }), 'ReadOnly');
    await storeError(s.create({ tags: ['no spaces'] }), 'InvalidArgument');
    expect((await storeError(s.append(id, [{ kind: 'sessionUpdate', title: 'sneaky' }]), 'InvalidArgument')).details.path).toBe('records[0].kind');
  });

  it('an update that would leave a secret registered since in the header is refused; one that removes it passes', async () => {
    const secret = 'sk-late-0123456789abcdefghijklmnop-LATER';
    const f = await setup();
    const s = f.store;
    const { sessionId: id } = await s.create({ metadata: { note: secret, keep: 1 } });
    await s.open(id, 'write', { values: [secret] });
    await storeError(s.update(id, { tags: ['x'] }), 'SecretRejected');
    expect((await readAll(s, id)).length).toBe(0);
    expect((await s.update(id, { metadata: { note: null } })).metadata).toEqual({ keep: 1 });
  });

  it.runIf(backend === 'file')('file: an index entry of an older version (no cwd, no hv) is not used by a filtered list', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ cwd: '/old/entry' });
    await f.store.closeAll();
    const root = (f.store as { root: string }).root;
    const file = path.join(root, 'index', `${id}.json`);
    const { hv: _hv, cwd: _cwd, ...old } = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, `${JSON.stringify(old)}\n`, { mode: 0o600 });
    fs.rmSync(path.join(root, 'index', 'list.cache'), { force: true });
    const other = await f.reopen();
    expect((await other.list({ cwd: '/old/entry' })).sessions.map((x) => x.sessionId)).toEqual([id]);
  });
});
