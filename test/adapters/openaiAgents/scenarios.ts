import type { AgentInputItem } from '@openai/agents-core';
import { MemorySession } from '@openai/agents-core';
import { expect } from 'vitest';
import type { SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import type { SidecarClient } from '../../../dist/src/client/index.js';

/** Items and operation scripts the adapter tests share (run against either backend). */

export const user = (content: string) => ({ role: 'user', content }) as AgentInputItem;

/** Agents SDK items of every shape the runner writes, plus unusual ones (unknown members, nesting, a blob-sized string). */
export function diverseItems(): AgentInputItem[] {
  return [
    { role: 'user', content: 'What\'s the weather in Zürich? ☀️ \u0000 \u2028 "quoted" \\ back' },
    { role: 'system', content: 'Be terse.', providerData: { cache: { ttl: 60 } } },
    { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me check.', providerData: { annotations: [], logprobs: [-0.5, 1e-9] } }] },
    { role: 'user', content: [{ type: 'input_text', text: 'and this image' }, { type: 'input_image', image: 'https://example.com/a.png', detail: 'low' }] },
    { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'weather', arguments: '{"city":"Zürich","units":null}', status: 'completed', providerData: { z: 1, a: [true, false, null] } },
    { type: 'function_call_result', callId: 'call_1', name: 'weather', status: 'completed', output: { type: 'text', text: '21°C' } },
    { type: 'reasoning', id: 'rs_1', content: [{ type: 'input_text', text: 'The user wants the weather.' }], rawContent: [{ type: 'reasoning_text', text: 'raw thoughts' }], providerData: { encryptedContent: 'gAAAAB...' } },
    { type: 'function_call_output', call_id: 'call_2', output: '{"c": 21, "ok": true}' } as unknown as AgentInputItem,
    { type: 'hosted_tool_call', id: 'ht_1', name: 'web_search', status: 'completed', output: 'results', providerData: { query: 'zürich' } },
    { zeta: null, alpha: [1, -2, 3.5, 1e300, -0.25, true, { nested: { z: 1, a: 2 } }], empty: {}, list: [], unicode: '日本語 🎉' } as unknown as AgentInputItem,
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `${'x'.repeat(300_000)}end` }] }, // stored as a blob, read back inlined
  ];
}

/**
 * A scripted sequence of Session operations on `s` (a new, empty session) and on the SDK's
 * MemorySession: every result and the items after every step must be equal.
 */
export async function againstMemorySession(s: SidecarSession): Promise<void> {
  const m = new MemorySession();
  const both = async <T>(op: (x: SidecarSession | MemorySession) => Promise<T>) => {
    const [a, b] = [await op(s), await op(m)];
    expect(a).toEqual(b);
    expect(await s.getItems()).toEqual(await m.getItems());
    return a;
  };
  const items = diverseItems().slice(0, 10);
  expect(await both((x) => x.popItem())).toBeUndefined(); // empty
  await both((x) => x.clearSession()); // empty: nothing to clear
  await both((x) => x.addItems(items.slice(0, 4)));
  for (const n of [0, -1, 1, 2, 4, 5, 100]) await both((x) => x.getItems(n));
  expect(await both((x) => x.popItem())).toEqual(items[3]);
  await both((x) => x.addItems([items[4]!, items[5]!]));
  expect(await both((x) => x.popItem())).toEqual(items[5]);
  expect(await both((x) => x.popItem())).toEqual(items[4]);
  expect(await both((x) => x.popItem())).toEqual(items[2]);
  for (const n of [1, 2, 3]) await both((x) => x.getItems(n));
  await both((x) => x.clearSession());
  expect(await both((x) => x.popItem())).toBeUndefined();
  await both((x) => x.addItems(items.slice(6, 9)));
  for (const n of [1, 2, 3, 4]) await both((x) => x.getItems(n));
  expect(await both((x) => x.popItem())).toEqual(items[8]);
  await both((x) => x.clearSession());
  await both((x) => x.clearSession());
  await both((x) => x.addItems([items[9]!]));
  expect(await both((x) => x.getItems())).toEqual([items[9]]);
}

/**
 * After a compaction (through seq 2 of four items) the items are those after the checkpoint,
 * the summarized ones cannot be popped, and clearSession rewinds to the checkpoint's seq.
 */
export async function afterCompaction(s: SidecarSession, c: SidecarClient): Promise<void> {
  const sessionId = await s.getSessionId();
  await s.addItems([user('a'), user('b'), user('c'), user('d')]);
  await c.request('session/compact', { sessionId, summary: 'a and b were said', throughSeq: 2 });
  expect(await s.getItems()).toEqual([user('c'), user('d')]);
  expect(await s.getItems(5)).toEqual([user('c'), user('d')]);
  expect(await s.popItem()).toEqual(user('d'));
  expect(await s.popItem()).toEqual(user('c'));
  expect(await s.popItem()).toBeUndefined(); // the summarized items cannot be popped
  await s.addItems([user('e')]);
  await s.clearSession();
  expect(await s.getItems()).toEqual([]);
  const last = (await c.read({ sessionId, afterSeq: 6 })).records; // the checkpoint took seq 2: pops at 5 and 6, e at 7
  expect(last.map((r) => [r.kind, (r as { toSeq?: number }).toSeq])).toEqual([['event', undefined], ['rewind', 2]]);
}
