import { describe, expect, it } from 'vitest';
import { mapPgError } from '../../../src/backends/postgres/errors.js';

const SECRET = 'sk-live-9f8e7d6c5b4a3210fedcba9876543210';
const denied = (message: string) => ({ code: '42501', severity: 'ERROR', message, detail: `Failing row contains (${SECRET})` });

describe('postgres 42501 (insufficient privilege) mapping', () => {
  it('names the privilege (the statement verb) and the object (the fixed English message), never retry advice', () => {
    const cases: Array<[string, string, string, string | undefined]> = [
      ['permission denied for table sessions', 'INSERT INTO sessions (a) VALUES ($1)', 'INSERT', 'table sessions'],
      ['permission denied for table leases', 'SELECT token FROM leases WHERE session_id = $1 FOR SHARE', 'SELECT and UPDATE', 'table leases'],
      ['permission denied for table blobs', 'INSERT INTO blobs VALUES ($1) ON CONFLICT (sha256) DO UPDATE SET size = 1', 'INSERT and UPDATE', 'table blobs'],
      ['permission denied for schema "My_s"', 'SELECT to_regclass($1)', 'USAGE', 'schema My_s'],
      ['permission denied for schema s', 'CREATE TABLE s.t (a int)', 'CREATE', 'schema s'],
      ['permission denied for function f', 'SELECT f()', 'EXECUTE', 'function f'],
      ['permission denied for database postgres', 'CREATE SCHEMA "s"', 'CREATE', 'database postgres'],
    ];
    for (const [message, sql, privilege, object] of cases) {
      const e = mapPgError(denied(message), 'write', sql);
      expect(e).toMatchObject({ kind: 'UnsafeStore', details: { sqlstate: '42501', reason: 'privilege', retryable: false, privilege, object, outcome: 'notWritten' } });
      expect(e.message).toContain(`${privilege} privilege on ${object}`);
      expect(e.message).toContain('pg migrate');
      expect(e.message).not.toMatch(/retry later/);
    }
    const owner = mapPgError(denied('must be owner of table sessions'), 'write', 'CREATE INDEX x ON sessions (a)');
    expect(owner.message).toContain('lacks the ownership of table sessions');
  });

  it('a message of another shape or language names no object; nothing of the server text is kept', () => {
    for (const message of [`permission denied for table ${SECRET} (x)`, 'keine Berechtigung für Tabelle sessions', `new row violates row-level security policy: ${SECRET}`]) {
      const e = mapPgError(denied(message), 'read', 'SELECT * FROM sessions');
      expect(e.details.object).toBeUndefined();
      expect(e.details.outcome).toBeUndefined();
      expect(e.message).toContain('lacks the SELECT privilege (the statement was refused)');
      expect(JSON.stringify({ m: e.message, d: e.details, s: e.stack })).not.toContain(SECRET);
    }
    // Without the statement (a driver call elsewhere): neither privilege nor object is guessed.
    expect(mapPgError(denied('keine Berechtigung'), 'write').message).toContain('lacks a privilege (the statement was refused)');
  });
});
