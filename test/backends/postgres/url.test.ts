import { describe, expect, it } from 'vitest';
import { parsePostgresUrl, PgUrlError } from '../../../src/backends/postgres/url.js';
import { planOf } from '../../../src/backends/postgres/tls.js';

describe('postgres store URLs', () => {
  it('parses user, password, host, port, database and sslmode; the display form has no password', () => {
    const t = parsePostgresUrl('postgresql://alice:s3cr%40t-pw@db.example.com:6543/agents?sslmode=verify-full');
    expect(t).toMatchObject({ host: 'db.example.com', port: 6543, user: 'alice', password: 's3cr@t-pw', database: 'agents', sslMode: 'verify-full' });
    expect(t.display).toBe('postgres://alice@db.example.com:6543/agents?sslmode=verify-full');
    expect(t.display).not.toContain('s3cr');
    expect(planOf(t.sslMode)).toEqual({ first: 'tls' });
  });

  it('takes unix sockets from ?host= or from a percent-encoded host, defaulting sslmode to disable there', () => {
    const a = parsePostgresUrl('postgres://bob:pw@/db?host=/run/postgresql&port=5433');
    expect(a).toMatchObject({ host: '/run/postgresql', port: 5433, user: 'bob', database: 'db', sslMode: 'disable' });
    expect(a.display).toBe('postgres://bob@/db?host=/run/postgresql&port=5433&sslmode=disable');
    const b = parsePostgresUrl('postgres://bob@%2Fvar%2Frun%2Fpostgresql/db');
    expect(b).toMatchObject({ host: '/var/run/postgresql', port: 5432, database: 'db' });
  });

  it('defaults host, port and sslmode; IPv6 literals keep their brackets in the display form', () => {
    expect(parsePostgresUrl('postgres:///db')).toMatchObject({ host: 'localhost', port: 5432, sslMode: 'prefer', database: 'db' });
    const v6 = parsePostgresUrl('postgres://u@[::1]:5000/d');
    expect(v6).toMatchObject({ host: '::1', port: 5000 });
    expect(v6.display).toBe('postgres://u@[::1]:5000/d?sslmode=prefer');
  });

  it('refuses malformed URLs without quoting them (they may hold the password)', () => {
    const bad = [
      'mysql://u:hunter2secret@h/db',
      'postgres://u:hunter2secret@h:99999/db',
      'postgres://u:hunter2secret@h/db?sslmode=bogus',
      'postgres://u:hunter2secret@h/db?password=hunter2secret',
      'postgres://u:hunter2secret@h/a/b',
      'postgres://u:hunter2%ZZsecret@h/db',
    ];
    for (const url of bad) {
      let err: unknown;
      try {
        parsePostgresUrl(url);
      } catch (e) {
        err = e;
      }
      expect(err, url).toBeInstanceOf(PgUrlError);
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  it('takes sslrootcert, sslcert, sslkey and sslpassword from the URL, else from PGSSL* (URL wins); the passphrase is never displayed', () => {
    const env = { PGSSLMODE: 'verify-ca', PGSSLROOTCERT: '/env/root.crt', PGSSLCERT: '/env/c.crt', PGSSLKEY: '/env/c.key' };
    const a = parsePostgresUrl('postgres://u@h/db?sslrootcert=/url/root.crt&sslcert=/url/c.crt&sslkey=/url/c.key&sslpassword=hunter2secret&sslmode=verify-full', env);
    expect(a).toMatchObject({ sslMode: 'verify-full', sslRootCert: '/url/root.crt', sslCert: '/url/c.crt', sslKey: '/url/c.key', sslPassword: 'hunter2secret' });
    expect(a.display).not.toContain('hunter2');
    expect(a.display).toContain('sslrootcert=/url/root.crt');
    const b = parsePostgresUrl('postgres://u@h/db', env);
    expect(b).toMatchObject({ sslMode: 'verify-ca', sslRootCert: '/env/root.crt', sslCert: '/env/c.crt', sslKey: '/env/c.key' });
    // PGSSLMODE does not apply to a unix socket (PostgreSQL has no TLS there).
    expect(parsePostgresUrl('postgres://u@/db?host=/run/pg', env).sslMode).toBe('disable');
    // Empty variables are unset, as for libpq.
    expect(parsePostgresUrl('postgres://u@h/db', { PGSSLMODE: '' }).sslMode).toBe('prefer');
  });

  it('sslrootcert=system means verify-full and refuses a weaker sslmode (as libpq)', () => {
    expect(parsePostgresUrl('postgres://u@h/db?sslrootcert=system', {}).sslMode).toBe('verify-full');
    expect(() => parsePostgresUrl('postgres://u@h/db?sslrootcert=system&sslmode=require', {})).toThrow(PgUrlError);
    expect(() => parsePostgresUrl('postgres://u@h/db?sslmode=verify', {})).toThrow(/sslmode must be one of/);
  });

  it('sslmode plans: prefer tries TLS then plaintext, allow the reverse, require and stricter never fall back', () => {
    expect(planOf('disable')).toEqual({ first: 'plain' });
    expect(planOf('allow')).toEqual({ first: 'plain', fallback: 'tls' });
    expect(planOf('prefer')).toEqual({ first: 'tls', fallback: 'plain' });
    for (const m of ['require', 'verify-ca', 'verify-full'] as const) expect(planOf(m)).toEqual({ first: 'tls' });
  });
});
