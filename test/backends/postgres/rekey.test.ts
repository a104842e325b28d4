/**
 * Rekey of a PostgreSQL store (src/backends/postgres/rekey.ts) against a real server:
 * plaintext → key → key2 → plaintext, each cut short after a few committed pages (a crash
 * there) and resumed; the store refused meanwhile; every value readable after; a serving
 * sidecar refuses the rekey.
 */
import { randomBytes } from 'node:crypto';
import pgLib from 'pg';
import { describe, expect, it } from 'vitest';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { Sessions } from '../../../src/core/sessions/sessions.js';
import { scratchAt } from '../../../src/scratch/localScratch.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { rekeyPgStore, RekeyStopped, type PgRekeyOptions } from '../../../src/backends/postgres/rekey.js';
import { tempDir } from '../../helpers.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, pgSkip, pgUrl } from './pgTestKit.js';
import { sql } from './pgTestKit.js';

const MARK = 'QWPX-rekey-marker';
const key = new StoreKey(randomBytes(32));
const key2 = new StoreKey(randomBytes(32));

async function rekey(schema: string, o: PgRekeyOptions) {
  const conns = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema, max: 2, applicationName: 'session-sidecar-rekey' });
  try {
    return await rekeyPgStore(conns, schema, o);
  } finally {
    await conns.close();
  }
}

async function core(schema: string, k: StoreKey | null): Promise<Sessions> {
  const db = await backend({ schema, ...(k ? { encryptionKey: k } : {}) });
  return new Sessions(db, { scratch: scratchAt(tempDir('pgrekey-')) });
}

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return `${(e as { kind?: string }).kind}/${String((e as { details?: { reason?: unknown } }).details?.reason)}`;
  }
}

/** What a reader sees of the store: every session's title, records, state, blob. */
async function observe(s: Sessions, ids: string[]): Promise<unknown> {
  const out: unknown[] = [];
  for (const id of ids) {
    const page = await s.read(id, { inline: true, limit: 1000 });
    const hist = await s.read(id, { generation: 0, inline: true, limit: 1000 });
    out.push({ title: (await s.open(id, 'read')).title, records: page.records, hist: hist.records, state: await s.getState(id, 'k') });
  }
  return out;
}

/** How many values are under each key id (null: plaintext), over every sealed column. */
async function keyCounts(schema: string): Promise<Record<string, number>> {
  const rows = await sql<{ k: string | null; n: string }>(`
    SELECT k, count(*) AS n FROM (
      SELECT substring(text from '^ss-sealed:([0-9a-f]{32}):') AS k FROM ${schema}.records
      UNION ALL SELECT substring(header_text from '^ss-sealed:([0-9a-f]{32}):') FROM ${schema}.sessions
      UNION ALL SELECT substring(text from '^ss-sealed:([0-9a-f]{32}):') FROM ${schema}.state_values) v GROUP BY k`);
  return Object.fromEntries(rows.map((r) => [r.k ?? 'plain', Number(r.n)]));
}

describe.skipIf(pgSkip !== null)(`PostgreSQL rekey${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('plaintext → key → key2 → plaintext, each interrupted after some pages and resumed; refused meanwhile; nothing lost', async () => {
    const schema = freshSchema('rekey');
    const s = await core(schema, null);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { sessionId } = await s.create({ title: `t${i} ${MARK}`, blobThreshold: 1024 });
      for (let j = 0; j < 4; j++) await s.append(sessionId, [{ kind: 'note', text: `${MARK} ${i}.${j}` }]);
      await s.append(sessionId, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: `${MARK} `.repeat(100) + i }] } }]); // a blob: a BlobRef position
      await s.setState(sessionId, 'k', { v: `${MARK} ${i}` });
      await s.compact(sessionId, { summary: `sum ${MARK}`, throughSeq: 2 });
      ids.push(sessionId);
    }
    const before = await observe(s, ids);
    await s.closeAll();

    // Encrypt, cut short after 3 committed pages of 2 rows.
    await expect(rekey(schema, { to: key, pageSize: 2, stopAfterPages: 3 })).rejects.toBeInstanceOf(RekeyStopped);
    const mixed = await keyCounts(schema);
    expect(mixed[key.id]).toBeGreaterThan(0);
    expect(mixed.plain).toBeGreaterThan(0);
    for (const k of [null, key]) expect(await reason(core(schema, k))).toBe('KeyMismatch/rekeyUnfinished');
    // Resumed with other keys: refused, nothing changed.
    expect(await reason(rekey(schema, { to: key2 }))).toBe('KeyMismatch/rekeyUnfinished');
    const done = await rekey(schema, { to: key, pageSize: 2 });
    expect(done.skipped).toBeGreaterThan(0);
    expect(Object.keys(await keyCounts(schema))).toEqual([key.id]);
    const t = await core(schema, key);
    expect(await observe(t, ids)).toEqual(before);
    expect((await (t.port as unknown as { verify(): Promise<{ issues: unknown[] }> }).verify()).issues).toEqual([]);
    await t.closeAll();
    const dump = (await sql<{ d: string }>(`SELECT string_agg(t::text, ' ') AS d FROM (SELECT text FROM ${schema}.records UNION ALL SELECT header_text FROM ${schema}.sessions
      UNION ALL SELECT coalesce(turn_text,'') || coalesce(last_message,'') || coalesce(first_message,'') || coalesce(usage_text,'') || coalesce(runtime_text,'') || coalesce(header_state,'') FROM ${schema}.sessions
      UNION ALL SELECT text FROM ${schema}.state_values UNION ALL SELECT encode(bytes, 'escape') FROM ${schema}.blobs) t`))[0]!.d;
    expect(dump).not.toContain('QWPX');
    // Again: nothing to do.
    expect(await rekey(schema, { to: key })).toMatchObject({ rewritten: 0, skipped: 0 });

    // key → key2: the --from key must be the store's.
    expect(await reason(rekey(schema, { from: key2, to: new StoreKey(randomBytes(32)) }))).toBe('KeyMismatch/wrongKey');
    expect(await reason(rekey(schema, { to: key2 }))).toBe('KeyMismatch/wrongKey'); // no --from for an encrypted store
    await expect(rekey(schema, { from: key, to: key2, pageSize: 2, stopAfterPages: 5 })).rejects.toBeInstanceOf(RekeyStopped);
    const both = await keyCounts(schema);
    expect(both[key.id]).toBeGreaterThan(0);
    expect(both[key2.id]).toBeGreaterThan(0);
    await rekey(schema, { from: key, to: key2, pageSize: 2 });
    expect(await reason(core(schema, key))).toBe('KeyMismatch/wrongKey');
    const u = await core(schema, key2);
    expect(await observe(u, ids)).toEqual(before);
    await u.closeAll();

    // key2 → plaintext.
    await expect(rekey(schema, { from: key2, pageSize: 2, stopAfterPages: 2 })).rejects.toBeInstanceOf(RekeyStopped);
    await rekey(schema, { from: key2, pageSize: 2 });
    expect(await sql(`SELECT * FROM ${schema}.store_encryption`)).toEqual([]);
    expect(Object.keys(await keyCounts(schema))).toEqual(['plain']);
    const v = await core(schema, null);
    expect(await observe(v, ids)).toEqual(before);
    expect((await (v.port as unknown as { verify(): Promise<{ issues: unknown[] }> }).verify()).issues).toEqual([]);
    await v.closeAll();
  });

  it('a serving sidecar (even one holding no lease) refuses the rekey before anything changes; a rekey running refuses a start', async () => {
    const schema = freshSchema('rekey');
    const s = await core(schema, key);
    const { sessionId } = await s.create({ title: 'x' });
    await s.closeAll();
    const serving = await backend({ schema, encryptionKey: key });
    expect(await reason(rekey(schema, { from: key, to: key2 }))).toBe('SessionLocked/storeServed');
    expect(await sql(`SELECT key_id, rekeying FROM ${schema}.store_encryption`)).toEqual([{ key_id: key.id, rekeying: false }]);
    await serving.close();
    // A read-only inspection takes no serving lock: it does not block the rekey.
    const inspecting = await backend({ schema, encryptionKey: key, readOnly: true });
    expect(await inspecting.load(sessionId)).toMatchObject({ sessionId });
    await inspecting.close();
    // While a rekey holds the lock, a writer cannot start.
    const lock = new pgLib.Client({ connectionString: await pgUrl() });
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock($1, hashtext($2))', [0x73737376, schema]);
      expect(await reason(backend({ schema, encryptionKey: key }))).toBe('KeyMismatch/rekeyInProgress');
    } finally {
      await lock.end();
    }
    // A writer that lost its LISTEN connection (so its serving lock) while a rekey starts: its fence
    // ends with the rekey's takeover of every lease, so it leaves nothing under the old key.
    const writer = await backend({ schema, encryptionKey: key });
    const fence = await writer.leases.acquire(sessionId);
    await (writer as unknown as { listener: { stop(): Promise<void> } }).listener.stop();
    const { pass, recs, snap } = await import('./pgTestKit.js');
    void pass;
    const row = await writer.load(sessionId);
    await rekey(schema, { from: key, to: key2 });
    expect(await reason(writer.persist(fence, recs(row.lastSeq + 1, 1), snap(), { lastSeq: row.lastSeq, generation: row.generation }))).toBe('LeaseLost/undefined');
    expect(await reason(writer.state.set(fence, pass.stateEntry({ key: 'k', text: '{"value":1}\n' })))).toBe('LeaseLost/undefined');
    expect(await sql(`SELECT count(*)::int AS n FROM ${schema}.records WHERE text NOT LIKE $1`, [`ss-sealed:${key2.id}:%`])).toEqual([{ n: 0 }]);
    expect((await (await core(schema, key2)).open(sessionId, 'read')).title).toBe('x');
  });
});
