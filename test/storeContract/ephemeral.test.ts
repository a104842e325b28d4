/**
 * Store contract: ephemeral sessions (protocol §17) beside each durable backend — the router
 * (engine/ephemeral.ts) over the backend's store and the core's Sessions over MemoryBackend. A whole life of
 * an ephemeral session leaves the durable data exactly as it was (file: every path and byte
 * under the root; PostgreSQL: every row of every table of the schema), another instance never
 * sees it, and it is gone at close and at closeAll.
 */
import fs from 'node:fs';
import path from 'node:path';
import pgLib from 'pg';
import { expect, it } from 'vitest';
import type { PostgresBackend } from '../../src/backends/postgres/backend.js';
import { MemoryBackend } from '../../src/backends/memory/memoryBackend.js';
import { Sessions as CoreSessions } from '../../src/core/sessions/sessions.js';
import { SecretSet } from '../../src/domain/secrets/knownSecrets.js';
import type { SessionStore } from '../../src/domain/types.js';
import { EphemeralRouter } from '../../src/core/services/ephemeral.js';
import { sharedCluster } from '../pg/pgServer.js';
import { eachBackend, type BackendName, readAll, storeError, user } from './backends.js';

/** Everything durable the store holds, as text: a change anywhere changes it. */
async function durableState(name: BackendName, s: SessionStore): Promise<string> {
  if (name === 'file') {
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        out.push(`${path.relative(s.root, p)} ${e.isDirectory() ? '/' : fs.readFileSync(p).toString('base64')}`);
        if (e.isDirectory()) walk(p);
      }
    };
    walk(s.root);
    return out.sort().join('\n');
  }
  if (name === 'memory') return ((s as CoreSessions).port as MemoryBackend).dump();
  const schema = ((s as CoreSessions).port as PostgresBackend).schema;
  const c = new pgLib.Client({ connectionString: (await sharedCluster()).url });
  await c.connect();
  try {
    const tables = (await c.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema])).rows.map((r) => r.table_name as string);
    const out: string[] = [];
    for (const t of tables) {
      // Leases are refreshed by heartbeats of the open durable sessions: their count is compared.
      const rows = (await c.query(`SELECT to_jsonb(x)::text AS j FROM "${schema}"."${t}" x`)).rows.map((r) => r.j as string).sort();
      out.push(`${t}: ${/lease/.test(t) ? rows.length : rows.join(',')}`);
    }
    return out.join('\n');
  } finally {
    await c.end();
  }
}

eachBackend('ephemeral', (setup, name) => {
  async function routed() {
    const secrets = new SecretSet();
    const f = await setup({ secrets });
    return { f, store: new EphemeralRouter(f.store, () => new CoreSessions(new MemoryBackend(), { secrets })) };
  }

  it('a whole ephemeral life changes nothing durable; another instance never sees it; close ends it', async () => {
    const { f, store } = await routed();
    const { sessionId: durable } = await store.create({ title: 'durable' });
    await store.append(durable, [user('kept')]);
    await store.close(durable);
    const before = await durableState(name, f.store);
    const { sessionId } = await store.createEphemeral({ title: 'eph', blobThreshold: 1024 });
    await store.append(sessionId, [user('one'), user('two'), user('x'.repeat(4000))]);
    await store.compact(sessionId, { summary: 's', throughSeq: 1 });
    await store.setState(sessionId, 'k', 1);
    const { turnId } = await store.startTurn(sessionId, 'user');
    await store.transitionTurn(sessionId, turnId, { event: 'finish', outcome: 'completed' });
    const fork = await store.fork(sessionId);
    const records = (await readAll(store, sessionId)).length;
    expect((await readAll(store, fork.sessionId)).length).toBe(records);
    expect((await store.context(sessionId)).messages.length).toBeGreaterThan(0);
    const listed = (await store.list()).sessions;
    expect(listed.slice(0, 2).map((s) => [s.sessionId, s.ephemeral])).toEqual([[fork.sessionId, true], [sessionId, true]]);
    expect(listed.slice(2).map((s) => [s.sessionId, s.ephemeral])).toEqual([[durable, undefined]]);
    expect(await durableState(name, f.store)).toBe(before);
    const other = await f.reopen();
    expect((await other.list()).sessions.map((s) => s.sessionId)).toEqual([durable]);
    await storeError(other.open(sessionId, 'read'), 'SessionNotFound');
    await store.close(sessionId);
    await storeError(store.read(sessionId), 'SessionNotFound');
    expect((await readAll(store, fork.sessionId)).length).toBe(records);
    expect(await durableState(name, f.store)).toBe(before);
    await store.closeAll();
    // closeAll (exit) ends the fork too, and leaves no trace of either (the durable store may
    // save its own list cache then: its rows are durable sessions only)
    const after = await durableState(name, await f.reopen());
    for (const id of [sessionId, fork.sessionId]) expect(after).not.toContain(id);
    if (name === 'file') await storeError(store.read(fork.sessionId), 'SessionNotFound');
  });

  it('one secret set: registered on either side, refused on both', async () => {
    const { store } = await routed();
    const A = 'durable-side-secret-1234';
    const B = 'ephemeral-side-secret-5678';
    const d = (await store.create({}, { values: [A] })).sessionId;
    const e = (await store.createEphemeral({}, { values: [B] })).sessionId;
    await storeError(store.append(e, [user(`a ${A}`)]), 'SecretRejected');
    await storeError(store.append(d, [user(`b ${B}`)]), 'SecretRejected');
    expect(store.scrub(`${A} ${B}`)).not.toMatch(/side-secret/);
    await storeError(store.create({ parent: { sessionId: e, relation: 'fork' } }), 'InvalidArgument');
    await storeError(store.createEphemeral({ parent: { sessionId: d, relation: 'fork' } }), 'InvalidArgument');
    await storeError(store.allocateScratch(e, 'r'), 'InvalidArgument');
  });

  it('closing the last ephemeral session while another is being created keeps the new one', async () => {
    const { store } = await routed();
    const { sessionId: first } = await store.createEphemeral({});
    const making = store.createEphemeral({ title: 'second' });
    await store.close(first);
    const { sessionId } = await making;
    expect(await store.append(sessionId, [user('x')])).toMatchObject({ firstSeq: 1 });
    expect((await store.list()).sessions.map((x) => [x.sessionId, x.ephemeral])).toEqual([[sessionId, true]]);
  });
});
