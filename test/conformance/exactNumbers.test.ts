import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { FRAMINGS, type SidecarClient, startSidecar } from './harness.js';

/**
 * §5.1: the text of every number in a record is preserved byte for byte — numbers whose JS
 * double would print differently (64-bit ids, trailing zeros, exponents, -0, out of range)
 * included — in every read path: session/read, session/didAppend, session/context, session/search,
 * a fork's copy, and after the sidecar restarts on the same store.
 */
const PAYLOAD = '{"id":12345678901234567,"big":12345678901234567890,"price":19.90,"max":9223372036854775807,'
  + '"negZero":-0,"huge":1e400,"one":1.0,"tenth":0.10,"exp":1E5,"tiny":0.0000001,"plain":[1,2.5,-3,0],'
  + '"nested":{"a":[{"b":[[[{"c":-12345678901234567890.5000}]]]}]},"text":"keep 1.0 as text"}';
const TOOL_RESULT = '{"rows":[{"userId":9007199254740993,"balance":100.00},{"userId":18446744073709551615,"ratio":2.50E-3}]}';
const EVENT = `{"kind":"event","type":"provider.response","payload":${PAYLOAD}}`;
const INTERRUPTION = `{"kind":"interruption","reason":"cancelled","phase":"executingTools","toolResults":[{"id":"t1","name":"sql","result":${TOOL_RESULT}}]}`;
const MESSAGE = '{"kind":"message","message":{"role":"user","content":"find 42","metadata":{"requestId":76561198012345678}}}';

/** The text of every frame the sidecar wrote (an independent split of its stdout, by framing). */
function frameTexts(c: SidecarClient): string[] {
  const bytes = Buffer.concat(c.stdout);
  if (c.framing === 'ndjson') return bytes.toString('utf8').split('\n').slice(0, -1);
  const out: string[] = [];
  for (let pos = 0; pos < bytes.length;) {
    const headerEnd = bytes.indexOf('\r\n\r\n', pos);
    const length = Number(/Content-Length: (\d+)/.exec(bytes.toString('ascii', pos, headerEnd))?.[1]);
    out.push(bytes.toString('utf8', headerEnd + 4, headerEnd + 4 + length));
    pos = headerEnd + 4 + length;
  }
  return out;
}

/** Sends a request whose params are the JSON text given, byte for byte; resolves with the text of its answer frame. */
async function rawRequest(c: SidecarClient, id: string, method: string, params: string): Promise<string> {
  const body = Buffer.from(`{"jsonrpc":"2.0","id":"${id}","method":"${method}","params":${params}}`, 'utf8');
  c.writeRaw(c.framing === 'ndjson' ? Buffer.concat([body, Buffer.from('\n')]) : Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  await c.expectResponse(id);
  const answer = frameTexts(c).find((t) => t.includes(`"id":"${id}"`));
  expect(answer).toBeDefined();
  return answer as string;
}

const members = (record: string) => record.slice(1, -1);

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(FRAMINGS)('numbers exactly as sent (%s)', (framing) => {
  it('every number token of a record reads back byte for byte on every read path', async () => {
    await everyReadPath(framing, { store: tempDir() });
  });

  it('an integer field still refuses what is not a safe integer, and a string of digits stays a string', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    const refused = await rawRequest(c, 'x1', 'session/read', `{"sessionId":"${sessionId}","afterSeq":12345678901234567}`).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -32602 });
    const text = '{"kind":"event","type":"t","payload":{"s":"12345678901234567","n":1.5}}';
    await rawRequest(c, 'x2', 'session/append', `{"sessionId":"${sessionId}","records":[${text}]}`);
    expect(await rawRequest(c, 'x3', 'session/read', `{"sessionId":"${sessionId}"}`)).toContain(members(text));
    await c.shutdown();
  });
});

/** The scenario of §5.1's exact numbers on one store (a directory, or PostgreSQL with a schema). */
async function everyReadPath(framing: 'ndjson' | 'lsp', where: { store: string; args?: string[] }): Promise<void> {
  const c = await startSidecar({ framing, ...where });
  const { sessionId } = await c.create();
  const watcher = await startSidecar({ framing, ...where });
  await watcher.request('session/subscribe', { sessionId });
  const appended = await rawRequest(c, 'a1', 'session/append', `{"sessionId":"${sessionId}","records":[${EVENT},${INTERRUPTION},${MESSAGE}]}`);
  expect(appended).toContain('"result"');

  const read = await rawRequest(c, 'r1', 'session/read', `{"sessionId":"${sessionId}"}`);
  for (const r of [EVENT, INTERRUPTION, MESSAGE]) expect(read).toContain(members(r));

  await until(() => frameTexts(watcher).some((t) => t.includes('session/didAppend') && t.includes(members(MESSAGE))));
  const notified = frameTexts(watcher).filter((t) => t.includes('session/didAppend')).join('\n');
  for (const r of [EVENT, INTERRUPTION, MESSAGE]) expect(notified).toContain(members(r));

  const context = await rawRequest(c, 'c1', 'session/context', `{"sessionId":"${sessionId}"}`);
  expect(context).toContain('"requestId":76561198012345678');

  const search = await rawRequest(c, 's1', 'session/search', '{"query":"find"}');
  expect(search).toContain('"result"');
  expect(search).not.toMatch(/76561198012345680|\\u0000/);

  const fork = JSON.parse(await rawRequest(c, 'f1', 'session/fork', `{"sessionId":"${sessionId}"}`)) as { result: { sessionId: string } };
  const forkRead = await rawRequest(c, 'r2', 'session/read', `{"sessionId":"${fork.result.sessionId}"}`);
  for (const r of [EVENT, INTERRUPTION, MESSAGE]) expect(forkRead).toContain(members(r));

  await c.shutdown();
  const again = await startSidecar({ framing, ...where });
  const reread = await rawRequest(again, 'r3', 'session/read', `{"sessionId":"${sessionId}"}`);
  for (const r of [EVENT, INTERRUPTION, MESSAGE]) expect(reread).toContain(members(r));
  await again.shutdown();
  await watcher.shutdown();
}

const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

describe.skipIf(pgSkip)('numbers exactly as sent, on the PostgreSQL store', () => {
  it('every number token of a record reads back byte for byte on every read path', async () => {
    const url = (await sharedCluster()).url;
    await everyReadPath('ndjson', { store: url, args: ['--pg-schema', freshSchema('exact')] });
  }, 120_000);
});
