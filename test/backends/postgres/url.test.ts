import { describe, expect, it } from 'vitest';
import { parsePostgresUrl, PgUrlError, sslOptionsOf } from '../../../src/backends/postgres/url.js';

describe('postgres store URLs', () => {
  it('parses user, password, host, port, database and sslmode; the display form has no password', () => {
    const t = parsePostgresUrl('postgresql://alice:s3cr%40t-pw@db.example.com:6543/agents?sslmode=verify-full');
    expect(t).toMatchObject({ host: 'db.example.com', port: 6543, user: 'alice', password: 's3cr@t-pw', database: 'agents', sslMode: 'verify-full' });
    expect(t.display).toBe('postgres://alice@db.example.com:6543/agents?sslmode=verify-full');
    expect(t.display).not.toContain('s3cr');
    expect(sslOptionsOf(t.sslMode)).toEqual({ rejectUnauthorized: true });
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
});
