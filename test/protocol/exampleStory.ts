import { expect } from 'vitest';
import { RawSidecar } from './exampleDriver.js';
import { INIT, type Steps } from './exampleSteps.js';
import type { Value } from './readmeBlocks.js';

/**
 * The session of §4 ("Fix the build"), as the README tells it: created, appended to, read,
 * listed among two newer sessions and closed in one process; appended to and opened (read,
 * then write) in a second process. OPENAI_API_KEY is set, as the shown `secrets.registered: 1`
 * (the key named by `llm.apiKeyEnv`) requires.
 */
const ENV = { OPENAI_API_KEY: 'sk-proj-example-not-a-real-key-0123456789' };
const SHOWN = '01M8K1WKJ0VTPTCMTSTY8EW4CN';
const rpc = (id: number, method: string, params: Value): Value => ({ jsonrpc: '2.0', id, method, params });

export async function story(steps: Steps, store: string): Promise<void> {
  const a = new RawSidecar(store, { env: ENV });
  await a.call(INIT);
  await steps.step(a, 'create');
  await steps.step(a, 'create-api-key', rpc(18, 'session/create', { llm: { provider: 'openai', apiKey: 'sk-live-123' } }));
  await steps.step(a, 'append-one');
  await steps.step(a, 'append-batch');
  await steps.step(a, 'append-interruption');
  await steps.step(a, 'append-conflict');
  await steps.step(a, 'read-all');
  await steps.step(a, 'read-page-first');
  const middle = await steps.call(a, { id: 80, method: 'session/read', params: { sessionId: SHOWN, afterSeq: 2, limit: 2 } });
  expect(middle.nextAfterSeq).toBe(4);
  await steps.step(a, 'read-page-last');
  await steps.step(a, 'read-kinds');
  // §3.4: a read and its cancellation written in one go, exactly as shown
  const cancelBlock = steps.blocks[(steps.marked('cancel')?.index ?? 1) - 1]!;
  const from = a.frames.length;
  a.write(steps.ids.actualIds(cancelBlock.body.trimEnd()));
  steps.record('cancel', [(await a.answer(24, from)).value]);
  const seq7 = { kind: 'message', message: { role: 'user', content: 'hi' }, seq: 7 };
  await steps.step(a, 'invalid-reserved-member', rpc(12, 'session/append', { sessionId: SHOWN, records: [seq7] }));
  await steps.step(a, 'invalid-unknown-kind', rpc(13, 'session/append', { sessionId: SHOWN, records: [{ kind: 'secret', value: 'sk-live-123' }] }));
  await steps.step(a, 'invalid-two-problems', rpc(14, 'session/read', { sessionId: SHOWN, limit: 0, color: 'red' }));
  // §5.1's append of a message with a provider-specific member (its answer is not shown)
  const withMeta = steps.blocks.flatMap((blk) => blk.messages).find((m) => m.value.method === 'session/append' && m.text.includes('providerMeta'));
  await steps.call(a, withMeta!.value);
  await steps.step(a, 'read-provider-meta', rpc(12, 'session/read', { sessionId: SHOWN, afterSeq: 5 }));
  await steps.step(a, 'session-not-found', rpc(10, 'session/open', { sessionId: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' }));
  await steps.step(a, 'invalid-session-id', rpc(11, 'session/open', { sessionId: '../etc' }));
  await steps.call(a, { id: 81, method: 'session/create', params: { title: 'Write release notes' } });
  await steps.call(a, { id: 82, method: 'session/create', params: {} });
  const first = await steps.step(a, 'list-first');
  const cursor = (first.result as { nextCursor: string }).nextCursor;
  await steps.step(a, 'list-next', undefined, (r) => ({ ...r, params: { ...(r.params as Value), cursor } }));
  await steps.step(a, 'close');
  await steps.step(a, 'append-after-close');
  expect(await a.end()).toBe(0);

  const b = new RawSidecar(store, { env: ENV });
  await b.call(INIT);
  await steps.step(b, 'append-not-open');
  await steps.step(b, 'open-read');
  await steps.step(b, 'append-opened-read-only', { ...steps.shownRequest('append-not-open')!, id: 7 });
  await steps.step(b, 'open-write');
  expect(await b.end()).toBe(0);
}
