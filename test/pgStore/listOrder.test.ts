/**
 * session/list on PostgreSQL reads its rows in list order from the cursor on: the order is
 * JavaScript's string order of (updatedAt, sessionId), newest first, also among sessions whose
 * updatedAt is the same to the millisecond and whose ids differ in case and punctuation only
 * (a database collation would order those otherwise). No index serves that order since
 * migration 6 (an index over what every commit changes makes each commit's row update non-HOT):
 * a page is a scan with a top-N sort.
 */
import { describe, expect, it } from 'vitest';
import { textCrc } from '../../src/backends/postgres/types.js';
import { freshSchema, pgAvailability } from '../pg/pgServer.js';
import { sharedPgStores } from './pgStoreKit.js';

const pgSkip = pgAvailability();
const { store, raw: rawConnections } = sharedPgStores();

describe.skipIf(pgSkip)('PostgreSQL store: session/list order', () => {
  it('ties on updatedAt go by session id in byte order; every page continues where the last stopped', async () => {
    const schema = freshSchema('lo');
    const s = await store(schema);
    const ids = ['a-1', 'B.2', 'b_3', 'A-1', 'z', 'Z', '0', 'a.1', 'ab', 'aB', 'AB'];
    const made: string[] = [];
    for (let i = 0; i < ids.length; i++) made.push((await s.create({ title: `t${i}` })).sessionId);
    await s.closeAll();
    const raw = await rawConnections(schema);
    // ids that differ in case and punctuation (session ids may be any of [A-Za-z0-9._-]), all
    // with the same updatedAt (as sessions created in one millisecond)
    await raw.query('DELETE FROM leases');
    for (let i = 0; i < ids.length; i++) {
      const [row] = await raw.query<{ header_text: string }>('SELECT header_text FROM sessions WHERE session_id = $1', [made[i]]);
      const text = JSON.stringify({ ...(JSON.parse(row!.header_text) as object), sessionId: ids[i] }); // resealed under the new id
      await raw.query('UPDATE sessions SET session_id = $1, header_text = $2, header_crc = $3 WHERE session_id = $4', [ids[i], text, textCrc(ids[i]!, text), made[i]]);
    }
    await raw.query(`UPDATE sessions SET created_at = '2026-01-01T00:00:00.000Z', last_ts = NULL`);
    // columns in a linguistic collation (ICU's root locale: a < A < b), as a database created
    // with a non-C locale would have them; the store must not depend on it
    const icu = await raw.query(`SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu'`);
    expect(icu.length).toBe(1);
    await raw.query('ALTER TABLE records DROP CONSTRAINT IF EXISTS records_session_id_fkey');
    await raw.query('ALTER TABLE sessions ALTER COLUMN session_id TYPE text COLLATE "und-x-icu"');
    const lister = await store(schema);
    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await lister.list({ limit: 3, ...(cursor ? { cursor } : {}) });
      pages.push(...page.sessions.map((x) => x.sessionId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual([...ids].sort((x, y) => (x < y ? 1 : -1)));
    const plan = await raw.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT session_id FROM sessions WHERE trashed_at IS NULL
       ORDER BY GREATEST(COALESCE(last_ts, created_at) COLLATE "C", created_at COLLATE "C") DESC, session_id COLLATE "C" DESC LIMIT 3`);
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/top-N heapsort|Sort/i);
    const gone = await raw.query(`SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'sessions_by_update'`, [schema]);
    expect(gone).toEqual([]);
  });
});
