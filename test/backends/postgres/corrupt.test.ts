import { describe, expect, it } from 'vitest';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, pgUrl, recs, snap, pass } from './pgTestKit.js';

/** A backend on a fresh schema plus a raw connection to damage its tables with. */
async function setup() {
  const schema = freshSchema();
  const b = await backend({ schema });
  const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
  const id = newId();
  const fence = await b.leases.acquire(id);
  await b.create(header(id), recs(1, 5), snap(), fence);
  return { b, raw, id, fence };
}

describe.skipIf(pgSkip)('postgres: damage in the database is Corrupt, never returned', () => {
  it('a record whose text was changed in the table fails its checksum', async () => {
    const { b, raw, id } = await setup();
    try {
      await raw.query(`UPDATE records SET text = replace(text, 'hello 3', 'HELLO 3') WHERE session_id = $1 AND seq = 3`, [id]);
      await expect(b.readRange(id, { limit: 100 })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 3, generation: 0 } });
      // Reads that stop before the damage still work; reads that would return it never do.
      expect((await b.readRange(id, { limit: 2 })).records.map((r) => r.seq)).toEqual([1, 2]);
      await expect(b.readRange(id, { afterSeq: 2, limit: 1 })).rejects.toMatchObject({ kind: 'Corrupt' });
      await expect(b.readRange(id, { limit: 100, kinds: ['message'] })).rejects.toMatchObject({ kind: 'Corrupt' });
    } finally {
      await raw.close();
    }
  });

  it('a flipped crc, a moved seq or a changed kind are each Corrupt', async () => {
    const { b, raw, id } = await setup();
    try {
      await raw.query(`UPDATE records SET crc = 'deadbeef' WHERE session_id = $1 AND seq = 2`, [id]);
      await expect(b.readRange(id, { limit: 100 })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 2 } });
      const id2 = newId();
      const f2 = await b.leases.acquire(id2);
      await b.create(header(id2), recs(1, 3), snap(), f2);
      await raw.query(`UPDATE records SET kind = 'api' WHERE session_id = $1 AND seq = 1`, [id2]);
      await expect(b.readRange(id2, { limit: 100, kinds: ['api'] })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 1 } });
      const id3 = newId();
      const f3 = await b.leases.acquire(id3);
      await b.create(header(id3), recs(1, 3), snap(), f3);
      await raw.query(`UPDATE records SET seq = 10 WHERE session_id = $1 AND seq = 3`, [id3]);
      await expect(b.readRange(id3, { afterSeq: 2, limit: 100 })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 3 } });
    } finally {
      await raw.close();
    }
  });

  it('a missing record in the middle is Corrupt (seqs must follow one by one)', async () => {
    const { b, raw, id } = await setup();
    try {
      await raw.query('DELETE FROM records WHERE session_id = $1 AND seq = 2', [id]);
      await expect(b.readRange(id, { limit: 100 })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 2 } });
      await raw.query('DELETE FROM records WHERE session_id = $1 AND seq = 5', [id]);
      await expect(b.readRange(id, { afterSeq: 3, limit: 100 })).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 5 } });
    } finally {
      await raw.close();
    }
  });

  it('a changed header, state value or blob is Corrupt', async () => {
    const { b, raw, id, fence } = await setup();
    try {
      await b.state.set(fence, pass.stateEntry({ key: 'k', text: '"value"' }));
      const ref = await b.blobs.put(pass.blob(Buffer.from('blob bytes')));
      await raw.query(`UPDATE state_values SET text = '"other"' WHERE session_id = $1`, [id]);
      await expect(b.state.get(id, 'k')).rejects.toMatchObject({ kind: 'Corrupt' });
      await raw.query(`UPDATE blobs SET bytes = 'blob bytez'::bytea WHERE sha256 = $1`, [ref.sha256]);
      await expect(b.blobs.read(ref.sha256)).rejects.toMatchObject({ kind: 'Corrupt' });
      await raw.query(`UPDATE sessions SET header_text = replace(header_text, 'test', 'tost') WHERE session_id = $1`, [id]);
      await expect(b.load(id)).rejects.toMatchObject({ kind: 'Corrupt', details: { seq: 0 } });
      await expect(b.list({ limit: 10 })).rejects.toMatchObject({ kind: 'Corrupt' });
    } finally {
      await raw.close();
    }
  });
});
