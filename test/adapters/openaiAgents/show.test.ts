import type { AgentInputItem } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { tempDir } from '../../helpers.js';
import { explain, runCli } from '../../cli/helpers.js';

/** `session-sidecar show` (the BUILT binary) renders the items a SidecarSession stored as a readable transcript. */

describe('session-sidecar show of an Agents SDK session', () => {
  it('shows messages, function calls and results as chat, unknown items as events, rewinds as rewinds', async () => {
    const store = tempDir('sidecar-agents-show-');
    const s = await SidecarSession.open({ store });
    const id = await s.getSessionId();
    await s.addItems([
      { role: 'user', content: 'What is the weather in Zürich?' },
      { type: 'reasoning', id: 'rs_1', content: [{ type: 'input_text', text: 'Need the weather tool.' }] },
      { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'get_weather', arguments: '{"city":"Zürich"}', status: 'completed' },
      { type: 'function_call_result', callId: 'call_1', name: 'get_weather', status: 'completed', output: { type: 'text', text: 'Zürich: 21°C, sunny' } },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 21°C and sunny.' }] },
      { type: 'function_call_output', call_id: 'call_2', output: 'python-style output' } as unknown as AgentInputItem,
      { type: 'hosted_tool_call', id: 'ht_1', name: 'web_search', status: 'completed' },
    ]);
    await s.popItem();
    await s.close();
    const r = await runCli(['show', id, '--store', store]);
    expect(r.code, explain(r)).toBe(0);
    const blocks = r.stdout.split(/\n(?=#\d+ )/).slice(1).map((b) => b.replace(/^#(\d+) \S+ \S+ {2}/, '#$1 ').trimEnd());
    expect(blocks).toEqual([
      '#1 user\n    What is the weather in Zürich?',
      '#2 reasoning\n    Need the weather tool.',
      '#3 assistant\n    → get_weather({"city":"Zürich"}) [call_1]',
      '#4 tool ← get_weather [call_1]\n    Zürich: 21°C, sunny',
      '#5 assistant\n    It is 21°C and sunny.',
      '#6 tool ← result [call_2]\n    python-style output',
      '#7 event  agents.item  {"type":"hosted_tool_call","id":"ht_1","name":"web_search","status":"completed"}',
      '#8 rewind  back to #6: records #7–#7 rewound',
    ]);
  });
});
