import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionListResult } from '../../dist/protocol/index.js';
import { tempDir } from '../helpers.js';
import { FRAMINGS, rejection, type SidecarClient, spawnSidecar, startSidecar } from './harness.js';

/**
 * Ephemeral sessions (protocol/README.md section 17) over real pipes against the built binary,
 * in both framings: a whole life writes nothing under the store directory, the session is gone
 * at close and at exit, another process never sees it, session/list marks it and pages across
 * the ephemeral and the durable sessions, and the secret gate covers both sides.
 */

const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

/** Every path under `dir` (directories too) with its size and mtime: a write anywhere changes it. */
function everything(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs} ${st.isDirectory() ? fs.readdirSync(p).length : fs.readFileSync(p).toString('base64')}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

async function listAll(c: SidecarClient, limit: number) {
  const pages: Array<Array<{ sessionId: string; ephemeral?: boolean }>> = [];
  let cursor: string | undefined;
  do {
    const page = SessionListResult.parse(await c.list({ limit, ...(cursor ? { cursor } : {}) }));
    pages.push(page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(FRAMINGS)('ephemeral sessions (%s)', (framing) => {
  it('a whole life (records, blobs, compaction, fork, state, subscribe) writes nothing under the store, and nothing survives a kill', async () => {
    const store = tempDir();
    const c = spawnSidecar({ framing, store });
    const init = await c.initialize();
    expect((init.capabilities.session as Record<string, unknown>).ephemeral).toEqual({ scratch: false });
    const before = everything(store);
    const { sessionId } = await c.create({ ephemeral: true, title: 'sub-agent', blobThreshold: 1024 });
    await c.request('session/subscribe', { sessionId, afterSeq: 0 });
    for (let i = 1; i <= 4; i++) await c.append({ sessionId, records: [msg(`m${i}`)] });
    const big = 'x'.repeat(5000);
    await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: big }] } }] }); // a blob: tool-call arguments are a BlobRef position
    const stored = (await c.read({ sessionId })).records[4] as { message: { toolCalls: Array<{ arguments: unknown }> } };
    expect(stored.message.toolCalls[0]?.arguments).toMatchObject({ $blob: expect.any(String) });
    expect((await c.read({ sessionId, inline: true })).records[4]).toMatchObject({ message: { toolCalls: [{ arguments: big }] } });
    await c.request('session/compact', { sessionId, summary: 'first two', throughSeq: 2 });
    expect((await c.request<{ generations: unknown[] }>('session/history', { sessionId })).generations).toHaveLength(1);
    const fork = await c.request<{ sessionId: string }>('session/fork', { sessionId });
    await c.setState(fork.sessionId, 'k', { v: 1 });
    expect(await c.getState(fork.sessionId, 'k')).toEqual({ v: 1 });
    await until(() => c.notifications.filter((n) => n.method === 'session/didAppend').length > 0);
    expect(everything(store)).toEqual(before);
    await c.kill('SIGKILL');
    expect(everything(store)).toEqual(before);
    const d = await startSidecar({ framing, store });
    expect((await rejection(d.open({ sessionId, mode: 'read' }))).kind).toBe('SessionNotFound');
    expect((await rejection(d.open({ sessionId: fork.sessionId, mode: 'read' }))).kind).toBe('SessionNotFound');
    await d.shutdown();
  });

  it('session/list: ephemeral ones first and marked, paged with the durable ones; only in their process; gone at close', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const durable = [(await c.create({ title: 'd1' })).sessionId, (await c.create({ title: 'd2' })).sessionId];
    const eph: string[] = [];
    for (let i = 0; i < 3; i++) eph.push((await c.create({ ephemeral: true })).sessionId);
    await c.append({ sessionId: eph[0]!, records: [msg('newest')] });
    const pages = await listAll(c, 2);
    expect(pages.map((p) => p.map((s) => s.sessionId))).toEqual([[eph[0], eph[2]], [eph[1], durable[1]], [durable[0]]]);
    expect(pages.flat().map((s) => s.ephemeral ?? false)).toEqual([true, true, true, false, false]);
    const other = await startSidecar({ framing, store });
    expect((await listAll(other, 100)).flat().map((s) => s.sessionId)).toEqual([durable[1], durable[0]]);
    expect((await rejection(other.open({ sessionId: eph[0]! }))).kind).toBe('SessionNotFound');
    await c.close(eph[0]!);
    expect((await rejection(c.read({ sessionId: eph[0]! }))).kind).toBe('SessionNotFound');
    await c.request('session/delete', { sessionId: eph[1] });
    expect((await listAll(c, 100)).flat().map((s) => s.sessionId)).toEqual([eph[2], durable[1], durable[0]]);
    expect((await rejection(c.request('session/restore', { sessionId: eph[1] }))).kind).toBe('SessionNotFound');
    await c.shutdown();
    await other.shutdown();
  });

  it('no path (§17): session/open {path} never opens an ephemeral session — its id\'s durable path is SessionNotFound; a durable one opens by path', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: eph } = await c.create({ ephemeral: true, title: 'scratch' });
    await c.append({ sessionId: eph, records: [msg('kept in memory')] });
    const { sessionId: durable } = await c.create({ title: 'on disk' });
    await c.close(durable);
    const before = everything(store);
    for (const at of [path.join(store, 'sessions', eph), path.join(store, 'sessions', eph, 'journal.jsonl'), path.relative(process.cwd(), path.join(store, 'sessions', eph))]) {
      for (const mode of ['read', 'write'] as const) {
        const err = await rejection(c.request('session/open', { path: at, mode }));
        expect([err.code, err.kind, (err.data as { sessionId?: string }).sessionId]).toEqual([-31001, 'SessionNotFound', eph]);
      }
    }
    expect(everything(store)).toEqual(before); // nothing made on disk for it
    expect((await c.read({ sessionId: eph })).records).toHaveLength(1); // still there, by its id
    expect((await c.request('session/open', { path: path.join(store, 'sessions', durable), mode: 'read' }) as { sessionId: string }).sessionId).toBe(durable);
    await c.shutdown();
  });

  it('one secret gate: a secret registered for a durable session is refused in an ephemeral one, and the other way round', async () => {
    const c = await startSidecar({ framing });
    const A = 'durable-secret-5f1c9a7e';
    const B = 'ephemeral-secret-8d2b4c6a';
    const d = (await c.create({ secrets: { values: [A] } })).sessionId;
    const e = (await c.create({ ephemeral: true, secrets: { values: [B] } })).sessionId;
    const refusedE = await rejection(c.append({ sessionId: e, records: [msg(`leak ${A}`)] }));
    expect(refusedE.kind).toBe('SecretRejected');
    const refusedD = await rejection(c.append({ sessionId: d, records: [msg(`leak ${B}`)] }));
    expect(refusedD.kind).toBe('SecretRejected');
    expect(JSON.stringify([refusedE, refusedD, c.stderr])).not.toMatch(/durable-secret|ephemeral-secret/);
    expect((await c.read({ sessionId: e })).records).toEqual([]);
    expect((await rejection(c.create({ parent: { sessionId: e, relation: 'fork' } }))).code).toBe(-32602);
    expect((await rejection(c.create({ ephemeral: true, parent: { sessionId: d, relation: 'fork' } }))).code).toBe(-32602);
    expect((await rejection(c.allocateScratch({ sessionId: e, requestId: 'r' }))).code).toBe(-32602);
    await c.shutdown();
  });
});
