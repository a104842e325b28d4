/**
 * Secrets never reach the database: after refused appends (in several encodings), a refused
 * state value and a refused header, every row of every table of the store's schema is read
 * back as text and searched for the secret and its encodings. (The conformance suite's
 * "nothing written" checks look at the store directory, which on this backend holds only
 * local scratch: this is the check that covers the database.)
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { parsePostgresUrl } from '../../src/backends/postgres/url.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { StoreError } from '../../src/domain/errors.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';

const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

const SECRET = 'tok-9f8e7d6c5b4a39281706';
const ENCODINGS = [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('hex'), encodeURIComponent(`x=${SECRET}`)];

async function allText(url: string, schema: string): Promise<string> {
  const t = parsePostgresUrl(url);
  const client = new pg.Client({ host: t.host, port: t.port, user: t.user, database: t.database });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema]);
    expect(tables.rows.map((r) => r.tablename)).toEqual(expect.arrayContaining(['sessions', 'records', 'blobs', 'state_values']));
    let out = '';
    for (const { tablename } of tables.rows) {
      const rows = await client.query(`SELECT t::text AS row FROM "${schema}"."${tablename}" t`);
      out += rows.rows.map((r: { row: string }) => r.row).join('\n');
    }
    return out;
  } finally {
    await client.end();
  }
}

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return (err as StoreError).kind;
  }
  return 'accepted';
}

describe.skipIf(pgSkip)('PostgreSQL store: secrets', () => {
  it('no registered secret, in any encoding, reaches any table; clean records around it are stored', async () => {
    const url = (await sharedCluster()).url;
    const schema = freshSchema('s');
    const store = new Sessions(await openPostgresBackend({ url, schema }), { scratch: scratchAt(tempDir()) });
    try {
      const { sessionId } = await store.create({ title: 'guarded' }, { values: [SECRET] });
      await store.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'clean before' } }]);
      for (const text of [SECRET, `token=${Buffer.from(SECRET).toString('base64')}`, Buffer.from(SECRET).toString('hex'), `u?x=${encodeURIComponent(SECRET)}`]) {
        expect(await refused(store.append(sessionId, [{ kind: 'message', message: { role: 'user', content: text } }]))).toBe('SecretRejected');
      }
      expect(await refused(store.append(sessionId, [{ kind: 'toolStream', toolSeq: 1, stream: 'stdout', dataBase64: Buffer.from(`out ${SECRET}`).toString('base64') }])))
        .not.toBe('accepted');
      expect(await refused(store.setState(sessionId, 'k', { v: SECRET }))).toBe('SecretRejected');
      expect(await refused(store.create({ title: `t ${SECRET}` }))).toBe('SecretRejected');
      expect(await refused(store.compact(sessionId, { summary: `s ${SECRET}`, throughSeq: 1 }))).toBe('SecretRejected');
      // A large string goes to a blob: it is checked before it is stored.
      expect(await refused(store.append(sessionId, [{ kind: 'message', message: { role: 'tool', content: `${'a'.repeat(300_000)} ${SECRET}` } }]))).toBe('SecretRejected');
      await store.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'clean after' } }]);
      const dump = await allText(url, schema);
      expect(dump).toContain('clean before');
      expect(dump).toContain('clean after');
      for (const e of ENCODINGS) expect(dump).not.toContain(e);
    } finally {
      await store.closeAll();
    }
  });

  it('the second net: a write handed to the backend without the store\'s gate (a forgotten call site) is refused before it is sent', async () => {
    const url = (await sharedCluster()).url;
    const schema = freshSchema('n');
    const db = await openPostgresBackend({ url, schema });
    const store = new Sessions(db, { scratch: scratchAt(tempDir()) });
    try {
      const { sessionId } = await store.create({ title: 'netted' }, { values: [SECRET] });
      // The backend's own create, called as a write path that forged the gate's brand would call it.
      const header = { sessionId: 'net-probe', createdAt: new Date().toISOString(), text: JSON.stringify({ sessionId: 'net-probe', title: `x ${SECRET}` }) };
      const empty = { turn: null, runtime: null, usage: null, firstMessage: `user: ${SECRET}`, lastMessage: null, header: null };
      const err = await db.create(header as never, [], empty as never).then(() => undefined, (e: unknown) => e as { kind?: string; message: string });
      expect(err?.kind).toBe('SecretRejected');
      expect(err?.message).not.toContain(SECRET);
      const dump = await allText(url, schema);
      expect(dump).not.toContain('net-probe');
      for (const e of ENCODINGS) expect(dump).not.toContain(e);
      expect((await store.list({})).sessions.map((x) => x.sessionId)).toEqual([sessionId]);
    } finally {
      await store.closeAll();
    }
  });
});
