/**
 * A real LangGraph StateGraph checkpointed by SidecarCheckpointSaver (the built adapter over the
 * built binary): it runs its first step, stops before the second (interruptBefore), the sidecar
 * is SIGKILLed, a new saver on the same store resumes the graph from the last checkpoint — the
 * state continues (the first node does not run again) instead of restarting. On the file store
 * and on the PostgreSQL store (skipped with the reason printed without PostgreSQL, never under CI=true).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SidecarCheckpointSaver } from '../../../dist/src/adapters/langgraph/index.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../../pg/pgServer.js';

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const runs: string[] = [];
function graph(checkpointer: SidecarCheckpointSaver) {
  return new StateGraph(State)
    .addNode('first', () => (runs.push('first'), { items: ['first'] }))
    .addNode('second', () => (runs.push('second'), { items: ['second'] }))
    .addEdge(START, 'first')
    .addEdge('first', 'second')
    .addEdge('second', END)
    .compile({ checkpointer, interruptBefore: ['second'] });
}

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function tmpStore(): string {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-langgraph-resume-'));
  cleanup.push(async () => fs.rmSync(store, { recursive: true, force: true }));
  return store;
}

async function resumeAfterKill(open: () => Promise<SidecarCheckpointSaver>): Promise<void> {
  const config = { configurable: { thread_id: 'resume-thread' } };
  runs.length = 0;

  const first = await open();
  const stopped = await graph(first).invoke({ items: ['input'] }, config);
  expect(stopped.items).toEqual(['input', 'first']);
  expect(runs).toEqual(['first']);
  const killed = await first.client.kill('SIGKILL');
  expect(killed.signal).toBe('SIGKILL');

  const second = await open();
  cleanup.push(() => second.close());
  const resumed = graph(second);
  const before = await resumed.getState(config);
  expect(before.values.items).toEqual(['input', 'first']);
  expect(before.next).toEqual(['second']);

  const done = await resumed.invoke(null, config);
  expect(done.items).toEqual(['input', 'first', 'second']);
  expect(runs).toEqual(['first', 'second']); // the first node did not run again
  const after = await resumed.getState(config);
  expect(after.next).toEqual([]);

  // The history is the sidecar's: every checkpoint of the thread, newest first, each after its parent.
  const history = [];
  for await (const t of second.list({ configurable: { thread_id: 'resume-thread' } })) history.push(t);
  expect(history.length).toBeGreaterThanOrEqual(4);
  expect(history[0]!.checkpoint.channel_values).toMatchObject({ items: ['input', 'first', 'second'] });
  for (const [i, t] of history.entries()) {
    if (i + 1 < history.length) expect(t.parentConfig?.configurable?.checkpoint_id).toBe(history[i + 1]!.checkpoint.id);
  }
}

it('resumes a StateGraph from its last checkpoint after the sidecar is SIGKILLed (file store)', async () => {
  const store = tmpStore();
  await resumeAfterKill(() => SidecarCheckpointSaver.open({ store }));
});

const pgSkip = pgAvailability();
describe.skipIf(pgSkip)('on the PostgreSQL store', () => {
  afterAll(() => releaseSharedCluster());
  it('resumes a StateGraph from its last checkpoint after the sidecar is SIGKILLed', async () => {
    const url = (await sharedCluster()).url;
    const schema = freshSchema('lgresume');
    const workspace = tmpStore();
    await resumeAfterKill(() => SidecarCheckpointSaver.open({ store: url, spawn: { args: ['--pg-schema', schema, '--workspace', workspace] } }));
  });
});
