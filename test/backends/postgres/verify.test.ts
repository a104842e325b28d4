import { describe, expect, it } from 'vitest';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, pgUrl, recs, snap, pass } from './pgTestKit.js';

describe.skipIf(pgSkip)('postgres verify', () => {
  it('a healthy store verifies clean; each kind of damage is reported where it is, and verification goes on', async () => {
    const schema = freshSchema();
    const b = await backend({ schema });
    const raw = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema });
    try {
      const ids = [newId(), newId(), newId(), newId()];
      for (const id of ids) {
        const f = await b.leases.acquire(id);
        await b.create(header(id), recs(1, 4), snap(), f);
        await b.state.set(f, pass.stateEntry({ key: 'k', text: '"v"' }));
        if (id === ids[3]) {
          const cp = pass.checkpoint({ seq: 2, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint"}' });
          await b.rotate(f, { throughSeq: 2, checkpoint: cp, expect: { lastSeq: 4, generation: 0 } });
        }
      }
      const ref = await b.blobs.put(pass.blob(Buffer.from('some blob')));
      const clean = await b.verify();
      expect(clean).toMatchObject({ sessions: 4, records: 4 * 4 + 3, blobs: 1, stateValues: 4, leases: 4, issues: [] });

      await raw.query(`UPDATE records SET text = text || ' ' WHERE session_id = $1 AND seq = 2`, [ids[0]]);
      await raw.query(`INSERT INTO records SELECT session_id, generation, 5, ts, kind, text, crc FROM records WHERE session_id = $1 AND seq = 4`, [ids[1]]);
      await raw.query(`UPDATE state_values SET text = '"w"' WHERE session_id = $1`, [ids[2]]);
      await raw.query(`UPDATE records SET crc = '00000000' WHERE session_id = $1 AND generation = 0 AND seq = 1`, [ids[3]]);
      await raw.query(`UPDATE blobs SET bytes = 'other'::bytea WHERE sha256 = $1`, [ref.sha256]);
      const r = await b.verify();
      expect(r.issues).toEqual(expect.arrayContaining([
        { problem: 'corrupt', sessionId: ids[0], generation: 0, seq: 2 },
        { problem: 'lastSeqMismatch', sessionId: ids[1], generation: 0 },
        { problem: 'recordCountMismatch', sessionId: ids[1], generation: 0 },
        { problem: 'stateChecksum', sessionId: ids[2] },
        { problem: 'corrupt', sessionId: ids[3], generation: 0, seq: 1 },
        { problem: 'blobChecksum', sha256: ref.sha256 },
      ]));
      expect(r.issues).toHaveLength(6);
    } finally {
      await raw.close();
    }
  });
});
