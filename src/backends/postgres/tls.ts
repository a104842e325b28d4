/**
 * TLS for PostgreSQL connections, with libpq's meaning of `sslmode` and its TLS parameters.
 *
 * | sslmode     | first attempt | falls back                                    | verifies               |
 * |-------------|---------------|-----------------------------------------------|------------------------|
 * | disable     | plaintext     | never                                         | —                      |
 * | allow       | plaintext     | to TLS when the server refuses plaintext (28000: no pg_hba entry for a non-TLS connection) | nothing |
 * | prefer      | TLS           | to plaintext only when the server answers the SSLRequest "no TLS" | nothing |
 * | require     | TLS           | never                                         | the chain when a root certificate is there (`sslrootcert`, or ~/.postgresql/root.crt: libpq then acts as verify-ca) |
 * | verify-ca   | TLS           | never                                         | the chain              |
 * | verify-full | TLS           | never                                         | the chain and the host name |
 *
 * Invariants:
 * - Files (`sslrootcert`, `sslcert`, `sslkey`) are read when a connection is made, never when
 *   the URL is parsed, so a renewed certificate is used by the next connection.
 * - No error made here contains a file's content, the key's passphrase or the password: the
 *   messages name the parameter (and, for a refused key file, its mode), nothing read.
 * - A client key readable by group or others is refused as libpq refuses it: owned by the
 *   current user it must be 0600 or stricter; owned by root 0640 or stricter.
 * - The private key is non-enumerable on the options object (as pg itself makes it), so a
 *   logged or inspected config does not show it; the passphrase is not in the options at all
 *   (the key is decrypted here).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { PgBackendError } from './errors.js';
import type { PgTarget, SslMode } from './url.js';

/** What `pg`'s `ssl` option receives (node's tls.connect options). */
export type PgSslOptions = tls.ConnectionOptions;

/** Whether the first connection attempt uses TLS, and what a refusal falls back to. */
export interface TlsPlan {
  first: 'tls' | 'plain';
  /** The other transport, tried once when the server refuses the first (prefer, allow). */
  fallback?: 'tls' | 'plain';
}

export function planOf(mode: SslMode): TlsPlan {
  switch (mode) {
    case 'disable':
      return { first: 'plain' };
    case 'allow':
      return { first: 'plain', fallback: 'tls' };
    case 'prefer':
      return { first: 'tls', fallback: 'plain' };
    default:
      return { first: 'tls' };
  }
}

/** A TLS configuration error: not retryable (retrying cannot make a certificate valid). */
export function tlsConfigError(message: string): PgBackendError {
  return new PgBackendError('Unavailable', `the PostgreSQL store's TLS configuration is unusable: ${message}; check the store configuration`, {
    reason: 'tls',
    retryable: false,
  });
}

/** libpq's default directory for root.crt, postgresql.crt and postgresql.key. */
function defaultDir(env: NodeJS.ProcessEnv): string {
  return path.join(env.HOME || os.homedir(), '.postgresql');
}

function readParam(file: string, param: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw tlsConfigError(`${param} cannot be read (${typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : 'error'})`);
  }
}

/** libpq's check on the client key file (fe-secure-openssl.c): see the header. */
function checkKeyFile(file: string): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw tlsConfigError(`sslkey cannot be read (${typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : 'error'})`);
  }
  if (!st.isFile()) throw tlsConfigError('sslkey is not a regular file');
  const mine = st.uid === process.geteuid?.();
  const tooOpen = mine ? st.mode & 0o077 : st.mode & 0o037;
  if (tooOpen) {
    throw tlsConfigError(`the private key file (sslkey) has group or world access (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); it must be 0600 or less if owned by the current user, or 0640 or less if owned by root`);
  }
}

/**
 * node's tls options for a TLS attempt to `target`. Reads the files now. Throws a
 * non-retryable PgBackendError (reason `tls`) when a file is missing, unreadable or unsafe.
 */
export function tlsOptionsOf(target: PgTarget, env: NodeJS.ProcessEnv = process.env): PgSslOptions {
  const dir = defaultDir(env);
  const mode = target.sslMode;
  const opts: PgSslOptions = {};
  // SNI, as libpq sends it: a host name, never an IP address.
  if (net.isIP(target.host) === 0 && !target.host.startsWith('/')) opts.servername = target.host;

  // The root certificate: explicit, else libpq's default file (required for verify-*; for
  // require used when it exists).
  let rootFile = target.sslRootCert;
  if (rootFile === undefined) {
    const dflt = path.join(dir, 'root.crt');
    if (mode === 'verify-ca' || mode === 'verify-full' || (mode === 'require' && fs.existsSync(dflt))) rootFile = dflt;
  }
  const verifyChain = mode === 'verify-ca' || mode === 'verify-full' || (mode === 'require' && rootFile !== undefined);
  if (verifyChain) {
    if (rootFile === undefined) throw tlsConfigError('no root certificate');
    if (rootFile !== 'system') {
      if (!fs.existsSync(rootFile)) {
        throw tlsConfigError(target.sslRootCert === undefined
          ? `sslmode=${mode} needs a root certificate: give sslrootcert (or PGSSLROOTCERT), put it in ~/.postgresql/root.crt, or use sslrootcert=system`
          : 'sslrootcert does not exist');
      }
      opts.ca = readParam(rootFile, 'sslrootcert');
    } // system: node's default trust store (no `ca`)
    opts.rejectUnauthorized = true;
    // verify-ca (and require with a root certificate): the chain, not the name.
    if (mode !== 'verify-full') opts.checkServerIdentity = () => undefined;
  } else {
    opts.rejectUnauthorized = false;
  }

  // The client certificate (mTLS): explicit, else libpq's defaults when present.
  const certFile = target.sslCert ?? (fs.existsSync(path.join(dir, 'postgresql.crt')) ? path.join(dir, 'postgresql.crt') : undefined);
  if (certFile !== undefined) {
    opts.cert = readParam(certFile, 'sslcert');
    const keyFile = target.sslKey ?? path.join(dir, 'postgresql.key');
    checkKeyFile(keyFile);
    const keyBytes = readParam(keyFile, 'sslkey');
    // The key is decrypted here (with sslpassword when it is encrypted) and handed on
    // unencrypted, in memory only: the passphrase then never sits in the driver's options.
    let key: string;
    try {
      key = crypto.createPrivateKey({ key: keyBytes, ...(target.sslPassword !== undefined ? { passphrase: target.sslPassword } : {}) }).export({ format: 'pem', type: 'pkcs8' }).toString();
      // A key that does not match the certificate fails here rather than in the handshake.
      tls.createSecureContext({ cert: opts.cert, key });
    } catch {
      // OpenSSL's text is not forwarded (it may quote what it parsed).
      throw tlsConfigError(target.sslPassword === undefined
        ? 'the client key (sslkey) cannot be loaded or does not match sslcert (an encrypted key needs sslpassword)'
        : 'the client key (sslkey) cannot be loaded with the given sslpassword, or does not match sslcert');
    }
    hidden(opts, 'key', key);
  } else if (target.sslKey !== undefined) {
    throw tlsConfigError('sslkey is given without sslcert');
  }
  return opts;
}

function hidden(o: object, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: false, writable: true, configurable: true });
}
