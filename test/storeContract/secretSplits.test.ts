/**
 * Store contract: a registered secret split across records (issue 27, finding 2) — two
 * appends, one batch of two records, text parts, assistant deltas of a few characters, toolStream
 * chunks as text and as dataBase64 — is refused by the request that completes it, on every
 * backend; what was acknowledged before stays, and the session goes on.
 */
import { expect, it } from 'vitest';
import type { RecordInput } from '../../src/domain/types.js';
import { eachBackend, readAll, storeError, user } from './backends.js';

const SECRET = 'Zq8kP3vWm7xRt2n-split-9d8c';
const assistant = (content: unknown) => ({ kind: 'message', message: { role: 'assistant', content } }) as RecordInput;
const start = { kind: 'toolStart', requestId: 'r1', tool: 'bash' } as RecordInput;
const chunk = (toolSeq: number, part: { text: string } | { dataBase64: string }, stream = 'stdout') => ({ kind: 'toolStream', toolSeq, stream, ...part }) as RecordInput;

eachBackend('secret splits', (setup) => {
  it('two appends, a batch of two, text parts: the completing request is refused, the acknowledged records stay', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({}, { values: [SECRET] });
    const half = SECRET.length >> 1;
    await f.store.append(id, [assistant(`here it is: ${SECRET.slice(0, half)}`)]);
    const err = await storeError(f.store.append(id, [assistant(`${SECRET.slice(half)} and more`)]), 'SecretRejected');
    expect(err.details.path).toBe('records[0].message.content');
    expect(`${err.message}${JSON.stringify(err.details)}`).not.toContain(SECRET.slice(half));
    // one batch of two records, and text parts of one record
    await storeError(f.store.append(id, [user('x'), assistant(SECRET.slice(0, 5)), assistant(SECRET.slice(5))]), 'SecretRejected');
    const parts = [{ type: 'text', text: SECRET.slice(0, 9) }, { type: 'text', text: SECRET.slice(9) }];
    const e2 = await storeError(f.store.append(id, [assistant(parts)]), 'SecretRejected');
    expect(e2.details.path).toBe('records[0].message.content[1].text');
    // a part of another kind in between ends the text: no secret is put together across it
    const broken = [{ type: 'text', text: SECRET.slice(0, 9) }, { type: 'image', url: 'https://example.com/a.png' }, { type: 'text', text: SECRET.slice(9) }];
    expect(await f.store.append(id, [assistant(broken)])).toEqual({ firstSeq: 2, lastSeq: 2 });
    expect((await readAll(f.store, id)).map((r) => r.seq)).toEqual([1, 2]);
    expect(await f.dump()).not.toContain(SECRET);
  });

  it('assistant deltas of three characters: refused at the delta that completes the secret, every one before it stored', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({}, { values: [SECRET] });
    const text = `The key is ${SECRET}, keep it safe.`;
    const end = text.indexOf(SECRET) + SECRET.length;
    let refusedAt = -1;
    for (let i = 0; i < text.length; i += 3) {
      const r = await f.store.append(id, [assistant(text.slice(i, i + 3))]).catch((e: unknown) => e);
      if (r instanceof Error) {
        refusedAt = i;
        break;
      }
    }
    expect(refusedAt).toBe(Math.floor((end - 1) / 3) * 3);
    expect((await readAll(f.store, id))).toHaveLength(refusedAt / 3);
  });

  it('toolStream chunks, as text and as dataBase64 (a multi-byte character split between chunks): per tool run and stream', async () => {
    const f = await setup();
    const secret = 'clé-Zq8kP3vWm7xRt2n-été';
    const { sessionId: id } = await f.store.create({}, { values: [secret] });
    await f.store.append(id, [start, start]);
    const bytes = Buffer.from(`output: ${secret}\n`, 'utf8');
    const cut = bytes.indexOf(Buffer.from('é')) + 1; // inside the first "é"
    await f.store.append(id, [chunk(1, { dataBase64: bytes.subarray(0, cut).toString('base64') })]);
    // another stream and another tool run do not continue it
    await f.store.append(id, [chunk(1, { dataBase64: bytes.subarray(cut).toString('base64') }, 'stderr')]);
    await f.store.append(id, [chunk(2, { dataBase64: bytes.subarray(cut).toString('base64') })]);
    const err = await storeError(f.store.append(id, [chunk(1, { dataBase64: bytes.subarray(cut).toString('base64') })]), 'SecretRejected');
    expect(err.details.path).toBe('records[0].dataBase64<bytes>');
    // text chunks of the same run continue the same bytes
    await f.store.append(id, [chunk(2, { text: 'more: clé-Zq8kP3' })]);
    await storeError(f.store.append(id, [chunk(2, { text: 'vWm7xRt2n-été' })]), 'SecretRejected');
    // a toolFinish ends the run's streams
    await f.store.append(id, [{ kind: 'toolFinish', toolSeq: 2, requestId: 'r1', success: true } as RecordInput]);
    expect((await readAll(f.store, id)).map((r) => r.kind)).toEqual(['toolStart', 'toolStart', 'toolStream', 'toolStream', 'toolStream', 'toolStream', 'toolFinish']);
    expect(await f.dump()).not.toContain(secret);
  });

  it('text acknowledged before a secret was registered does not refuse the text after it', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({}, { values: ['Other-Value-0a9b8c7d6e'] });
    await f.store.append(id, [assistant(`quoted: ${SECRET}`)]);
    await f.store.open(id, 'write', { values: [SECRET] }); // registered now: the session's carried end is dropped
    expect(await f.store.append(id, [assistant(' and more')])).toEqual({ firstSeq: 2, lastSeq: 2 });
    await storeError(f.store.append(id, [assistant(`${SECRET.slice(0, 7)}`), assistant(SECRET.slice(7))]), 'SecretRejected');
  });

  it('an ordinary stream of a session with registered secrets is never refused', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({}, { values: [SECRET, 'correct horse battery staple'] });
    const prose = 'The build failed because the linker could not find libssl; install it and re-run make. '.repeat(40);
    for (let i = 0; i < prose.length; i += 97) await f.store.append(id, [assistant(prose.slice(i, i + 97))]);
    expect((await readAll(f.store, id))).toHaveLength(Math.ceil(prose.length / 97));
  });
});
