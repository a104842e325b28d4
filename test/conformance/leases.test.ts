import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { rejection, startSidecar } from './harness.js';

const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

describe('writer leases across processes', () => {
  it('a writer killed with SIGKILL is taken over at once by the next process (its pid is gone)', async () => {
    const store = tempDir();
    const a = await startSidecar({ store });
    const { sessionId } = await a.create();
    await a.append({ sessionId, records: [msg('a1')] });
    await a.kill('SIGKILL');
    const b = await startSidecar({ store });
    expect((await b.open({ sessionId })).lastSeq).toBe(1);
    expect(await b.append({ sessionId, records: [msg('b2')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    await b.shutdown();
  });

  it('a holder stalled past the stale time is taken over, notices, and refuses to write (LeaseLost)', async () => {
    const store = tempDir();
    const args = ['--lease-stale-ms', '5000'];
    const a = await startSidecar({ store, args });
    const { sessionId } = await a.create();
    await a.append({ sessionId, records: [msg('a1')] });
    a.child.kill('SIGSTOP'); // an event-loop stall: the lease is not refreshed
    await new Promise((r) => setTimeout(r, 6500));
    const b = await startSidecar({ store, args });
    expect((await b.open({ sessionId })).mode).toBe('write');
    a.child.kill('SIGCONT');
    const err = await rejection(a.append({ sessionId, records: [msg('a2, after the stall')] }));
    expect(['LeaseLost', 'ReadOnly']).toContain(err.kind);
    expect(await b.append({ sessionId, records: [msg('b2')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    const records = (await b.read({ sessionId })).records.map((r) => (r.message as { content: string }).content);
    expect(records).toEqual(['a1', 'b2']);
    await b.shutdown();
    await a.shutdown();
  });
});
