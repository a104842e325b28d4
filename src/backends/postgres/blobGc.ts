/**
 * Blob GC: a purge (session/delete purge, trash empty) deletes, in its own transaction, the
 * blobs the purged session referenced that nothing left references — no record of any
 * generation of any session, no state value, no header or snapshot text. Crash-safe: the
 * purge and the blob deletes commit together or not at all (no blob deleted for a session that
 * stays; no blob of a purged session left unless something else still names it).
 *
 * References are found as the text `sha256:<64 hex>` (domain/blobRefs.ts: a BlobRef names its
 * blob so, and nothing else in stored text has to look like one): anything that merely looks
 * like a reference keeps its blob — the safe direction.
 *
 * Races with writers of other sessions (content-addressed: a put of the same bytes, or an
 * append naming an existing blob, while a purge deletes it). Every blob a record will name is
 * put or touched (blobs.put / blobs.touch, runtime.ts: `created_at` is set to now() by both, so
 * it means "last stored or vouched for") before the record's transaction; the delete spares
 * blobs touched less than `graceMs` ago. Row by row:
 * - a put/touch that committed before the delete looked at the row: recent, spared (PostgreSQL
 *   re-checks the WHERE on the newer row version when the delete meets it);
 * - one that comes after the delete locked the row waits for it: the put then inserts the row
 *   afresh (ON CONFLICT found no row), the touch finds none and reports it missing, and the core
 *   puts those bytes again before its commit (core/sessions/blobs.ts);
 * - a record that committed before the delete's snapshot is seen referencing it: spared.
 * What is left: a writer whose commit comes more than `graceMs` (default 1 h) after its put or
 * touch. STORAGE.md says so.
 */
import type { Tx } from './pool.js';

/** A blob put or touched less than this long ago is never deleted (see the header). */
export const BLOB_GRACE_MS = 3_600_000;

const REF = `'sha256:([0-9a-f]{64})'`;

/** The blobs the session's stored texts name (run before its rows are deleted). */
export async function blobsOf(tx: Tx, sessionId: string): Promise<string[]> {
  const rows = await tx.query<{ sha: string }>(
    `SELECT DISTINCT m[1] AS sha FROM (
        SELECT text FROM records WHERE session_id = $1 AND strpos(text, 'sha256:') > 0
        UNION ALL SELECT text FROM state_values WHERE session_id = $1 AND strpos(text, 'sha256:') > 0
        UNION ALL SELECT concat_ws(' ', header_text, header_state, turn_text, runtime_text, first_message, last_message) FROM sessions WHERE session_id = $1
      ) t(text), regexp_matches(t.text, ${REF}, 'g') m`,
    [sessionId],
  );
  return rows.map((r) => r.sha);
}

/** Deletes those of `shas` nothing references any more and nobody put or touched in the grace period; the ones deleted. */
export async function deleteUnreferenced(tx: Tx, shas: readonly string[], graceMs: number): Promise<string[]> {
  if (shas.length === 0) return [];
  // A reference check reads the tables (once per candidate): no time limit for it here.
  await tx.query('SET LOCAL statement_timeout = 0');
  const rows = await tx.query<{ sha256: string }>(
    `DELETE FROM blobs b
      WHERE b.sha256 = ANY($1::text[]) AND b.created_at < now() - make_interval(secs => $2::double precision / 1000)
        AND NOT EXISTS (SELECT 1 FROM records r WHERE strpos(r.text, b.sha256) > 0)
        AND NOT EXISTS (SELECT 1 FROM state_values v WHERE strpos(v.text, b.sha256) > 0)
        AND NOT EXISTS (SELECT 1 FROM sessions s
                         WHERE strpos(concat_ws(' ', s.header_text, s.header_state, s.turn_text, s.runtime_text, s.first_message, s.last_message), b.sha256) > 0)
      RETURNING b.sha256`,
    [shas, graceMs],
  );
  return rows.map((r) => r.sha256);
}
