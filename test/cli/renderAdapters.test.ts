import fs from 'node:fs';
import path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { SidecarCheckpointSaver } from '../../dist/src/adapters/langgraph/index.js';
import { SidecarSession } from '../../dist/src/adapters/openaiAgents/index.js';
import { SidecarClient } from '../../dist/src/client/index.js';
import { tempDir } from '../helpers.js';
import { explain, runCli } from './helpers.js';

/**
 * `show` and `export --format markdown` (the BUILT binary) render the records the framework
 * adapters write — a real LangGraph StateGraph checkpointed by SidecarCheckpointSaver, the
 * shapes the Python SidecarSaver writes (msgpack values, plain message dicts) appended over the
 * protocol, and OpenAI Agents items from SidecarSession — as chat, not JSON in strings; --raw
 * and --json still print the records as stored.
 */

/** A weather graph: agent → tools → agent, checkpointed in `store`; its session id. */
async function weatherThread(store: string): Promise<string> {
  const saver = await SidecarCheckpointSaver.open({ store });
  let turn = 0;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async () => ({
      messages: [turn++ === 0 ? new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'get_weather', args: { city: 'Zürich' } }] }) : new AIMessage('It is 21°C and sunny.')],
    }))
    .addNode('tools', async () => ({ messages: [new ToolMessage({ content: 'Zürich: 21°C, sunny', tool_call_id: 'call_1', name: 'get_weather' })] }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END))
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
  await graph.invoke({ messages: [new HumanMessage('What is the weather in Zürich?')] }, { configurable: { thread_id: 'weather' } });
  await saver.close();
  const r = await runCli(['completion', 'ids', '--store', store]);
  return r.stdout.trim();
}

/** The blocks of a transcript, each `#seq who ...` with its time cut out. */
const blocks = (stdout: string) => stdout.split(/\n(?=#\d+ )/).slice(1).map((b) => b.replace(/^#(\d+) \S+ \S+ {2}/, '#$1 ').trimEnd());

describe('a LangGraph thread', () => {
  it('show: checkpoints by step and id, task writes by node, each message once as chat', async () => {
    const store = tempDir('sidecar-render-lg-');
    const id = await weatherThread(store);
    const r = await runCli(['show', id, '--store', store]);
    expect(r.code, explain(r)).toBe(0);
    const b = blocks(r.stdout);
    expect(b.join('\n')).not.toContain('"lc":1'); // no serialized JSON in strings
    const chat = b.filter((x) => x.includes('graph task')).map((x) => x.replace(/writes for \S+/, 'writes for ID'));
    expect(chat).toEqual([
      expect.stringMatching(/^#\d+ graph task {2}__start__ {2}writes for ID · thread weather\n {4}user\n {8}What is the weather in Zürich\?$/),
      expect.stringMatching(/^#\d+ graph task {2}agent {2}writes for ID · thread weather\n {4}assistant\n {8}→ get_weather\(\{"city":"Zürich"\}\) \[call_1\]$/),
      expect.stringMatching(/^#\d+ graph task {2}tools {2}writes for ID · thread weather\n {4}tool ← get_weather \[call_1\]\n {8}Zürich: 21°C, sunny$/),
      expect.stringMatching(/^#\d+ graph task {2}agent {2}writes for ID · thread weather\n {4}assistant\n {8}It is 21°C and sunny\.$/),
    ]);
    const checkpoints = b.filter((x) => x.includes('graph checkpoint'));
    expect(checkpoints.map((x) => /graph checkpoint {2}(step -?\d+ \(\w+\))/.exec(x)?.[1])).toEqual(['step -1 (input)', 'step 0 (loop)', 'step 1 (loop)', 'step 2 (loop)', 'step 3 (loop)']);
    for (const c of checkpoints.slice(1)) expect(c).toMatch(/ [0-9a-f-]{36} ← [0-9a-f-]{13}… · thread weather/);
    // the last checkpoint holds all four messages, shown before: only counted
    expect(checkpoints.at(-1)).toMatch(/\n {4}\(4 earlier messages\)$/);
  }, 120_000);

  it('export --format markdown: the messages as sections, checkpoints as quoted lines; --raw and --json as stored', async () => {
    const store = tempDir('sidecar-render-lg-');
    const id = await weatherThread(store);
    const md = await runCli(['export', id, '--format', 'markdown', '--store', store]);
    expect(md.code, explain(md)).toBe(0);
    expect(md.stdout).not.toContain('"lc":1');
    expect(md.stdout).toMatch(/## User\n\n\*#\d+ · [^*]+\*\n\nWhat is the weather in Zürich\?\n/);
    expect(md.stdout).toMatch(/## Assistant\n\n\*#\d+ · [^*]+\*\n\n\*\*Tool call `get_weather`\*\* \(`call_1`\)\n\n```json\n\{\n {2}"city": "Zürich"\n\}\n```/);
    expect(md.stdout).toMatch(/## Tool result: `get_weather`\n\n\*#\d+ · [^*]+\*\n\n```\nZürich: 21°C, sunny\n```/);
    expect(md.stdout).toMatch(/> \*\*Graph checkpoint, step 3 \(loop\)\*\* `[0-9a-f-]{36}` \(parent `[0-9a-f-]{36}`\) · thread `weather`/);
    expect(md.stdout).toMatch(/> \*\*Graph task `tools`\*\* wrote for checkpoint `[0-9a-f-]{36}`/);
    expect(md.stdout.match(/^## User$/gm)).toHaveLength(1); // each message once, not again with every checkpoint

    // --raw: each stored record as it is in the journal (its line without the checksum)
    const journal = fs.readFileSync(path.join(store, 'sessions', id, 'journal.jsonl'), 'utf8').trim().split('\n').slice(1)
      .map((l) => JSON.stringify((({ crc: _c, batchEnd: _b, ...rec }) => rec)(JSON.parse(l) as Record<string, unknown>)));
    const raw = await runCli(['show', id, '--raw', '--store', store]);
    expect(raw.stdout.trim().split('\n')).toEqual(journal);
    const json = await runCli(['show', id, '--json', '--store', store]);
    expect((JSON.parse(json.stdout) as unknown[]).map((x) => JSON.stringify(x))).toEqual(journal);
    const jsonl = await runCli(['export', id, '--format', 'jsonl', '--store', store]);
    expect(jsonl.stdout.trim().split('\n')).toEqual(journal);
  }, 120_000);

  it('the Python saver\'s shapes: msgpack values named with their size, plain message dicts as chat, a namespace', async () => {
    const store = tempDir('sidecar-render-py-');
    const client = await SidecarClient.start({ store });
    const { sessionId } = await client.request('session/create', { title: 'python thread' }) as { sessionId: string };
    const json = (v: unknown) => ({ type: 'json', text: JSON.stringify(v) });
    await client.request('session/append', {
      sessionId,
      records: [
        { kind: 'event', type: 'langgraph.writes', payload: { threadId: 'py', ns: 'inner:1', checkpointId: 'cp-1', taskId: 'task-1', taskPath: '~__pregel_pull, chat', writes: [
          [0, 'messages', json([{ type: 'human', content: 'hello from python' }, { role: 'assistant', content: [{ type: 'text', text: 'hi there' }] }])],
          [1, 'counter', { type: 'msgpack', base64: Buffer.from([0x93, 1, 2, 3]).toString('base64') }],
          [2, 'notes', json({ mood: 'good' })],
        ] } },
        { kind: 'event', type: 'langgraph.checkpoint', payload: { threadId: 'py', ns: 'inner:1', id: 'cp-2', parentId: 'cp-1', checkpoint: json({ v: 4, id: 'cp-2' }), metadata: json({ source: 'loop', step: 4 }), values: [['messages', 2, json([{ type: 'human', content: 'hello from python' }, { role: 'assistant', content: [{ type: 'text', text: 'hi there' }] }, { type: 'ai', content: 'new here' }])]] } },
      ],
    });
    await client.shutdown();
    const r = await runCli(['show', sessionId, '--store', store]);
    expect(r.code, explain(r)).toBe(0);
    expect(blocks(r.stdout)).toEqual([
      '#1 graph task  chat  writes for cp-1 · thread py ns inner:1\n    user\n        hello from python\n    assistant\n        hi there\n    counter = [msgpack, 4 bytes]\n    notes = {"mood":"good"}',
      '#2 graph checkpoint  step 4 (loop)  cp-2 ← cp-1 · thread py ns inner:1\n    assistant\n        new here\n    (2 earlier messages)',
    ]);
    const md = await runCli(['export', sessionId, '--format', 'markdown', '--store', store]);
    expect(md.stdout).toContain('> **Graph task `chat`** wrote for checkpoint `cp-1` · thread `py`, namespace `inner:1`');
    expect(md.stdout).toContain('**Channel `counter`**\n\n```json\n[msgpack, 4 bytes]\n```');
    expect(md.stdout).toMatch(/## Assistant\n\n\*#2 · [^*]+\*\n\nnew here\n/);
  }, 120_000);
});

describe('an OpenAI Agents session', () => {
  it('export --format markdown: items as messages, tool calls and results, unknown items as events', async () => {
    const store = tempDir('sidecar-render-agents-');
    const s = await SidecarSession.open({ store });
    const id = await s.getSessionId();
    await s.addItems([
      { role: 'user', content: 'What is the weather in Zürich?' },
      { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'get_weather', arguments: '{"city":"Zürich"}', status: 'completed' },
      { type: 'function_call_result', callId: 'call_1', name: 'get_weather', status: 'completed', output: { type: 'text', text: 'Zürich: 21°C, sunny' } },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 21°C and sunny.' }] },
      { type: 'hosted_tool_call', id: 'ht_1', name: 'web_search', status: 'completed' },
    ]);
    await s.close();
    const md = await runCli(['export', id, '--format', 'markdown', '--store', store]);
    expect(md.code, explain(md)).toBe(0);
    const sections = md.stdout.split(/\n(?=## )/).slice(1).map((x) => x.replace(/\*#(\d+) · [^*]+\*/, '*#$1*').trimEnd());
    expect(sections).toEqual([
      '## User\n\n*#1*\n\nWhat is the weather in Zürich?',
      '## Assistant\n\n*#2*\n\n**Tool call `get_weather`** (`call_1`)\n\n```json\n{\n  "city": "Zürich"\n}\n```',
      '## Tool result: `get_weather`\n\n*#3*\n\n```\nZürich: 21°C, sunny\n```',
      '## Assistant\n\n*#4*\n\nIt is 21°C and sunny.',
      '## Event `agents.item`\n\n*#5*\n\n```json\n{\n  "type": "hosted_tool_call",\n  "id": "ht_1",\n  "name": "web_search",\n  "status": "completed"\n}\n```',
    ]);
  }, 120_000);
});
