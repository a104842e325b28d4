import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { CLI, RawSidecar } from './exampleDriver.js';
import { INIT, type Steps } from './exampleSteps.js';
import type { Value } from './readmeBlocks.js';

/**
 * The README's other examples of server output, one scenario each, on a fresh store: the
 * connection lifecycle, torn-tail repair and an unsafe journal mode, a damaged journal line,
 * an internal error, turns, state, blob references, and the quick start in both framings.
 */
const rpc = (id: number, method: string, params?: Value): Value => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });

export async function lifecycle(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await steps.step(sc, 'not-initialized', rpc(1, 'session/list', {}));
  await steps.step(sc, 'unsupported-version');
  // the shown processId is the client's: the server exits when that process dies, so it is ours here
  await steps.step(sc, 'initialize', undefined, (r) => ({ ...r, params: { ...(r.params as Value), processId: process.pid } }));
  await steps.step(sc, 'initialize-twice', rpc(4, 'initialize', { protocolVersion: 1 }));
  sc.write('{"jsonrpc": "2.0", "method": "initialized", "params": {}}');
  await steps.step(sc, 'method-not-found', rpc(16, 'session/teleport', {}));
  await steps.step(sc, 'shutdown');
  await steps.step(sc, 'after-shutdown', rpc(20, 'session/list', {}));
  sc.write('{"jsonrpc": "2.0", "method": "exit"}');
  expect(await sc.exited).toBe(0);
}

async function created(steps: Steps, sc: RawSidecar, params: Value, records = 0): Promise<string> {
  const { sessionId } = (await steps.call(sc, rpc(90, 'session/create', params))) as { sessionId: string };
  const message = (i: number) => ({ kind: 'message', message: { role: 'user', content: `message ${i}` } });
  if (records > 0) await steps.call(sc, rpc(91, 'session/append', { sessionId, records: Array.from({ length: records }, (_, i) => message(i + 1)) }));
  return sessionId;
}

/** §4.6 torn tail (a record line cut after 63 bytes, as a kill mid-write leaves it), §6.2 UnsafeStore. */
export async function torn(steps: Steps, store: string): Promise<void> {
  let sc = new RawSidecar(store);
  await sc.call(INIT);
  const id = await created(steps, sc, { title: 'Torn' }, 3);
  await sc.end();
  const journal = path.join(store, 'sessions', id, 'journal.jsonl');
  const last = fs.readFileSync(journal, 'utf8').trimEnd().split('\n').at(-1)!;
  fs.appendFileSync(journal, last.replace('"seq":3', '"seq":4').slice(0, 63));
  sc = new RawSidecar(store);
  await sc.call(INIT);
  const read = (await sc.call(JSON.stringify(rpc(2, 'session/open', { sessionId: id, mode: 'read' })))).value.result as Value;
  expect([read.lastSeq, 'recovered' in read]).toEqual([3, false]);
  steps.ids.bind(id, '01M8K1WKQJFKX4NZNAMS7MDWT9');
  await steps.step(sc, 'open-torn');
  await sc.end();
  fs.chmodSync(journal, 0o644);
  sc = new RawSidecar(store);
  await sc.call(INIT);
  await steps.step(sc, 'unsafe-store', rpc(3, 'session/open', { sessionId: id }));
  await sc.end();
}

/** §6.2 Corrupt: line 3 (seq 2) altered; found by a scanning open (no index), then by a read. */
export async function corrupt(steps: Steps, store: string): Promise<void> {
  let sc = new RawSidecar(store);
  await sc.call(INIT);
  const id = await created(steps, sc, {}, 3);
  await sc.end();
  const journal = path.join(store, 'sessions', id, 'journal.jsonl');
  fs.writeFileSync(journal, fs.readFileSync(journal, 'utf8').replace('message 2', 'message X'));
  sc = new RawSidecar(store);
  await sc.call(INIT);
  await steps.call(sc, rpc(2, 'session/open', { sessionId: id, mode: 'read' }));
  await steps.step(sc, 'corrupt-read', rpc(3, 'session/read', { sessionId: id }));
  await sc.end();
  fs.rmSync(path.join(store, 'index'), { recursive: true });
  sc = new RawSidecar(store);
  await sc.call(INIT);
  await steps.step(sc, 'corrupt-open', rpc(2, 'session/open', { sessionId: id }));
  await sc.end();
}

/** §6.1 -32603: the store's sessions/ directory deleted under the running server. */
export async function internal(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await sc.call(INIT);
  fs.rmSync(path.join(store, 'sessions'), { recursive: true });
  await steps.step(sc, 'internal-error', rpc(2, 'session/list', {}));
  await sc.end();
}

/** §11 turn/start and turn/get, §15.3 state/set, §15.4 a blob reference as read back. */
export async function runtime(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await sc.call(INIT);
  steps.ids.bind(await created(steps, sc, {}), '01M8KAY4N3SJ1M1WQ2Q2B7XG4R');
  await steps.step(sc, 'turn-start');
  const turnId = (steps.outputs.get('turn-start')![0]!.result as { turnId: string }).turnId;
  await steps.call(sc, rpc(6, 'turn/setPhase', { sessionId: '01M8KAY4N3SJ1M1WQ2Q2B7XG4R', turnId, phase: 'executingTools' }));
  await steps.step(sc, 'turn-get');
  steps.ids.bind(await created(steps, sc, {}), '01J9Z3K4QY8E5V6W7X8Y9Z0ABC');
  await steps.step(sc, 'state-set');
  const sessionId = await created(steps, sc, { blobThreshold: 1024 });
  const toolCalls = [{ id: 'call_1', name: 'write_file', arguments: JSON.stringify({ path: 'notes.txt', text: 'x'.repeat(1000) }) }];
  await steps.call(sc, rpc(10, 'session/append', { sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls } }] }));
  const { records } = (await steps.call(sc, rpc(11, 'session/read', { sessionId }))) as { records: Array<{ message: { toolCalls: Array<{ arguments: Value }> } }> };
  steps.record('blob-ref', [records[0]!.message.toolCalls[0]!.arguments]);
  await sc.end();
}

function run(store: string, input: Buffer | string): Promise<string> {
  const child = spawn(process.execPath, [CLI, '--store', store], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', () => resolve(out)));
}

/** §11.8: session/context with prune — the exact content of a cut tool output (its marker after a line feed). */
export async function contextPrune(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await sc.call(INIT);
  const sessionId = await created(steps, sc, { systemPrompt: 'You are terse.' });
  steps.ids.bind(sessionId, '01M8CTXP0000000000000000AA');
  await steps.call(sc, rpc(91, 'session/append', {
    sessionId,
    records: [
      { kind: 'message', message: { role: 'user', content: 'Which words?' } },
      { kind: 'message', message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'words', arguments: '{}' }] } },
      { kind: 'message', message: { role: 'tool', toolCallId: 'c1', name: 'words', content: 'alpha beta gamma' } },
      { kind: 'message', message: { role: 'assistant', content: 'Three words.' } },
    ],
  }));
  const answer = await steps.step(sc, 'context-prune');
  // The bytes themselves, not only their JSON: the kept characters, U+000A, the marker, nothing after it.
  const tool = ((answer.result as { messages: Array<{ role: string; content: unknown }> }).messages).find((m) => m.role === 'tool')!;
  expect(Buffer.from(tool.content as string, 'utf8')).toEqual(Buffer.concat([Buffer.from('alpha'), Buffer.from([0x0a]), Buffer.from('[\u2026 11 characters pruned]', 'utf8')]));
  await sc.end();
}

/** §1 quick start (NDJSON, then EOF) and §2.1's LSP frames (initialize, shutdown), as shown. */
export async function quickStart(steps: Steps, store: string): Promise<void> {
  const shell = steps.blocks.find((b) => b.lang === 'sh' && b.body.includes('--store /tmp/sidecar-demo'))!;
  const lines = [...shell.body.matchAll(/'(\{.*?\})'/g)].map((m) => m[1]).join('\n');
  steps.record('quick-start', (await run(store, `${lines}\n`)).trimEnd().split('\n').map((l) => JSON.parse(l) as Value));
  const request = /Content-Length: \d+\\r\\n\\r\\n(\{.*\})/.exec(steps.blocks.find((b) => b.body.startsWith('Content-Length') && b.body.includes('"method"'))!.body)![1]!;
  const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const out = await run(`${store}-lsp`, frame(request) + frame('{"jsonrpc":"2.0","id":2,"method":"shutdown"}') + frame('{"jsonrpc":"2.0","method":"exit"}'));
  const bodies = out.split(/Content-Length: \d+\r\n\r\n/).filter((s) => s !== '');
  expect(out).toBe(bodies.map(frame).join(''));
  steps.record('lsp-frames', bodies.map((b) => JSON.parse(b) as Value));
}

/** §2.3: a request over `--max-message-bytes 4096`, its id visible in the first 4 KiB. */
export async function tooLarge(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store, { args: ['--max-message-bytes', '4096'] });
  await sc.call(INIT);
  await steps.step(sc, 'message-too-large', { jsonrpc: '2.0', id: 'big', method: 'session/create', params: { title: 'x'.repeat(5000) } });
  await sc.end();
}

/** §4.11 session/update and §4.12 session/search: a session renamed, its metadata patched and tags set, then searched. */
export async function management(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await sc.call(INIT);
  const sessionId = await created(steps, sc, { title: 'Fix the build', cwd: '/work/project', metadata: { owner: 'ana', draft: true } });
  steps.ids.bind(sessionId, '01M8MGMT0000000000000000AA');
  await steps.call(sc, rpc(91, 'session/append', { sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'The integration tests are flaky on CI since Monday; find out why.' } }] }));
  await steps.step(sc, 'update');
  const { records } = (await steps.call(sc, rpc(92, 'session/read', { sessionId, afterSeq: 1 }))) as { records: Value[] };
  steps.record('update-record', [records[0]!]);
  await steps.step(sc, 'search');
  await sc.end();
}
