/**
 * session/search's candidates in SQL (Backend.searchCandidates): the `message` records of the
 * active generation of live sessions whose text matches the needle, from the cursor on, in
 * (session id, seq) order, LIMITed — the core applies its own match, snippet and scrub to each
 * (src/core/services/searchIndex.ts), so hits are those of the scan, in the same order.
 *
 * The match is a case-SENSITIVE regular expression (`~`) whose every ASCII letter is a bracket
 * of its cases — never ILIKE, whose folding follows the database's locale (a Turkish ctype
 * lowers `I` to `ı`); a bracket of literal characters means the same in every locale. `k` and
 * `s` also match U+212A and U+017F, which JavaScript's 'iu' matching folds to them. Every other
 * character is escaped (`\` + a non-alphanumeric is that character in an ARE), so nothing in a
 * needle is a pattern: `%`, `_`, `.`, `*` match themselves.
 *
 * Why a superset: the core sends only printable ASCII other than `"` and `\`, which JSON text
 * (JSON.stringify: the core's serialization of every stored record) holds as it is; a content
 * string or text part containing the needle then contains it verbatim in the record's text.
 *
 * The index: migration 7 (schema.ts) builds a pg_trgm GIN index over `text` of the message
 * records, which PostgreSQL uses for `~` (its trigrams, then a recheck). Without it (the
 * extension could not be created) the same statement runs over the table: slower, same rows.
 * Only a UTF8 database is searched here (one character a code point, as JavaScript's regex
 * sees it); another encoding answers undefined and the core scans.
 */
import { PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { recordCrc } from './types.js';
import type { CandidatePage, CandidateQuery } from '../../core/port.js';

/** What the core may send: printable ASCII without `"` and `\`. */
export const NEEDLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Beyond either ASCII case, the characters JavaScript makes equal to a letter: 'iu' matching
 * (session/search) folds U+212A to k and U+017F to s; toLowerCase (session/list's query) turns
 * U+212A into k and U+0130 into i + U+0307. (Every code point checked: these are all.)
 */
const FOLDS = { search: { k: '\u212a', s: '\u017f' }, lower: { k: '\u212a', i: '\u0130' } } as const;

/** The ARE that finds `needle` with either case of each ASCII letter (see the header). */
export function needlePattern(needle: string, fold: keyof typeof FOLDS = 'search'): string {
  let out = '';
  for (const ch of needle) {
    if (/[a-zA-Z]/.test(ch)) {
      const lower = ch.toLowerCase();
      out += `[${lower}${lower.toUpperCase()}${(FOLDS[fold] as Record<string, string>)[lower] ?? ''}]`;
    } else if (/[0-9]/.test(ch)) out += ch;
    else out += `\\${ch}`;
  }
  return out;
}

/** Whether the database holds text as UTF-8 (asked once per backend). */
export async function isUtf8(conns: PgConnections): Promise<boolean> {
  const rows = await conns.query<{ enc: string }>(`SELECT current_setting('server_encoding') AS enc`, []);
  return rows[0]?.enc === 'UTF8';
}

/** The candidates statement ($1 after id, $2 after seq, $3 pattern, $4 limit + 1, $5 maxBytes, $6 the ids when `withIds`). */
export function candidateSql(withIds: boolean): string {
  return `WITH c AS (
       SELECT r.session_id, r.generation, r.seq, r.ts, r.kind, r.text, r.crc
         FROM records r JOIN sessions s ON s.session_id = r.session_id
        WHERE s.trashed_at IS NULL AND r.generation = s.generation AND r.seq >= s.first_seq AND r.seq <= s.last_seq
          AND r.kind = 'message' AND r.text ~ $3
          AND (r.session_id COLLATE "C" > $1 COLLATE "C" OR (r.session_id = $1 AND r.seq > $2))
          ${withIds ? 'AND r.session_id = ANY($6::text[])' : ''}
        ORDER BY r.session_id COLLATE "C", r.seq
        LIMIT $4),
     w AS (
       SELECT c.*, sum(octet_length(c.text)) OVER (ORDER BY c.session_id COLLATE "C", c.seq) - octet_length(c.text) AS before, count(*) OVER () AS n FROM c)
     SELECT session_id, generation, seq, ts, kind, text, crc, n FROM w WHERE before < $5 ORDER BY session_id COLLATE "C", seq`;
}

export async function searchCandidates(conns: PgConnections, q: CandidateQuery): Promise<CandidatePage> {
  if (!NEEDLE.test(q.needle)) throw new PgBackendError('InvalidArgument', 'a search needle must be printable ASCII without quotes or backslashes', { path: 'query' });
  const args: unknown[] = [q.after?.sessionId ?? '', q.after?.seq ?? 0, needlePattern(q.needle), q.limit + 1, q.maxBytes ?? Number.MAX_SAFE_INTEGER];
  if (q.sessionIds) args.push(q.sessionIds);
  // (session id, seq) in byte order ("C"), as the core sorts ids (they are ASCII: domain/ids.ts).
  // One more than the limit shows whether there are more (the LIMIT is a top-N sort of the
  // matches); of those, the page is cut in the database (only what is kept is sent) once the
  // text before a row reaches maxBytes; n: the rows before the cut.
  const rows = await conns.query<{ session_id: string; generation: number; seq: string; ts: string; kind: string; text: string; crc: string; n: string }>(
    candidateSql(q.sessionIds !== undefined),
    args,
  );
  const kept = rows.slice(0, q.limit);
  const candidates = kept.map((row) => {
    const record = { seq: Number(row.seq), ts: row.ts, kind: row.kind, text: row.text };
    if (row.crc !== recordCrc(row.session_id, record)) {
      throw new PgBackendError('Corrupt', `record ${record.seq} of generation ${row.generation} fails its checksum`, { sessionId: row.session_id, generation: row.generation, seq: record.seq });
    }
    return { sessionId: row.session_id, record };
  });
  return { candidates, more: kept.length > 0 && Number(kept[0]!.n) > kept.length };
}
