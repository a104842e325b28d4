/**
 * session/search over PostgreSQL's index (src/core/services/searchIndex.ts over
 * src/backends/postgres/search.ts) gives exactly the scan's results: the same hits, snippets,
 * order and cursors, page by page, over a corpus built to separate them — JSON escapes (quotes,
 * backslashes, newlines, control characters), non-ASCII text, the two non-ASCII letters
 * JavaScript's 'iu' folds to ASCII (U+212A, U+017F), case, LIKE's `%` and `_`, regex
 * characters, text parts, other record kinds, a compacted session, a trashed one — with and
 * without `sessionIds` (a missing and a trashed id among them). The scan is the same
 * searchSessions over the same store with its index hidden; that the index path ran is
 * counted, so a silent fallback fails the test.
 */
import { describe, expect, it } from 'vitest';
import { searchSessions, type Searchable } from '../../src/core/services/search.js';
import type { CandidateQuery, RecordInput } from '../../src/domain/types.js';
import type { Sessions } from '../../src/core/sessions/sessions.js';
import { freshSchema, pgAvailability } from '../pg/pgServer.js';
import { sharedPgStores } from './pgStoreKit.js';
import { EphemeralRouter } from '../../src/core/services/ephemeral.js';
import { MemoryBackend } from '../../src/backends/memory/memoryBackend.js';
import { Sessions as SessionsClass } from '../../src/core/sessions/sessions.js';

const pgSkip = pgAvailability();
const { store, raw } = sharedPgStores();

const user = (content: unknown): RecordInput => ({ kind: 'message', message: { role: 'user', content } } as RecordInput);

const TEXTS = [
  'plain needle text', 'NEEDLE upper', 'NeEdLe mixed', 'say "needle" in quotes', 'back\\slash needle\\', 'line one\nneedle two\nline three',
  'tab\tseparated\tneedle', 'control \u0001 char needle', 'café needle naïve', '漢字 needle 漢字', 'emoji 🎉 needle 🎉', 'the \u212Aelvin and lon\u017F t', 'a\u212A\u017F b',
  'ks KS kS', '100% sure', '50 percent', 'a_b underscore', 'aXb not underscore', 'x.y dot', 'x*y star', '(paren) [bracket] {brace}', 'dollar $5 ^caret',
  'slash / and | pipe', 'sss long', 'needleneedleneedle', "apostrophe's needle", 'needle at the very end needle',
];
const QUERIES = [
  'needle', 'NEEDLE', 'k', 's', 'ks', 'K', '%', '_', 'a_b', '100%', 'x.y', 'x*y', '(paren)', '[bracket]', '$5', '^caret', '|', '/', "'s",
  'needle two', 'eedl', '"needle"', 'back\\slash', 'café', 'ſ', '\u212A', '漢字', 'needle\nline', ' ', 'zzz-no-hit',
];

/** The same store as the scan sees it: no index. */
function scanOnly(s: Sessions): Searchable {
  return { list: (o) => s.list(o), read: (id, o) => s.read(id, o), scrub: (t) => s.scrub(t) };
}

/** The store with its index, counting the index's answers. */
function counted(s: Sessions): { store: Searchable; answered: () => number } {
  let n = 0;
  return {
    store: {
      list: (o) => s.list(o), read: (id, o) => s.read(id, o), scrub: (t) => s.scrub(t),
      searchCandidates: async (q: CandidateQuery) => {
        const out = await s.searchCandidates(q);
        if (out !== undefined) n++;
        return out;
      },
    },
    answered: () => n,
  };
}

/** Every page of a search, with its cursor. */
async function pages(s: Searchable, query: string, limit: number, sessionIds?: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 200; i++) {
    let page;
    try {
      page = await searchSessions(s, { query, limit, ...(cursor ? { cursor } : {}), ...(sessionIds ? { sessionIds } : {}) });
    } catch (e) {
      out.push({ error: (e as { kind?: string }).kind, message: (e as Error).message });
      return out;
    }
    out.push(page);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('too many pages');
}

describe.skipIf(pgSkip !== null)('session/search on PostgreSQL: the index gives the scan\'s results', () => {
  it('identical hits, snippets, order and cursors over a varied corpus, with and without sessionIds', { timeout: 120_000 }, async () => {
    const s = await store(freshSchema());
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = (await s.create({ title: `s${i}` })).sessionId;
      ids.push(id);
      const recs: RecordInput[] = [];
      for (let j = 0; j < TEXTS.length; j++) {
        const t = TEXTS[(i * 7 + j) % TEXTS.length]!;
        recs.push(j % 3 === 0 ? user([{ type: 'text', text: t }, { type: 'text', text: `part ${j}` }]) : user(t));
        if (j % 5 === 0) recs.push({ kind: 'event', type: 'needle', payload: `needle ${t}` } as RecordInput);
      }
      await s.append(id, recs);
    }
    // A compacted session: the archived generation is not searched, the copies after the checkpoint are.
    await s.compact(ids[3]!, { throughSeq: 10, summary: 'needle summary' });
    // A trashed session is not searched.
    await s.close(ids[5]!);
    await s.delete(ids[5]!);
    const { store: indexed, answered } = counted(s);
    const scan = scanOnly(s);
    for (const q of QUERIES) {
      for (const limit of [1, 3, 100]) {
        expect(await pages(indexed, q, limit), `${JSON.stringify(q)} limit ${limit}`).toEqual(await pages(scan, q, limit));
      }
      const named = [ids[7]!, ids[1]!, ids[1]!, ids[9]!];
      expect(await pages(indexed, q, 2, named), `${JSON.stringify(q)} named`).toEqual(await pages(scan, q, 2, named));
      // A trashed and a missing id among them: the error comes where the scan's comes.
      const bad = [ids[2]!, ids[5]!, ids[8]!];
      expect(await pages(indexed, q, 4, bad), `${JSON.stringify(q)} trashed`).toEqual(await pages(scan, q, 4, bad));
      const missing = [ids[0]!, '01ZZZZZZZZZZZZZZZZZZZZZZZZ'];
      expect(await pages(indexed, q, 3, missing), `${JSON.stringify(q)} missing`).toEqual(await pages(scan, q, 3, missing));
    }
    // The index answered (the ASCII queries without quotes or backslashes), and found hits.
    expect(answered()).toBeGreaterThan(QUERIES.length * 3);
    expect((await searchSessions(indexed, { query: 'needle', limit: 1000 })).hits.length).toBeGreaterThan(100);
  });

  it('what SQL cannot match as JavaScript does is never asked of it (quotes, backslashes, control characters, non-ASCII)', async () => {
    const s = await store(freshSchema());
    const id = (await s.create({})).sessionId;
    await s.append(id, [user('say "hi" \\ there café ſ')]);
    const { store: indexed, answered } = counted(s);
    for (const q of ['"hi"', '\\', 'café', 'ſ', 'a\tb']) await searchSessions(indexed, { query: q });
    expect(answered()).toBe(0);
    await searchSessions(indexed, { query: 'there' });
    expect(answered()).toBe(1);
  });

  it('reads its own writes: records appended just before the search are hits', async () => {
    const s = await store(freshSchema());
    const id = (await s.create({})).sessionId;
    const appended = Array.from({ length: 20 }, (_, i) => s.append(id, [user(`fresh needle ${i}`)]));
    const { store: indexed, answered } = counted(s);
    const hits = await searchSessions(indexed, { query: 'fresh needle' });
    await Promise.all(appended);
    expect(hits.hits.length).toBe(20);
    expect(answered()).toBe(1);
  });

  it('the search statement uses the index: EXPLAIN over 2,000 sessions × 20 records shows the trigram index', { timeout: 120_000 }, async () => {
    const schema = freshSchema();
    await store(schema);
    const db = await raw(schema);
    // Rows in bulk (through SQL: this measures the planner, not the append path): 2,000 sessions × 20 message records.
    await db.query(`INSERT INTO sessions (session_id, header_text, header_crc, created_at, last_seq, record_count)
      SELECT 'S' || lpad(g::text, 6, '0'), '{}', 'x', '2026-01-01T00:00:00.000Z', 20, 20 FROM generate_series(1, 2000) g`);
    await db.query(`INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
      SELECT 'S' || lpad(g::text, 6, '0'), 0, k, '2026-01-01T00:00:00.000Z', 'message',
             '{"kind":"message","message":{"role":"user","content":"filler ' || md5(g::text || '/' || k::text) || '"}}', 'x'
        FROM generate_series(1, 2000) g, generate_series(1, 20) k`);
    await db.query('ANALYZE sessions');
    await db.query('ANALYZE records');
    const idx = await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'records_message_trgm'`, [schema]);
    expect(idx.map((r) => r.indexdef).join()).toContain('gin_trgm_ops');
    const { candidateSql, needlePattern } = await import('../../src/backends/postgres/search.js');
    // The planner picks the trigram index by itself for the very statement the search runs.
    const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${candidateSql(false)}`, ['', 0, needlePattern('unlikely-needle'), 201, 16 << 20]);
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Bitmap Index Scan on records_message_trgm[^\n]*\n\s*Index Cond: \(text ~/);
  });
  it('with ephemeral sessions in the process the search reads every session (they are in no index): their hits are there', async () => {
    const s = await store(freshSchema());
    const router = new EphemeralRouter(s, () => new SessionsClass(new MemoryBackend()));
    const durable = (await router.create({})).sessionId;
    await router.append(durable, [user('durable needle')]);
    const eph = (await router.createEphemeral({})).sessionId;
    await router.append(eph, [user('ephemeral needle')]);
    const all = await searchSessions(router, { query: 'needle' });
    expect(all.hits.map((h) => h.sessionId).sort()).toEqual([durable, eph].sort());
    expect(await router.searchCandidates({ needle: 'needle', limit: 10 })).toBeUndefined();
    await router.close(eph);
    expect((await router.searchCandidates({ needle: 'needle', limit: 10 }))!.candidates.map((c) => c.sessionId)).toEqual([durable]);
    await router.closeAll();
  });
});
