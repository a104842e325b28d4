import type { AgentInputItem } from '@openai/agents-core';
import { MemorySession } from '@openai/agents-core';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ITEM_TYPE, SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { SidecarClient, SidecarError } from '../../../dist/src/client/index.js';
import { tempDir } from '../../helpers.js';
import { afterCompaction, againstMemorySession, diverseItems, user } from './scenarios.js';

/**
 * SidecarSession against the BUILT sidecar (`npm run build` first): the Session semantics
 * checked against the SDK's MemorySession, byte-for-byte round trips, nothing deleted (rewind
 * records), latest-N read from the tail only, registered secrets refused, a shared client.
 */

const opened: SidecarSession[] = [];
const clients: SidecarClient[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const c of clients.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) await c.shutdown();
});

async function session(opts: Parameters<typeof SidecarSession.open>[0] = {}): Promise<SidecarSession> {
  const s = await SidecarSession.open({ store: tempDir('sidecar-agents-'), ...opts });
  opened.push(s);
  return s;
}

async function client(store = tempDir('sidecar-agents-')): Promise<SidecarClient> {
  const c = await SidecarClient.start({ store });
  clients.push(c);
  return c;
}

/**
 * Every session/read request the client sends from now on and what it got back, except the
 * first-record read each operation starts with (`{limit: 1}` from the start: it tells lastSeq
 * and where the active journal begins), which is checked to return at most that one record.
 */
function recordReads(c: SidecarClient): Array<{ params: Record<string, unknown>; records: Array<{ seq: number }> }> {
  const reads: Array<{ params: Record<string, unknown>; records: Array<{ seq: number }> }> = [];
  const request = c.request.bind(c);
  c.request = (async (method: string, params?: unknown) => {
    const result = await request(method, params);
    if (method !== 'session/read') return result;
    const p = params as Record<string, unknown>;
    const records = (result as { records: Array<{ seq: number }> }).records;
    if (p.afterSeq === undefined && p.limit === 1) expect(records.length).toBeLessThanOrEqual(1);
    else reads.push({ params: p, records });
    return result;
  }) as SidecarClient['request'];
  return reads;
}

describe('SidecarSession', () => {
  it('creates a session when no sessionId is given, and continues one by id', async () => {
    const store = tempDir('sidecar-agents-');
    const a = await SidecarSession.open({ store });
    const id = await a.getSessionId();
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    await a.addItems([user('one'), user('two')]);
    await a.close();
    await a.close(); // idempotent
    await expect(a.getItems()).rejects.toThrow(/closed/);
    const b = await session({ store, sessionId: id });
    expect(await b.getSessionId()).toBe(id);
    expect(await b.getItems()).toEqual([user('one'), user('two')]);
    const c = await session({ store });
    expect(await c.getSessionId()).not.toBe(id);
    expect(await c.getItems()).toEqual([]);
  });

  it('an unknown ULID is a caller-chosen id like any other: a new session keyed by it (test/adapters/openaiAgents/sessionIds.test.ts)', async () => {
    const store = tempDir('sidecar-agents-');
    const ulid = '01M8K1WKJ0VTPTCMTSTY8EW4CN';
    const a = await session({ store, sessionId: ulid });
    expect(await a.getSessionId()).toBe(ulid);
    expect(a.sidecarSessionId).not.toBe(ulid);
    await a.addItems([user('one')]);
    await a.close();
    const b = await session({ store, sessionId: ulid });
    expect(b.sidecarSessionId).toBe(a.sidecarSessionId);
    expect(await b.getItems()).toEqual([user('one')]);
  });

  it('round-trips items byte for byte (member order, unknown members, providerData, calls, results, reasoning, blobs)', async () => {
    const store = tempDir('sidecar-agents-');
    const s = await session({ store });
    const items = diverseItems();
    await s.addItems(items.slice(0, 3));
    await s.addItems(items.slice(3));
    const got = await s.getItems();
    expect(JSON.stringify(got)).toBe(JSON.stringify(items));
    expect(got).toEqual(items);
    expect(JSON.stringify(await s.getItems(4))).toBe(JSON.stringify(items.slice(-4)));
    // Each item is one agents.item event record, payload as given (a new sidecar reads the same).
    const c = await client(store);
    const page = await c.read({ sessionId: await s.getSessionId(), inline: true });
    expect(page.records.map((r) => [r.kind, (r as { type?: string }).type])).toEqual(items.map(() => ['event', ITEM_TYPE]));
    expect(JSON.stringify(page.records.map((r) => (r as { payload?: unknown }).payload))).toBe(JSON.stringify(items));
    const raw = await c.read({ sessionId: await s.getSessionId(), afterSeq: items.length - 1 });
    expect(JSON.stringify(raw.records[0])).not.toContain('"$blob"'); // the long text stays in the record: an event payload is not a BlobRef position (§15.4)
  });

  it('popItem and clearSession behave as the SDK\'s MemorySession on the same operations', async () => {
    await againstMemorySession(await session());
  });

  it('works the same over a client in the LSP Content-Length framing', async () => {
    const c = await SidecarClient.start({ store: tempDir('sidecar-agents-'), framing: 'lsp', keepStdout: true });
    clients.push(c);
    const s = await SidecarSession.open({ client: c });
    opened.push(s);
    await againstMemorySession(s);
    expect(Buffer.concat(c.stdout).toString('latin1')).toMatch(/^Content-Length: \d+\r\n\r\n/);
  });

  it('agrees with MemorySession on random operation sequences', async () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('add' as const), n: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant('get' as const), n: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }) }),
      fc.constant({ op: 'pop' as const }),
      fc.constant({ op: 'clear' as const }),
    );
    const store = tempDir('sidecar-agents-');
    const c = await client(store);
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 14 }), async (ops) => {
      const s = await SidecarSession.open({ client: c });
      const m = new MemorySession();
      let k = 0;
      try {
        for (const o of ops) {
          if (o.op === 'add') {
            const batch = Array.from({ length: o.n }, () => user(`item ${k++}`));
            await s.addItems(batch);
            await m.addItems(batch);
          } else if (o.op === 'get') expect(await s.getItems(o.n)).toEqual(await m.getItems(o.n));
          else if (o.op === 'pop') expect(await s.popItem()).toEqual(await m.popItem());
          else {
            await s.clearSession();
            await m.clearSession();
          }
        }
        expect(await s.getItems()).toEqual(await m.getItems());
      } finally {
        await s.close();
      }
    }), { numRuns: 25, seed: 19 });
  });

  it('refuses, before sending anything, items JSON would change (TypeError naming where, not the value)', async () => {
    const s = await session();
    await s.addItems([user('kept')]);
    const cyclic: Record<string, unknown> = { role: 'user', content: 'loop' };
    cyclic.self = cyclic;
    for (const [bad, where] of [
      [{ role: 'user', content: [{ type: 'input_image', image: new Uint8Array([1, 2, 3]) }] }, /items\[1\]\.content\[0\]\.image: a Uint8Array cannot/],
      [{ role: 'user', content: 'x', providerData: { score: Number.NaN } }, /items\[1\]\.providerData\.score: a NaN cannot/],
      [{ role: 'user', content: 'x', providerData: { at: new Date(0) } }, /items\[1\]\.providerData\.at: a Date cannot/],
      [cyclic, /items\[1\]\.self: a cycle/],
      ['just text', /items\[1\]: an item must be an object/],
    ] as const) {
      await expect(s.addItems([user('not stored either'), bad as unknown as AgentInputItem])).rejects.toThrow(where);
    }
    expect(await s.getItems()).toEqual([user('kept')]);
    await s.addItems([{ role: 'user', content: 'undefined members are left out', providerData: undefined } as AgentInputItem]);
    expect(JSON.stringify(await s.getItems(1))).toBe('[{"role":"user","content":"undefined members are left out"}]');
  });

  it('serializes overlapping calls in call order', async () => {
    const s = await session();
    const [, popped, , all] = await Promise.all([s.addItems([user('a'), user('b')]), s.popItem(), s.addItems([user('c')]), s.getItems()]);
    expect(popped).toEqual(user('b'));
    expect(all).toEqual([user('a'), user('c')]);
  });

  it('never deletes: popItem and clearSession append rewind records, the journal keeps every item', async () => {
    const store = tempDir('sidecar-agents-');
    const s = await session({ store });
    await s.addItems([user('a'), user('b'), user('c')]);
    await s.popItem();
    await s.clearSession();
    await s.clearSession(); // nothing to clear: no record
    expect(await s.popItem()).toBeUndefined(); // nothing to pop: no record
    await s.addItems([user('d')]);
    const c = await client(store);
    const page = await c.read({ sessionId: await s.getSessionId() });
    expect(page.records.map((r) => [r.seq, r.kind, (r as { toSeq?: number }).toSeq ?? (r as { payload?: { content?: string } }).payload?.content])).toEqual([
      [1, 'event', 'a'], [2, 'event', 'b'], [3, 'event', 'c'], [4, 'rewind', 2], [5, 'rewind', 0], [6, 'event', 'd'],
    ]);
    expect(await s.getItems()).toEqual([user('d')]);
  });

  it('after a compaction the items are those after the checkpoint; clearSession rewinds to the checkpoint', async () => {
    const c = await client();
    const s = await SidecarSession.open({ client: c });
    opened.push(s);
    await afterCompaction(s, c);
  });

  it('the walk stops at the checkpoint of a compacted session: nothing read twice, nothing below it asked for', async () => {
    const c = await client();
    const s = await SidecarSession.open({ client: c });
    opened.push(s);
    const sessionId = await s.getSessionId();
    const items = Array.from({ length: 600 }, (_, i) => user(`item ${i}`));
    await s.addItems(items);
    await c.request('session/compact', { sessionId, summary: 'the first 300 items', throughSeq: 300 });
    const reads = recordReads(c);
    expect(await s.getItems()).toEqual(items.slice(300));
    const seen = reads.flatMap((r) => r.records.map((x) => x.seq));
    expect(new Set(seen).size).toBe(seen.length);
    expect(Math.min(...seen)).toBe(300); // the checkpoint
    expect(reads.every((r) => (r.params.afterSeq as number) >= 299)).toBe(true);
  });

  it('getItems(limit) on a long session reads only a tail, also across rewinds and after a clear', async () => {
    const store = tempDir('sidecar-agents-');
    const c = await client(store);
    const s = await SidecarSession.open({ client: c });
    opened.push(s);
    const items = Array.from({ length: 600 }, (_, i) => user(`item ${i}`));
    await s.addItems(items);
    const reads = recordReads(c);
    const seen = () => reads.flatMap((r) => r.records.map((x) => x.seq));

    expect(await s.getItems(3)).toEqual(items.slice(-3));
    expect(seen().length).toBeLessThanOrEqual(16);
    expect(Math.min(...seen())).toBeGreaterThan(600 - 16);
    expect(reads.every((r) => (r.params.afterSeq as number) >= 600 - 16)).toBe(true);

    reads.length = 0;
    expect(await s.popItem()).toEqual(items[599]);
    expect(await s.popItem()).toEqual(items[598]);
    expect(seen().length).toBeLessThanOrEqual(2 * 16);
    reads.length = 0;
    expect(await s.getItems(5)).toEqual(items.slice(593, 598));
    expect(Math.min(...seen())).toBeGreaterThan(550);

    await s.clearSession();
    await s.addItems([user('after clear')]);
    reads.length = 0;
    expect(await s.getItems()).toEqual([user('after clear')]); // the walk stops at the rewind to 0
    expect(seen().length).toBeLessThanOrEqual(64);
    expect(Math.min(...seen())).toBeGreaterThan(500);
  });

  it('a registered secret is refused (SecretRejected) and nothing is stored; a credential is redacted', async () => {
    const secret = 'hunter2-Correct-Horse-9431';
    const store = tempDir('sidecar-agents-');
    const s = await session({ store, secrets: { values: [secret] } });
    await s.addItems([user('before')]);
    const err = await s.addItems([user('ok'), { type: 'function_call', callId: 'c1', name: 'login', arguments: JSON.stringify({ password: secret }) } as AgentInputItem]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SidecarError);
    expect((err as SidecarError).kind).toBe('SecretRejected');
    expect(JSON.stringify({ message: (err as Error).message, data: (err as SidecarError).data })).not.toContain(secret);
    expect(await s.getItems()).toEqual([user('before')]); // all-or-nothing: 'ok' is not stored either
    const id = await s.getSessionId();
    await s.close();
    // Values are kept in memory only: a new sidecar must be given them again, and then refuses too.
    const again = await session({ store, sessionId: id, secrets: { values: [secret] } });
    const err2 = await again.addItems([user(`it is ${secret}`)]).catch((e: unknown) => e);
    expect((err2 as SidecarError).kind).toBe('SecretRejected');
    expect(await again.getItems()).toEqual([user('before')]);
    // A credential under a credential name is stored redacted, the rest of the item as given (§10).
    await again.addItems([{ role: 'user', content: 'call it', providerData: { api_key: 'q8Zr2LmX7vPk4TnW', keep: 1 } } as AgentInputItem]);
    expect((await again.getItems(1))[0]).toEqual({ role: 'user', content: 'call it', providerData: { api_key: '<redacted>', keep: 1 } });
  });

  it('popItem refuses (Conflict) and changes nothing when the session changed between its read and its rewind', async () => {
    const c = await client();
    const s = await SidecarSession.open({ client: c });
    opened.push(s);
    const id = await s.getSessionId();
    await s.addItems([user('a'), user('b')]);
    const request = c.request.bind(c);
    c.request = (async (method: string, params?: unknown) => {
      if (method === 'session/rewind') await request('session/append', { sessionId: id, records: [{ kind: 'event', type: ITEM_TYPE, payload: user('racer') }] });
      return request(method, params);
    }) as SidecarClient['request'];
    const err = await s.popItem().catch((e: unknown) => e);
    expect((err as SidecarError).kind).toBe('Conflict');
    c.request = request as SidecarClient['request'];
    expect(await s.getItems()).toEqual([user('a'), user('b'), user('racer')]);
  });

  it('with a given client, close() closes the session but leaves the client running', async () => {
    const c = await client();
    const s = await SidecarSession.open({ client: c });
    expect(s.client).toBe(c);
    await s.addItems([user('x')]);
    await s.close();
    expect(c.child.exitCode).toBeNull();
    const again = await SidecarSession.open({ client: c, sessionId: await s.getSessionId() });
    expect(await again.getItems()).toEqual([user('x')]);
    await again.close();
    expect((await c.list()).sessions).toHaveLength(1);
  });

  it('an owned sidecar is shut down by close()', async () => {
    const s = await SidecarSession.open({ store: tempDir('sidecar-agents-') });
    await s.close();
    expect(await s.client.exited).toEqual({ code: 0, signal: null });
  });
});
