/**
 * What an agent runtime keeps besides its records: tool scratch directories (toolSeqs
 * reserved in the backend, durable before they are handed out; the directories on this
 * machine's disk) and named state values. Like appends, scratch allocations and state writes go
 * through the session's commit queue, in arrival order, as exclusive operations: refused after
 * a fail-stop, fenced by the lease.
 */
import { StoreError } from '../../domain/errors.js';
import { checkStateKey, prepareStateValue } from '../../domain/stateValues.js';
import type { KeepScratch } from '../../scratch/toolRuns.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import type { Core } from './context.js';
import { parseExact } from '../../domain/exactJson.js';

export async function allocateScratch(c: Core, sessionId: string, keep?: KeepScratch): Promise<{ toolSeq: number; dir: string; tmpDir: string }> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  if (!c.scratch) {
    throw new StoreError('InvalidArgument', 'an ephemeral session has no tool scratch directories (they would be on disk)', { path: 'sessionId', reason: 'ephemeral' });
  }
  return c.commitInOrder(s, () => s.queue.exclusive(async () => {
    const committed = s.queue.state.runtime.toolSeq;
    const tools = s.tools();
    const reserved = await c.backend.reserveToolSeq(s.fence, Math.max(tools.issued, committed));
    tools.issued = Math.max(tools.issued, reserved - 1);
    const run = tools.allocate(committed, keep);
    // A directory left on this disk made allocate skip ahead: the backend learns the number too.
    if (run.toolSeq > reserved) await c.backend.reserveToolSeq(s.fence, run.toolSeq - 1);
    return run;
  }));
}

export async function setState(c: Core, sessionId: string, key: string, value: unknown): Promise<{ redactions: Redaction[] }> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  const { text, redactions } = prepareStateValue(key, value, c.secrets);
  const entry = c.gate.stateEntry({ key, text });
  await c.commitInOrder(s, () => s.queue.exclusive(() => c.backend.state.set(s.fence, entry)));
  return { redactions };
}

export async function getState(c: Core, sessionId: string, key: string): Promise<unknown> {
  await c.settled(sessionId);
  checkStateKey(key);
  await c.loadLive(sessionId);
  const text = await c.backend.state.get(sessionId, key);
  if (text === undefined) return null;
  return (parseExact(text) as { value: unknown }).value ?? null;
}

export async function deleteState(c: Core, sessionId: string, key: string): Promise<boolean> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  checkStateKey(key);
  return c.commitInOrder(s, () => s.queue.exclusive(() => c.backend.state.delete(s.fence, key)));
}
