import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, type SidecarClient, startSidecar } from './harness.js';

const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

function delivered(c: SidecarClient, sessionId: string): Array<Record<string, unknown>> {
  return c.notifications
    .filter((n) => n.method === 'session/didAppend' && (n.params as { sessionId: string }).sessionId === sessionId)
    .flatMap((n) => (n.params as { records: Array<Record<string, unknown>> }).records);
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(FRAMINGS)('live subscriptions (%s)', (framing) => {
  it('a subscriber in another process sees every record once, in order, across a compaction', async () => {
    const store = tempDir();
    const writer = await startSidecar({ framing, store });
    const { sessionId } = await writer.create();
    for (let i = 1; i <= 5; i++) await writer.append({ sessionId, records: [msg(`m${i}`)] });
    const watcher = await startSidecar({ framing, store });
    const sub = await watcher.request<{ lastSeq: number }>('session/subscribe', { sessionId, afterSeq: 2 });
    expect(sub.lastSeq).toBe(5);
    await until(() => delivered(watcher, sessionId).length === 3);
    const appends = Array.from({ length: 40 }, (_, i) => writer.append({ sessionId, records: [msg(`n${i}`), msg(`n${i}b`)] }));
    await Promise.all(appends);
    await writer.request('session/compact', { sessionId, summary: 'so far', throughSeq: 80 });
    for (let i = 0; i < 5; i++) await writer.append({ sessionId, records: [msg(`after${i}`)] });
    await until(() => delivered(watcher, sessionId).some((r) => (r.message as { content?: string } | undefined)?.content === 'after4'));
    // every record after seq 2 exactly once and in order — also those the compaction archived
    // before the subscriber read them (they come from the archive)
    const seqs = delivered(watcher, sessionId).map((r) => r.seq as number);
    expect(seqs).toEqual(Array.from({ length: 88 }, (_, i) => i + 3));
    expect(delivered(watcher, sessionId).every((r) => r.kind === 'message')).toBe(true);
    await watcher.request('session/unsubscribe', { sessionId });
    await writer.append({ sessionId, records: [msg('unseen')] });
    await new Promise((r) => setTimeout(r, 500));
    expect(delivered(watcher, sessionId).some((r) => (r.message as { content?: string } | undefined)?.content === 'unseen')).toBe(false);
    await watcher.shutdown();
    await writer.shutdown();
  });

  it('a subscriber in the same process gets appends and turn/didChange at once', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    await c.request('session/subscribe', { sessionId });
    const { turnId } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
    await c.append({ sessionId, records: [msg('hi')] });
    await until(() => delivered(c, sessionId).length === 2);
    await until(() => c.notifications.some((n) => n.method === 'turn/didChange'));
    const change = c.notifications.find((n) => n.method === 'turn/didChange')?.params as { turn: { turnId: string; status: string } };
    expect(change.turn).toMatchObject({ turnId, status: 'active' });
    expect(delivered(c, sessionId).map((r) => r.seq)).toEqual([1, 2]);
    await c.shutdown();
  });
});

describe('a subscriber that does not read', () => {
  it('is dropped with session/didOverflow {lastDeliveredSeq}, and can resubscribe from there', async () => {
    const store = tempDir();
    const writer = await startSidecar({ store });
    const { sessionId } = await writer.create();
    const slow = await startSidecar({ store });
    await slow.request('session/subscribe', { sessionId });
    slow.child.stdout!.pause(); // the client stops reading: the pipe fills, notifications pile up
    const big = 'x'.repeat(200);
    for (let i = 0; i < 24; i++) {
      await writer.append({ sessionId, records: Array.from({ length: 1000 }, (_, k) => ({ kind: 'event' as const, type: 'bulk', payload: { i, k, big } })) });
    }
    await new Promise((r) => setTimeout(r, 7000)); // longer than the server's stall limit (5 s)
    slow.child.stdout!.resume();
    await until(() => slow.notifications.some((n) => n.method === 'session/didOverflow'), 20_000);
    const overflow = slow.notifications.find((n) => n.method === 'session/didOverflow')?.params as { sessionId: string; lastDeliveredSeq: number };
    expect(overflow.sessionId).toBe(sessionId);
    const got = delivered(slow, sessionId).map((r) => r.seq as number);
    expect(got.length).toBeLessThan(24_000);
    // lastDeliveredSeq is the last record the client was sent in full: every record up to it
    // reached the client, each once, and none after it (the reviewer saw 0 after 6,000 records).
    expect(overflow.lastDeliveredSeq).toBeGreaterThan(0);
    expect(got).toEqual(Array.from({ length: overflow.lastDeliveredSeq }, (_, i) => i + 1));
    const overflowAt = slow.notifications.findIndex((n) => n.method === 'session/didOverflow');
    expect(slow.notifications.slice(overflowAt + 1).some((n) => n.method === 'session/didAppend')).toBe(false);
    // resubscribing from lastDeliveredSeq gives the rest, each once
    const before = slow.notifications.length;
    await slow.request('session/subscribe', { sessionId, afterSeq: overflow.lastDeliveredSeq });
    await until(() => delivered(slow, sessionId).some((r) => r.seq === 24_000), 30_000);
    const after = slow.notifications.slice(before)
      .filter((n) => n.method === 'session/didAppend')
      .flatMap((n) => (n.params as { records: Array<{ seq: number }> }).records.map((r) => r.seq));
    expect(after).toEqual(Array.from({ length: 24_000 - overflow.lastDeliveredSeq }, (_, i) => overflow.lastDeliveredSeq + 1 + i));
    await slow.shutdown();
    await writer.shutdown();
  });
});
