/**
 * Migration 6: every commit rewrites the `sessions` row, and that update is HOT (heap-only: the
 * new version on the same page, no new index entry) — measured by the server's own counters
 * (pg_stat_user_tables n_tup_hot_upd / n_tup_upd). At version 5 (migration 4's index over
 * last_ts) the same appends are not HOT: the control that shows the measurement can fail. And
 * with many sessions on full pages, the fillfactor is what leaves room for the new version on
 * the same page (control: the table's fillfactor reset to 100).
 * In a database of its own: an old snapshot of another test (a pg_dump, a verify) in the same
 * database would hold back the pruning HOT relies on, and the counts with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { ownDatabase } from '../../pg/ownDatabase.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend as sharedDbBackend, header, newId, pass, pgSkip, recs } from './pgTestKit.js';

let dbUrl: string;
let dropDb: (() => Promise<void>) | undefined;

/** An owner connection set on this file's database; close it after use. */
const ownerConnections = (schema: string) => PgConnections.open({ target: parsePostgresUrl(dbUrl), schema, max: 2 });
async function migrateAsOwner(schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  const c = await ownerConnections(schema);
  try {
    await migrate(c, schema, migrations);
  } finally {
    await c.close();
  }
}
const backend = (o: { schema: string; migrations?: readonly Migration[] }) => sharedDbBackend({ url: dbUrl, ...o });

const N = 200;

/** The columns the append statement (append.ts APPEND) sets on every commit. */
const PER_COMMIT = ['last_seq', 'last_ts', 'record_count', 'stored_bytes', 'turn_text', 'runtime_text', 'first_message', 'last_message', 'header_state', 'usage_text', 'updated_at'];

/** N appends to one session (a realistic snapshot: ~600 bytes of last message), then the table's update counters. */
async function appendAndCount(schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<{ upd: number; hot: number }> {
  const b = await backend({ schema, migrations });
  const id = newId();
  const fence = await b.leases.acquire(id);
  await b.create(header(id), recs(1, 1), pass.snapshot({ turn: null, runtime: null, usage: null, firstMessage: 'first', lastMessage: 'first', header: null }), fence);
  const c = await ownerConnections(schema);
  try {
    const counters = async () => (await c.query<{ upd: string; hot: string }>(
      `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'sessions'`, [schema]))[0];
    const before = await counters();
    expect(Number(before?.upd ?? 0)).toBeLessThan(5);
    // Each append a millisecond after the one before, whatever the clock: every update changes
    // last_ts, as appends a client spaces out do. (With the wall clock, a fast machine put
    // several appends in one millisecond, and at version 5 those few could be HOT.)
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    for (let seq = 1; seq <= N; seq++) {
      const last = `${'the assistant said something of a usual length. '.repeat(12)}${seq}`;
      await b.persist(fence, recs(seq + 1, 1, 'message', 'hello', new Date(t0 + seq).toISOString()), pass.snapshot({ turn: `{"turn":${seq}}`, runtime: null, usage: `{"n":${seq}}`, firstMessage: 'first', lastMessage: last, header: null }),
        { lastSeq: seq, generation: 0 });
    }
    // A backend's statistics reach the shared counters when it is idle for a while or when it
    // ends: closing the backend (its connections) flushes them.
    await b.close();
    for (let i = 0; ; i++) {
      await c.query('SELECT pg_stat_force_next_flush()');
      const now = await counters();
      if (Number(now?.upd ?? 0) >= N) return { upd: Number(now!.upd), hot: Number(now!.hot) };
      if (i > 300) throw new Error(`the statistics never showed ${N} updates: ${JSON.stringify(now)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await c.close();
  }
}

describe.skipIf(pgSkip)('postgres HOT updates of the session row (migration 6)', () => {
  beforeAll(async () => {
    const db = await ownDatabase(`hot_${process.pid}_${Date.now().toString(36)}`);
    dbUrl = db.url;
    dropDb = db.drop;
  });
  afterAll(async () => dropDb?.());

  it(`after ${N} appends at least 90% of the session row updates were HOT; at version 5 (last_ts indexed) most were not`, async () => {
    const current = freshSchema('hot');
    await migrateAsOwner(current);
    const now = await appendAndCount(current);
    expect(now.hot / now.upd).toBeGreaterThanOrEqual(0.9);

    const v5 = freshSchema('hot');
    const upTo5 = MIGRATIONS.filter((m) => m.version <= 5);
    await migrateAsOwner(v5, upTo5);
    const before = await appendAndCount(v5, upTo5);
    // Every append changed the indexed last_ts: none could be HOT.
    expect(before.hot / before.upd).toBeLessThan(0.1);
  }, 120_000);

  it('many sessions on full pages: the fillfactor leaves room for the new versions (HOT); without it about half are not', async () => {
    const counts: Record<string, { upd: number; hot: number }> = {};
    const ROUNDS = 3;
    for (const fillfactor of ['75', 'reset']) {
      const schema = freshSchema('hot');
      await migrateAsOwner(schema);
      const c = await ownerConnections(schema);
      try {
        if (fillfactor === 'reset') await c.query(`ALTER TABLE "${schema}".sessions RESET (fillfactor)`); // the control: pages filled to 100%
        const b = await backend({ schema });
        // Rows of ~1.5 KB (a first and a last message of 700 characters: under the TOAST threshold), 5 to a page.
        const big = 'a first message of some length '.repeat(23).slice(0, 700);
        const ids = Array.from({ length: 100 }, () => newId());
        const fences = [];
        for (const id of ids) {
          const f = await b.leases.acquire(id);
          await b.create(header(id), recs(1, 1), pass.snapshot({ turn: null, runtime: null, usage: null, firstMessage: big, lastMessage: big, header: null }), f);
          fences.push(f);
        }
        // Round robin, as a fleet's sessions are written: every row updated on its page in turn.
        for (let round = 1; round <= ROUNDS; round++) {
          for (const [k, f] of fences.entries()) {
            await b.persist(f, recs(round + 1, 1), pass.snapshot({ turn: `{"round":${round}}`, runtime: null, usage: null, firstMessage: big, lastMessage: `${big}${round} ${k}`, header: null }),
              { lastSeq: round, generation: 0 });
          }
        }
        await b.close();
        for (let i = 0; ; i++) {
          await c.query('SELECT pg_stat_force_next_flush()');
          const [now] = await c.query<{ upd: string; hot: string }>(
            `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'sessions'`, [schema]);
          if (Number(now?.upd ?? 0) >= ROUNDS * ids.length) {
            counts[fillfactor] = { upd: Number(now!.upd), hot: Number(now!.hot) };
            break;
          }
          if (i > 300) throw new Error(`the statistics never showed the updates: ${JSON.stringify(now)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        await c.close();
      }
    }
    expect(counts['75']!.hot / counts['75']!.upd).toBeGreaterThanOrEqual(0.9);
    expect(counts.reset!.hot / counts.reset!.upd).toBeLessThan(0.8);
  }, 180_000);

  it('no index of sessions covers a column every commit changes; the table has fillfactor 75; sessions_by_update is gone', async () => {
    const schema = freshSchema('hot');
    await migrateAsOwner(schema);
    const c = await ownerConnections(schema);
    try {
      const indexes = await c.query<{ name: string; def: string; cols: string[] }>(
        `SELECT ci.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
                ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum = ANY(i.indkey)) AS cols
           FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_class ci ON ci.oid = i.indexrelid JOIN pg_namespace n ON n.oid = t.relnamespace
          WHERE n.nspname = $1 AND t.relname = 'sessions'`, [schema]);
      expect(indexes.map((x) => x.name)).not.toContain('sessions_by_update');
      expect(indexes.length).toBeGreaterThan(0);
      for (const ix of indexes) {
        // Plain columns by number, expressions and predicates by their text.
        for (const col of PER_COMMIT) {
          expect(ix.cols, ix.def).not.toContain(col);
          expect(ix.def, ix.def).not.toMatch(new RegExp(`\\b${col}\\b`));
        }
      }
      const [rel] = await c.query<{ opts: string[] | null }>(
        `SELECT c.reloptions AS opts FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'sessions'`, [schema]);
      expect(rel?.opts).toContain('fillfactor=75');
    } finally {
      await c.close();
    }
  });
});
