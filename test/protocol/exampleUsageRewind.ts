import { expect } from 'vitest';
import { RawSidecar } from './exampleDriver.js';
import { INIT, type Steps } from './exampleSteps.js';
import type { Value } from './readmeBlocks.js';

const rpc = (id: number, method: string, params?: Value): Value => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const SHOWN_ID = '01M8K1WM3RQ5H2Y8N4C7D9B6VA';

/** §17: session/usage over OpenAI and Anthropic usage, a rewind, the context after it, a rewind into an active turn. */
export async function usageRewind(steps: Steps, store: string): Promise<void> {
  const sc = new RawSidecar(store);
  await sc.call(INIT);
  const { sessionId } = (await steps.call(sc, rpc(2, 'session/create', {
    title: 'usage demo', llm: { provider: 'openai', model: 'gpt-4o' }, systemPrompt: 'You are terse.',
  }))) as { sessionId: string };
  steps.ids.bind(sessionId, SHOWN_ID);
  await steps.call(sc, rpc(3, 'session/append', {
    sessionId: SHOWN_ID,
    records: [
      { kind: 'message', message: { role: 'user', content: 'Rename foo to bar.' } },
      { kind: 'api', direction: 'request', payload: { model: 'gpt-4o', messages: [] } },
      { kind: 'api', direction: 'response', payload: { model: 'gpt-4o', usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 } } } },
      { kind: 'message', message: { role: 'assistant', content: 'Done: foo is bar now.' } },
      { kind: 'api', direction: 'request', payload: { model: 'claude-sonnet-4' } },
      { kind: 'api', direction: 'response', payload: { model: 'claude-sonnet-4', usage: { input_tokens: 12, output_tokens: 40, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000 } } },
      { kind: 'message', message: { role: 'assistant', content: 'Also renamed the tests.' } },
    ],
  }));
  await steps.step(sc, 'usage');
  await steps.step(sc, 'rewind');
  await steps.step(sc, 'rewind-context');
  const { turnId } = (await steps.call(sc, rpc(8, 'turn/start', { sessionId: SHOWN_ID, kind: 'user' }))) as { turnId: string };
  steps.ids.bind(turnId, '01M8K1WM5B8JY1QZ4W0D3K6T2N');
  const refused = await steps.step(sc, 'rewind-turn-pending');
  expect((refused.error as Value).code).toBe(-31003);
  await sc.end();
}
