import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionPruneResult } from '../../dist/protocol/index.js';
import { tempDir } from '../helpers.js';
import { FRAMINGS, rejection, type SidecarClient, spawnSidecar, startSidecar } from './harness.js';

/**
 * session/prune (protocol/README.md section 18) over real pipes against the built binary, in
 * both framings: the moved sessions are in the store's trash (their bytes kept), a session open
 * for writing by another process is skipped, dryRun moves nothing, ephemeral sessions are never
 * selected, and a bad duration is refused.
 */

const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });
const prune = async (c: SidecarClient, params: Record<string, unknown>) => SessionPruneResult.parse(await c.request('session/prune', params));

describe.each(FRAMINGS)('session/prune (%s)', (framing) => {
  it('moves to the trash (bytes kept), skips what another process holds open, dryRun moves nothing, never an ephemeral session', async () => {
    const store = tempDir();
    const c = spawnSidecar({ framing, store });
    const init = await c.initialize();
    expect((init.capabilities.session as Record<string, unknown>).prune).toEqual({ dryRun: true, tags: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { sessionId } = await c.create({ title: `t${i}` });
      await c.append({ sessionId, records: [msg(`m${i}`)] });
      await c.close(sessionId);
      ids.push(sessionId);
      await new Promise((r) => setTimeout(r, 5));
    }
    const { sessionId: eph } = await c.create({ ephemeral: true });
    const other = await startSidecar({ framing, store });
    await other.open({ sessionId: ids[0]!, mode: 'write' });
    const journals = ids.map((id) => fs.readFileSync(path.join(store, 'sessions', id, 'journal.jsonl')));
    await new Promise((r) => setTimeout(r, 5));

    const dry = await prune(c, { olderThan: '0s', dryRun: true });
    // exactly what the real prune below does: the held session skipped, reason open (§18.1)
    expect(dry.sessions.map((s) => s.sessionId)).toEqual([ids[2], ids[1]]);
    expect(dry.skipped).toEqual([{ sessionId: ids[0], reason: 'open' }]);
    for (const id of ids) expect(fs.existsSync(path.join(store, 'sessions', id, 'journal.jsonl'))).toBe(true);

    const r = await prune(c, { olderThan: '0s' });
    expect(r.sessions.map((s) => [s.sessionId, s.title])).toEqual([[ids[2], 't2'], [ids[1], 't1']]);
    expect(r.skipped).toEqual([{ sessionId: ids[0], reason: 'open' }]);
    for (const i of [1, 2]) {
      expect(fs.existsSync(path.join(store, 'sessions', ids[i]!))).toBe(false);
      expect(fs.readFileSync(path.join(store, 'trash', ids[i]!, 'session', 'journal.jsonl'))).toEqual(journals[i]);
    }
    expect((await c.list()).sessions.map((s) => s.sessionId)).toEqual([eph, ids[0]]);
    expect(await other.append({ sessionId: ids[0]!, records: [msg('still mine')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    const bad = await rejection(c.request('session/prune', { olderThan: 'a while' }));
    expect(bad.code).toBe(-32602);
    expect(JSON.stringify(bad.data)).toContain('olderThan');
    await other.shutdown();
    await c.shutdown();
  });
});
