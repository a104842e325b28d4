/**
 * TLS and credentials against a real PostgreSQL with ssl=on (a dedicated cluster: tlsKit.ts):
 * libpq's sslmode semantics (prefer falls back only when the server refuses TLS, allow the
 * reverse), verification with sslrootcert, client certificates, the key-file mode check, and
 * configuration errors that are non-retryable and carry no password, passphrase or key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBackendError, storeErrorOf } from '../../../src/backends/postgres/errors.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { pgAvailability } from '../../pg/pgServer.js';
import { DB_PASSWORD, KEY_PASSPHRASE, startTlsCluster, type TlsCluster } from './tlsKit.js';

const skip = pgAvailability();

/** Everything an error could show, as the protocol would send it too. */
function allTextOf(e: unknown): string {
  const pe = e as PgBackendError;
  return JSON.stringify({ m: pe.message, d: pe.details, s: pe.stack, own: Object.entries(pe as object), store: JSON.stringify(storeErrorOf(e)), storeMsg: (storeErrorOf(e) as Error).message });
}

describe.skipIf(skip)('PostgreSQL TLS and credentials', () => {
  let c: TlsCluster;
  const open: PgConnections[] = [];

  beforeAll(async () => {
    c = await startTlsCluster();
  }, 180_000);

  afterAll(async () => {
    for (const x of open.splice(0)) await x.close();
    c?.destroy();
  });

  const url = (user: string, host: string, params: Record<string, string>, password?: string) =>
    `postgres://${user}${password !== undefined ? `:${encodeURIComponent(password)}` : ''}@${host}:${c.port}/postgres?${new URLSearchParams(params).toString()}`;

  /** Connects (one statement) and returns whether the backend's connection uses TLS. */
  async function sslOf(u: string): Promise<boolean> {
    const conns = await PgConnections.open({ target: parsePostgresUrl(u, {}), schema: 'public', connectTimeoutMs: 30_000 });
    open.push(conns);
    const rows = await conns.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    return rows[0]!.ssl;
  }

  /** The error a connection attempt fails with. */
  async function failureOf(u: string): Promise<PgBackendError> {
    const conns = await PgConnections.open({ target: parsePostgresUrl(u, {}), schema: 'public', connectTimeoutMs: 30_000 });
    open.push(conns);
    try {
      await conns.query('SELECT 1');
    } catch (e) {
      expect(e).toBeInstanceOf(PgBackendError);
      return e as PgBackendError;
    }
    throw new Error('the connection should have failed');
  }

  it('prefer uses TLS when the server offers it (pg_stat_ssl), also for the LISTEN connection', async () => {
    expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'prefer' }))).toBe(true);
    // No sslmode: prefer is the default for a TCP host.
    expect(await sslOf(url('postgres', '127.0.0.1', {}))).toBe(true);
    expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'disable' }))).toBe(false);
    const conns = await PgConnections.open({ target: parsePostgresUrl(url('postgres', '127.0.0.1', {}), {}), schema: 'public' });
    open.push(conns);
    const listener = await conns.dedicatedClient(() => undefined);
    try {
      const r = await listener.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(r.rows[0]!.ssl).toBe(true);
    } finally {
      await listener.end();
    }
  });

  it('allow starts in plaintext and goes TLS only when the server refuses plaintext (hostssl-only role)', async () => {
    expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'allow' }))).toBe(false);
    expect(await sslOf(url('sslonly', '127.0.0.1', { sslmode: 'allow' }))).toBe(true);
    // disable does not: the server's refusal is a non-retryable authentication error.
    const e = await failureOf(url('sslonly', '127.0.0.1', { sslmode: 'disable' }));
    expect(e.details).toMatchObject({ reason: 'authentication', sqlstate: '28000', retryable: false });
  });

  it('verify-full with sslrootcert connects; a host name not in the certificate or another CA is a clear non-retryable tls error', async () => {
    expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: c.ca }))).toBe(true);
    expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'verify-ca', sslrootcert: c.ca }))).toBe(true);
    // require with a root certificate verifies the chain (libpq: like verify-ca).
    expect(await sslOf(url('postgres', '127.0.0.2', { sslmode: 'require', sslrootcert: c.ca }))).toBe(true);
    // verify-ca does not check the name: 127.0.0.2 is not in the certificate, and that is fine there.
    expect(await sslOf(url('postgres', '127.0.0.2', { sslmode: 'verify-ca', sslrootcert: c.ca }))).toBe(true);
    const mismatch = await failureOf(url('postgres', '127.0.0.2', { sslmode: 'verify-full', sslrootcert: c.ca }));
    expect(mismatch.kind).toBe('Unavailable');
    expect(mismatch.details).toMatchObject({ reason: 'tls', retryable: false });
    expect(mismatch.details.retryAfterMs).toBeUndefined();
    expect(mismatch.message).toContain('check the store configuration');
    expect(storeErrorOf(mismatch)).toMatchObject({ details: { reason: 'tls', retryable: false } });
    const untrusted = await failureOf(url('postgres', '127.0.0.1', { sslmode: 'verify-ca', sslrootcert: c.otherCa }));
    expect(untrusted.details).toMatchObject({ reason: 'tls', retryable: false });
    // require without a root certificate does not verify (another CA's server is accepted).
    expect(await sslOf(url('postgres', '127.0.0.2', { sslmode: 'require' }))).toBe(true);
    // A missing sslrootcert file is a configuration error, and its path is not followed into it.
    const missing = await failureOf(url('postgres', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: path.join(c.dir, 'nope.crt') }));
    expect(missing.details).toMatchObject({ reason: 'tls', retryable: false });
  });

  it('logs in with a client certificate (pg_hba cert), also with an encrypted key and its sslpassword', async () => {
    const base = { sslmode: 'verify-full', sslrootcert: c.ca, sslcert: c.clientCert };
    expect(await sslOf(url('certuser', '127.0.0.1', { ...base, sslkey: c.clientKey }))).toBe(true);
    expect(await sslOf(url('certuser', '127.0.0.1', { ...base, sslkey: c.clientKeyEncrypted, sslpassword: KEY_PASSPHRASE }))).toBe(true);
    // Without a certificate the cert line refuses: authentication, not retryable.
    const none = await failureOf(url('certuser', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: c.ca }));
    expect(none.details).toMatchObject({ reason: 'authentication', retryable: false });
    // A wrong passphrase: tls, and neither passphrase is shown.
    const wrong = await failureOf(url('certuser', '127.0.0.1', { ...base, sslkey: c.clientKeyEncrypted, sslpassword: `${KEY_PASSPHRASE}-wrong` }));
    expect(wrong.details).toMatchObject({ reason: 'tls', retryable: false });
    expect(allTextOf(wrong)).not.toContain(KEY_PASSPHRASE);
    expect(allTextOf(wrong)).not.toContain('PRIVATE KEY');
  });

  it('refuses a client key file readable by group or others, as libpq does, with a clear message', async () => {
    const open0640 = path.join(c.dir, 'client-0640.key');
    fs.copyFileSync(c.clientKey, open0640);
    fs.chmodSync(open0640, 0o640);
    const e = await failureOf(url('certuser', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: c.ca, sslcert: c.clientCert, sslkey: open0640 }));
    expect(e.details).toMatchObject({ reason: 'tls', retryable: false });
    expect(e.message).toMatch(/group or world access \(mode 0640\).*0600/);
    expect(allTextOf(e)).not.toContain('PRIVATE KEY');
    expect(allTextOf(e)).not.toContain(fs.readFileSync(c.clientKey, 'utf8').split('\n')[1]!);
  });

  it('a wrong password is a non-retryable authentication error without the password; the right one connects', async () => {
    expect(await sslOf(url('pwuser', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: c.ca }, DB_PASSWORD))).toBe(true);
    const wrongPw = `${DB_PASSWORD}-not-it`;
    const e = await failureOf(url('pwuser', '127.0.0.1', { sslmode: 'verify-full', sslrootcert: c.ca }, wrongPw));
    expect(e.kind).toBe('Unavailable');
    expect(e.details).toMatchObject({ reason: 'authentication', sqlstate: '28P01', retryable: false });
    expect(allTextOf(e)).not.toContain(wrongPw);
    expect(allTextOf(e)).not.toContain(DB_PASSWORD);
    // No such database, no such role: the same kind of error.
    const noDb = await failureOf(`postgres://postgres@127.0.0.1:${c.port}/no_such_db`);
    expect(noDb.details).toMatchObject({ reason: 'noDatabase', sqlstate: '3D000', retryable: false });
    const noRole = await failureOf(`postgres://nobody_here@127.0.0.1:${c.port}/postgres`);
    expect(noRole.details).toMatchObject({ reason: 'authentication', retryable: false });
  });

  // Last: it restarts the server without TLS.
  it('prefer falls back to plaintext when the server has ssl=off; require then fails non-retryably', async () => {
    for (const x of open.splice(0)) await x.close();
    await c.setSsl(false);
    try {
      expect(await sslOf(url('postgres', '127.0.0.1', { sslmode: 'prefer' }))).toBe(false);
      expect(await sslOf(url('pwuser', '127.0.0.1', {}, DB_PASSWORD))).toBe(false);
      const e = await failureOf(url('postgres', '127.0.0.1', { sslmode: 'require' }));
      expect(e.details).toMatchObject({ reason: 'tls', retryable: false });
    } finally {
      for (const x of open.splice(0)) await x.close();
      await c.setSsl(true);
    }
  });
});
