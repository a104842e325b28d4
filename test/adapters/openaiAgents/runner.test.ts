import { Agent, run, Runner, setTracingDisabled, tool } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { tempDir } from '../../helpers.js';
import { call, CannedModel, CannedProvider, say } from './cannedModel.js';

/**
 * The Agents SDK's own runner over a SidecarSession on the BUILT sidecar (run `npm run build`
 * first: the session spawns dist/src/cli.js), with a canned model: the sidecar is SIGKILLed
 * between two turns and the second turn's model call still sees the first turn's history.
 */

setTracingDisabled(true);

const weather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: 21°C, sunny`,
});

function texts(items: unknown[]): string[] {
  return items.map((i) => JSON.stringify(i));
}

describe('the Agents SDK runner over SidecarSession', () => {
  it('resumes a conversation across a SIGKILL of the sidecar: turn 2 sees turn 1 (text, function call, result)', async () => {
    const store = tempDir('sidecar-agents-');
    const model = new CannedModel([
      [call('call_1', 'get_weather', { city: 'Zürich' })],
      [say('msg_1', 'It is 21°C and sunny in Zürich.')],
      [say('msg_2', 'You asked about Zürich.')],
    ]);
    const runner = new Runner({ modelProvider: new CannedProvider(model), tracingDisabled: true });
    const agent = new Agent({ name: 'Assistant', instructions: 'Be brief.', model: 'canned', tools: [weather] });

    const first = await SidecarSession.open({ store });
    const sessionId = await first.getSessionId();
    const r1 = await runner.run(agent, 'What is the weather in Zürich?', { session: first });
    expect(r1.finalOutput).toBe('It is 21°C and sunny in Zürich.');
    expect(model.calls).toHaveLength(2);
    const turn1 = await first.getItems();
    expect(turn1.map((i) => ('type' in i ? i.type : 'message'))).toEqual(['message', 'function_call', 'function_call_result', 'message']);

    // The sidecar dies without a chance to do anything: every item was durable before addItems answered.
    const killed = await first.client.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    await first.close(); // the process is gone: close only waits for its end

    const second = await SidecarSession.open({ store, sessionId });
    try {
      expect(await second.getItems()).toEqual(turn1);
      const r2 = await runner.run(agent, 'Which city did I ask about?', { session: second });
      expect(r2.finalOutput).toBe('You asked about Zürich.');
      const seen = model.calls[2]!;
      expect(seen.systemInstructions).toBe('Be brief.');
      // The model call of turn 2 got turn 1's history, then the new question.
      expect(seen.input).toHaveLength(5);
      expect(texts(seen.input.slice(0, 4))).toEqual(texts(turn1));
      expect(seen.input[0]).toMatchObject({ role: 'user', content: 'What is the weather in Zürich?' });
      expect(seen.input[1]).toMatchObject({ type: 'function_call', callId: 'call_1', name: 'get_weather' });
      expect(seen.input[2]).toMatchObject({ type: 'function_call_result', callId: 'call_1', output: { type: 'text', text: 'Zürich: 21°C, sunny' } });
      expect(seen.input[4]).toMatchObject({ role: 'user', content: 'Which city did I ask about?' });
      expect(await second.getItems()).toHaveLength(6);
    } finally {
      await second.close();
    }
  });

  it('run(agent, input, { session }) with the model on the agent: a text conversation resumes across a SIGKILL', async () => {
    const store = tempDir('sidecar-agents-');
    const model = new CannedModel([[say('msg_1', 'Hello, Ada.')], [say('msg_2', 'Your name is Ada.')]]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Remember names.', model });
    const first = await SidecarSession.open({ store });
    expect((await run(agent, 'I am Ada.', { session: first })).finalOutput).toBe('Hello, Ada.');
    await first.client.kill('SIGKILL');
    await first.close();
    const second = await SidecarSession.open({ store, sessionId: await first.getSessionId() });
    try {
      expect((await run(agent, 'What is my name?', { session: second })).finalOutput).toBe('Your name is Ada.');
      expect(model.calls[0]!.input).toEqual([expect.objectContaining({ role: 'user', content: 'I am Ada.' })]);
      expect(model.calls[1]!.input).toEqual([
        expect.objectContaining({ role: 'user', content: 'I am Ada.' }),
        expect.objectContaining({ role: 'assistant', id: 'msg_1', content: [expect.objectContaining({ type: 'output_text', text: 'Hello, Ada.' })] }),
        expect.objectContaining({ role: 'user', content: 'What is my name?' }),
      ]);
      expect(await second.getItems()).toHaveLength(4);
    } finally {
      await second.close();
    }
  });
});
