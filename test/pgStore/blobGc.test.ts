/**
 * Blob GC on PostgreSQL (src/backends/postgres/blobGc.ts): a purge — session/delete purge and
 * trash empty — deletes the blobs nothing left references, in the purge's own transaction, and
 * never a blob another session (live or in the trash) or a state value names, nor one put or
 * touched within the grace period. The races with a writer of another session storing the same
 * bytes, or naming the blob by its ref, are forced with a row lock held by a second connection
 * (a delete of the row, uncommitted, standing for the GC's): the write ends with the blob there.
 */
import { describe, expect, it } from 'vitest';
import { openPostgresBackend, type PostgresBackend } from '../../src/backends/postgres/backend.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { emptyTrash } from '../../src/core/services/trash.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { digestOf } from '../../src/domain/blobRefs.js';
import type { RecordInput } from '../../src/domain/types.js';
import { freshSchema, pgAvailability, sharedCluster } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';
import { sharedPgStores } from './pgStoreKit.js';

const pgSkip = pgAvailability();
const { raw } = sharedPgStores();

const opened: Sessions[] = [];
async function storeWith(schema: string, blobGraceMs: number): Promise<{ s: Sessions; b: PostgresBackend }> {
  const b = await openPostgresBackend({ url: (await sharedCluster()).url, schema, blobGraceMs });
  const s = new Sessions(b, { scratch: scratchAt(tempDir()) });
  opened.push(s);
  return { s, b };
}

/** A record holding `args` at a BlobRef position (a tool call's arguments, protocol §15.4). */
const naming = (args: unknown): RecordInput => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'file', arguments: args }] } } as RecordInput);
const attach = (text: string): RecordInput => naming({ $attach: text });

/** The BlobRef the session's record at `seq` holds (as read back, not inlined). */
async function refAt(s: Sessions, id: string, seq: number): Promise<{ $blob: string; bytes: number }> {
  const page = await s.read(id, { afterSeq: seq - 1, limit: 1 });
  return (page.records[0] as unknown as { message: { toolCalls: Array<{ arguments: { $blob: string; bytes: number } }> } }).message.toolCalls[0]!.arguments;
}

async function has(b: PostgresBackend, ref: { $blob: string }): Promise<boolean> {
  return (await b.blobs.size(digestOf(ref.$blob)!)) !== undefined;
}

describe.skipIf(pgSkip !== null)('blob GC on PostgreSQL', () => {
  it('a purge deletes the blobs only it referenced; another session (live or trashed) or a state value keeps one; trash empty collects the rest', async () => {
    const { s, b } = await storeWith(freshSchema(), 0);
    try {
      const s1 = (await s.create({})).sessionId;
      const s2 = (await s.create({})).sessionId;
      const s3 = (await s.create({})).sessionId;
      await s.append(s1, [attach('shared A'), attach('only in s1 C'), attach('named by state D')]);
      const [a, c, d] = [await refAt(s, s1, 1), await refAt(s, s1, 2), await refAt(s, s1, 3)];
      await s.append(s2, [naming(a)]);
      await s.setState(s3, 'note', { see: d.$blob });
      await s.close(s1);
      await s.delete(s1, true);
      expect([await has(b, a), await has(b, c), await has(b, d)]).toEqual([true, false, true]);
      // In the trash, s2 still references A.
      await s.close(s2);
      await s.delete(s2);
      expect(await has(b, a)).toBe(true);
      expect((await s.getBlob(s3, a.$blob)).bytes.toString()).toBe('shared A');
      const emptied = await emptyTrash(s, {}, Date.now());
      expect(emptied.sessions.map((e) => e.sessionId)).toEqual([s2]);
      expect(await has(b, a)).toBe(false);
      // The last reference (a state value) goes with its session.
      await s.close(s3);
      await s.delete(s3, true);
      expect(await has(b, d)).toBe(false);
    } finally {
      await s.closeAll();
    }
  });

  it('a blob put or touched within the grace period is spared (a writer between its put and its commit)', async () => {
    const schema = freshSchema();
    const { s, b } = await storeWith(schema, 60_000);
    try {
      const s1 = (await s.create({})).sessionId;
      await s.append(s1, [attach('young blob'), attach('old blob')]);
      const young = await refAt(s, s1, 1);
      const old = await refAt(s, s1, 2);
      const db = await raw(schema);
      await db.query(`UPDATE blobs SET created_at = now() - interval '2 hours'`);
      // Another writer stores the young blob's bytes again (its put) and has not committed its record yet.
      await b.blobs.put(Buffer.from('young blob') as never);
      await s.close(s1);
      await s.delete(s1, true);
      expect([await has(b, young), await has(b, old)]).toEqual([true, false]);
    } finally {
      await s.closeAll();
    }
  });

  it('races: a put of the same bytes, or an append naming the blob, that meets the GC\'s delete ends with the blob stored', async () => {
    const schema = freshSchema();
    const { s, b } = await storeWith(schema, 0);
    try {
      const s1 = (await s.create({})).sessionId;
      const s2 = (await s.create({})).sessionId;
      await s.append(s1, [attach('raced by a put'), attach('raced by a ref')]);
      const byPut = await refAt(s, s1, 1);
      const byRef = await refAt(s, s1, 2);
      for (const [ref, record] of [[byPut, attach('raced by a put')], [byRef, naming(byRef)]] as const) {
        const db = await raw(schema);
        // The GC's delete of the row, not yet committed: it holds the row's lock.
        const deleting = db.transaction(async (tx) => {
          await tx.query('DELETE FROM blobs WHERE sha256 = $1', [digestOf(ref.$blob)]);
          await new Promise((r) => setTimeout(r, 400));
        });
        await new Promise((r) => setTimeout(r, 50));
        // The writer: its lookup sees the committed row; its put or touch waits for the lock.
        const appended = s.append(s2, [record]);
        await deleting;
        const done = await appended;
        expect(await has(b, ref), ref.$blob).toBe(true);
        const seq = done.lastSeq;
        const stored = await refAt(s, s2, seq);
        expect(stored.$blob).toBe(ref.$blob);
        expect((await s.getBlob(s2, stored.$blob)).size).toBe(ref.bytes);
      }
    } finally {
      await s.closeAll();
    }
  });
  it('an encrypted store deletes no blob (its references cannot be read in SQL)', async () => {
    const { s, b } = await storeWith(freshSchema(), 0);
    try {
      const s1 = (await s.create({})).sessionId;
      await s.append(s1, [attach('sealed elsewhere')]);
      const ref = await refAt(s, s1, 1);
      Object.defineProperty(b, 'encrypted', { value: true });
      await s.close(s1);
      await s.delete(s1, true);
      expect(await has(b, ref)).toBe(true);
    } finally {
      await s.closeAll();
    }
  });
});
