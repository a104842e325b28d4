import { Agent, Runner, setTracingDisabled } from '@openai/agents-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { SidecarClient } from '../../../dist/src/client/index.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../../pg/pgServer.js';
import { CannedModel, CannedProvider, say } from './cannedModel.js';
import { afterCompaction, againstMemorySession, diverseItems } from './scenarios.js';

/**
 * SidecarSession over the PostgreSQL store (the BUILT binary with `--store postgres://...
 * --pg-schema <fresh>`, in the shared throwaway cluster of test/pg/pgServer.ts): the same
 * semantics as over the file store. Skipped with a printed reason without PostgreSQL.
 */

setTracingDisabled(true);
const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

const clients: SidecarClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) await c.shutdown();
});

async function pgClient(schema: string): Promise<SidecarClient> {
  const c = await SidecarClient.start({ store: (await sharedCluster()).url, args: ['--pg-schema', schema] });
  clients.push(c);
  return c;
}

describe.skipIf(pgSkip)('SidecarSession over the PostgreSQL store', () => {
  it('behaves as MemorySession, round-trips items byte for byte, and reads after a compaction', async () => {
    const c = await pgClient(freshSchema('agents'));
    const s = await SidecarSession.open({ client: c });
    await againstMemorySession(s);
    const items = diverseItems();
    const t = await SidecarSession.open({ client: c });
    await t.addItems(items);
    expect(JSON.stringify(await t.getItems())).toBe(JSON.stringify(items));
    expect(JSON.stringify(await t.getItems(3))).toBe(JSON.stringify(items.slice(-3)));
    await afterCompaction(await SidecarSession.open({ client: c }), c);
  });

  it('a session id of the caller\'s choosing is found or created, also by a new sidecar after a SIGKILL and after close', async () => {
    const schema = freshSchema('agents');
    const a = await SidecarSession.open({ client: await pgClient(schema), sessionId: 'conversation_123', title: 'pg', tags: ['agents'] });
    expect(await a.getSessionId()).toBe('conversation_123');
    const items = diverseItems();
    await a.addItems(items);
    await a.close();
    const b = await SidecarSession.open({ client: a.client, sessionId: 'conversation_123', title: 'another title' });
    expect(b.sidecarSessionId).toBe(a.sidecarSessionId);
    await b.client.kill('SIGKILL');
    const c = await SidecarSession.open({ client: await pgClient(schema), sessionId: 'conversation_123' });
    expect(c.sidecarSessionId).toBe(a.sidecarSessionId);
    expect(JSON.stringify(await c.getItems())).toBe(JSON.stringify(items));
    const d = await SidecarSession.open({ client: c.client, sessionId: 'conversation_124' });
    expect(d.sidecarSessionId).not.toBe(a.sidecarSessionId);
    expect((await c.client.list({})).sessions).toHaveLength(2);
  });

  it('the runner resumes across a SIGKILL of the sidecar', async () => {
    const schema = freshSchema('agents');
    const model = new CannedModel([[say('msg_1', 'Hello, Ada.')], [say('msg_2', 'Your name is Ada.')]]);
    const runner = new Runner({ modelProvider: new CannedProvider(model), tracingDisabled: true });
    const agent = new Agent({ name: 'Assistant', model: 'canned' });
    const first = await SidecarSession.open({ client: await pgClient(schema) });
    await runner.run(agent, 'I am Ada.', { session: first });
    await first.client.kill('SIGKILL');
    const second = await SidecarSession.open({ client: await pgClient(schema), sessionId: await first.getSessionId() });
    const r = await runner.run(agent, 'What is my name?', { session: second });
    expect(r.finalOutput).toBe('Your name is Ada.');
    expect(model.calls[1]!.input).toEqual([
      expect.objectContaining({ role: 'user', content: 'I am Ada.' }),
      expect.objectContaining({ role: 'assistant', id: 'msg_1', content: [expect.objectContaining({ text: 'Hello, Ada.' })] }),
      expect.objectContaining({ role: 'user', content: 'What is my name?' }),
    ]);
  });
});
