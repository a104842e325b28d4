import { describe, expect, it } from 'vitest';
import { mapPgError, PgBackendError } from '../../../src/backends/postgres/errors.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { pgSkip, pgUrl } from './pgTestKit.js';

const SECRET = 'sk-live-9f8e7d6c5b4a3210fedcba9876543210';

/** Everything an error could show: message, details, stack, own enumerable members, cause. */
function allTextOf(e: PgBackendError): string {
  return JSON.stringify({ m: e.message, d: e.details, s: e.stack, own: Object.entries(e), cause: (e as { cause?: unknown }).cause ?? null });
}

describe('postgres error mapping', () => {
  it('maps SQLSTATEs and driver failures to protocol kinds; Unavailable carries retry advice and the outcome', () => {
    const cases: [unknown, string, string, Record<string, unknown>][] = [
      [{ code: '57P01', severity: 'ERROR' }, 'write', 'Unavailable', { reason: 'serverShutdown', retryable: true, outcome: 'notWritten' }],
      [{ code: '53300', severity: 'ERROR' }, 'read', 'Unavailable', { reason: 'tooManyConnections', retryable: true }],
      [{ code: '08006', severity: 'ERROR' }, 'commit', 'Unavailable', { reason: 'connection', outcome: 'unknown' }],
      [{ code: 'ECONNREFUSED' }, 'write', 'Unavailable', { reason: 'connection', outcome: 'notWritten' }],
      [{ code: 'EPIPE' }, 'commit', 'Unavailable', { reason: 'connection', outcome: 'unknown' }],
      [new Error('Connection terminated unexpectedly'), 'commit', 'Unavailable', { outcome: 'unknown' }],
      [{ code: '28P01', severity: 'ERROR' }, 'read', 'Unavailable', { reason: 'authentication', retryable: false }],
      [{ code: '40001', severity: 'ERROR' }, 'write', 'Conflict', { reason: 'serialization' }],
      [{ code: '40P01', severity: 'ERROR' }, 'write', 'Conflict', { reason: 'serialization' }],
      [{ code: '23505', severity: 'ERROR' }, 'write', 'Conflict', { reason: 'uniqueViolation' }],
      [{ code: '42P01', severity: 'ERROR' }, 'read', 'UnsafeStore', { reason: 'schema' }],
      [{ code: '22P02', severity: 'ERROR' }, 'write', 'NotWritten', { reason: 'dataRejected' }],
      [new Error('something else entirely'), 'write', 'Unavailable', { reason: 'unexpectedError', outcome: 'notWritten' }],
      // An errno of five capitals is not a SQLSTATE: only server errors (with a severity) carry one.
      [{ code: 'EPERM' }, 'write', 'Unavailable', { reason: 'unexpectedError' }],
    ];
    for (const [err, phase, kind, details] of cases) {
      const m = mapPgError(err, phase as 'read');
      expect(m.kind, JSON.stringify(err)).toBe(kind);
      expect(m.details).toMatchObject(details);
    }
    const own = new PgBackendError('LeaseLost', 'x');
    expect(mapPgError(own, 'write')).toBe(own);
  });

  it('never forwards driver text, even a message quoting a secret', () => {
    const fake = Object.assign(new Error(`invalid input syntax for type integer: "${SECRET}"`), {
      code: '22P02', severity: 'ERROR', detail: `Key (text)=(${SECRET}) already exists.`, where: SECRET, hint: SECRET,
    });
    expect(allTextOf(mapPgError(fake, 'write'))).not.toContain(SECRET);
    const odd = Object.assign(new Error(SECRET), { code: `X${SECRET}`, severity: SECRET });
    expect(allTextOf(mapPgError(odd, 'read'))).not.toContain(SECRET);
  });

  it.skipIf(pgSkip)('a real PostgreSQL error whose text holds a secret parameter surfaces as a text-free kind', async () => {
    const conns = await PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema: freshSchema() });
    try {
      // PostgreSQL's own message here is `invalid input syntax for type integer: "<the parameter>"`.
      const raw = await (async () => {
        try {
          await conns.query('SELECT $1::integer', [SECRET]);
        } catch (e) {
          return e as PgBackendError;
        }
        throw new Error('the query should fail');
      })();
      expect(raw).toBeInstanceOf(PgBackendError);
      expect(raw.kind).toBe('NotWritten');
      expect(raw.details.sqlstate).toBe('22P02');
      expect(allTextOf(raw)).not.toContain(SECRET);
      // A unique violation's DETAIL quotes the key: same rule inside a transaction.
      const dup = await conns
        .transaction(async (tx) => {
          await tx.query('CREATE TEMP TABLE u2 (k text PRIMARY KEY)');
          await tx.query('INSERT INTO u2 VALUES ($1)', [SECRET]);
          await tx.query('INSERT INTO u2 VALUES ($1)', [SECRET]);
        })
        .then(() => undefined, (e: PgBackendError) => e);
      expect(dup?.kind).toBe('Conflict');
      expect(allTextOf(dup!)).not.toContain(SECRET);
    } finally {
      await conns.close();
    }
  });

  it('an unreachable database is Unavailable with retry advice, not a driver error', async () => {
    const conns = await PgConnections.open({ target: parsePostgresUrl('postgres://u:pw@/db?host=/nonexistent-dir-for-test&port=1'), schema: 's', connectTimeoutMs: 1000 });
    try {
      await expect(conns.query('SELECT 1')).rejects.toMatchObject({ kind: 'Unavailable', details: { reason: 'connection', retryable: true } });
      await expect(conns.transaction(async () => 1)).rejects.toMatchObject({ kind: 'Unavailable', details: { outcome: 'notWritten' } });
    } finally {
      await conns.close();
    }
  });
});
