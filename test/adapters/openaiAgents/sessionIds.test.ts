import type { AgentInputItem } from '@openai/agents-core';
import { Agent, run, setTracingDisabled } from '@openai/agents-core';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKeyFor, SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { SidecarClient } from '../../../dist/src/client/index.js';
import { tempDir } from '../../helpers.js';
import { explain, hasPython311, run as runCommand } from '../../pythonRun.js';
import { CannedModel, say } from './cannedModel.js';
import { user } from './scenarios.js';

/**
 * Session ids as the Agents SDK means them, on the BUILT sidecar: `SidecarSession.open({ sessionId:
 * 'conversation_123' })` finds the session that id names or creates it (a session/create
 * idempotencyKey derived from the id, `idempotencyKeyFor`), in this process, in a new one, after a
 * SIGKILL, and from clients/python's SidecarSession with the same id; title and tags on the
 * created session; items byte for byte.
 */

setTracingDisabled(true);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const CI = process.env.CI === 'true';
const hasPython = hasPython311();

const opened: SidecarSession[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function open(opts: Parameters<typeof SidecarSession.open>[0]): Promise<SidecarSession> {
  const s = await SidecarSession.open(opts);
  opened.push(s);
  return s;
}

const items: AgentInputItem[] = [
  { role: 'user', content: 'Weather in Zürich? ☀️' },
  { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'weather', arguments: '{"city":"Zürich"}', status: 'completed', providerData: { z: 1, a: 2 } },
  { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.' }] },
];

describe('SidecarSession: session ids of the caller\'s choosing', () => {
  it('finds or creates the session an id names: same id, same session, in this process and a new one; title and tags', async () => {
    const store = tempDir('sidecar-agents-ids-');
    const a = await SidecarSession.open({ store, sessionId: 'conversation_123', title: 'Trip to Zürich', tags: ['agents', 'demo'] });
    expect(await a.getSessionId()).toBe('conversation_123');
    expect(a.sidecarSessionId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    await a.addItems(items);
    await a.close();
    // Another title/tags the second time: the session keeps its own, and is still this id's.
    const b = await open({ store, sessionId: 'conversation_123', title: 'another', tags: ['x'] });
    expect(b.sidecarSessionId).toBe(a.sidecarSessionId);
    expect(JSON.stringify(await b.getItems())).toBe(JSON.stringify(items));
    const c = await open({ store, sessionId: 'conversation_124' });
    expect(c.sidecarSessionId).not.toBe(a.sidecarSessionId);
    expect(await c.getItems()).toEqual([]);
    await b.close();
    await c.close();
    const client = await SidecarClient.start({ store });
    try {
      const { sessions } = await client.list({});
      expect(sessions).toHaveLength(2);
      const mine = sessions.find((x) => x.sessionId === a.sidecarSessionId)!;
      expect(mine.title).toBe('Trip to Zürich');
      expect([...(mine.tags ?? [])].sort()).toEqual(['agents', 'demo']);
      const header = await client.open({ sessionId: a.sidecarSessionId, mode: 'read' });
      expect(header.metadata).toEqual({ client: 'session-sidecar/adapters/openai-agents', agentsSessionId: 'conversation_123' });
      expect(JSON.stringify(sessions) + JSON.stringify(header)).not.toContain(idempotencyKeyFor('conversation_123'));
    } finally {
      await client.shutdown();
    }
  });

  it('any string is an id: non-ASCII and long ids are hashed into the key; a session\'s own ULID continues it', async () => {
    const store = tempDir('sidecar-agents-ids-');
    const ids = ['Zürich ☀️ / chat', 'x'.repeat(500), ' ', 'agents.session:Zürich'];
    const first: string[] = [];
    for (const [i, id] of ids.entries()) {
      const s = await SidecarSession.open({ store, sessionId: id });
      await s.addItems([user(`#${i}`)]);
      first.push(s.sidecarSessionId);
      await s.close();
    }
    expect(new Set(first).size).toBe(ids.length);
    for (const [i, id] of ids.entries()) {
      const s = await open({ store, sessionId: id });
      expect(s.sidecarSessionId).toBe(first[i]);
      expect(await s.getItems()).toEqual([user(`#${i}`)]);
    }
    expect(idempotencyKeyFor('conversation_123')).toBe('agents.session:conversation_123');
    expect(idempotencyKeyFor('Zürich')).toMatch(/^agents\.session\.sha256:[0-9a-f]{64}$/);
    expect(idempotencyKeyFor('x'.repeat(114))).toMatch(/^agents\.session\.sha256:/);
    expect(idempotencyKeyFor('x'.repeat(113))).toBe(`agents.session:${'x'.repeat(113)}`);
    const anon = await open({ store });
    expect(await anon.getSessionId()).toBe(anon.sidecarSessionId);
    await anon.addItems([user('anon')]);
    await anon.close();
    const again = await open({ store, sessionId: anon.sidecarSessionId });
    expect(again.sidecarSessionId).toBe(anon.sidecarSessionId);
    expect(await again.getItems()).toEqual([user('anon')]);
    await expect(SidecarSession.open({ store, sessionId: '' })).rejects.toThrow(TypeError);
  });

  it('the runner resumes a caller\'s id across a SIGKILL of the sidecar', async () => {
    const store = tempDir('sidecar-agents-ids-');
    const model = new CannedModel([[say('msg_1', 'Hello, Ada.')], [say('msg_2', 'Your name is Ada.')]]);
    const agent = new Agent({ name: 'Assistant', instructions: 'Remember names.', model });
    const first = await SidecarSession.open({ store, sessionId: 'conversation_ada' });
    expect((await run(agent, 'I am Ada.', { session: first })).finalOutput).toBe('Hello, Ada.');
    const turn1 = await first.getItems();
    expect((await first.client.kill('SIGKILL')).signal).toBe('SIGKILL');
    await first.close();
    const second = await open({ store, sessionId: 'conversation_ada' });
    expect(second.sidecarSessionId).toBe(first.sidecarSessionId);
    expect((await run(agent, 'What is my name?', { session: second })).finalOutput).toBe('Your name is Ada.');
    expect(JSON.stringify(model.calls[1]!.input.slice(0, 2))).toBe(JSON.stringify(turn1));
  });

  it.skipIf(!hasPython && !CI)('clients/python\'s SidecarSession with the same id finds the same session, items byte for byte', async () => {
    if (CI) expect(hasPython, 'CI=true: python3 >= 3.11 must be installed').toBe(true);
    const store = tempDir('sidecar-agents-ids-');
    const a = await SidecarSession.open({ store, sessionId: 'conversation_123', title: 'from JS' });
    await a.addItems(items);
    const sid = a.sidecarSessionId;
    await a.close();
    const script = [
      'import asyncio, json',
      'from session_sidecar import SidecarSession',
      'async def main():',
      `    s = await SidecarSession.open(session_id="conversation_123", store=${JSON.stringify(store)}, title="from Python")`,
      '    print(s.sidecar_session_id)',
      '    print(json.dumps(await s.get_items(), ensure_ascii=False, separators=(",", ":")))',
      '    await s.add_items([{"role": "user", "content": "from Python", "zeta": None}])',
      '    await s.close()',
      'asyncio.run(main())',
    ].join('\n');
    const r = await runCommand('python3', ['-c', script], {
      cwd: ROOT, env: { PYTHONPATH: path.join(ROOT, 'clients/python/src'), SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}` },
    });
    expect(r.code, explain(r)).toBe(0);
    const [pySid, pyItems] = r.stdout.trim().split('\n');
    expect(pySid).toBe(sid);
    expect(pyItems).toBe(JSON.stringify(items));
    const b = await open({ store, sessionId: 'conversation_123' });
    expect(b.sidecarSessionId).toBe(sid);
    expect(JSON.stringify(await b.getItems(1))).toBe(JSON.stringify([{ role: 'user', content: 'from Python', zeta: null }]));
  });
});
