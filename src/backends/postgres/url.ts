
/** The schema a store lives in unless --pg-schema names another. */
export const DEFAULT_PG_SCHEMA = 'session_sidecar';
/**
 * PostgreSQL store URLs: `postgres://` or `postgresql://user:pass@host:port/db?sslmode=...`,
 * with unix sockets as `?host=/dir` (or a percent-encoded path as the host,
 * `postgres://user@%2Fvar%2Frun%2Fpostgresql/db`).
 *
 * Invariant: the password lives only in `PgTarget.password`; `display` (what `initialize`
 * reports as `store.root`, and what logs may print) never contains it, and a parse error never
 * quotes the URL (it may hold the password).
 */

export type SslMode = 'disable' | 'allow' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';
const SSL_MODES: readonly SslMode[] = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

export interface PgTarget {
  /** A host name, an IP address, or an absolute unix-socket directory. */
  host: string;
  port: number;
  user?: string;
  password?: string;
  database?: string;
  sslMode: SslMode;
  /**
   * TLS files and the client key's passphrase (URL parameters, else PGSSLROOTCERT, PGSSLCERT,
   * PGSSLKEY): paths only — the files are read when connecting (tls.ts), never here.
   * `sslRootCert` may be `system` (the system's trust store). `sslPassword` is a secret, like
   * `password`: never in `display`, errors or logs.
   */
  sslRootCert?: string;
  sslCert?: string;
  sslKey?: string;
  sslPassword?: string;
  /** The URL without the password: safe to show and to log. */
  display: string;
}

/** Thrown for a malformed store URL; the message names what is wrong, never the URL. */
export class PgUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgUrlError';
  }
}

export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/** The query parameters a store URL may carry (anything else is refused, unquoted). */
const PARAMS = ['host', 'port', 'sslmode', 'user', 'dbname', 'application_name', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword'];

/**
 * `env` supplies libpq's defaults (PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY); a URL
 * parameter wins over its variable.
 */
export function parsePostgresUrl(input: string, env: NodeJS.ProcessEnv = process.env): PgTarget {
  if (!isPostgresUrl(input)) throw new PgUrlError('a PostgreSQL store URL starts with postgres:// or postgresql://');
  let u: URL;
  let emptyHost = false;
  try {
    // WHATWG URL does not parse an unknown scheme's percent-encoded host as a path: swap the
    // scheme for one it treats generically (the host stays opaque text we decode ourselves).
    // An empty host (`postgres://user@/db?host=/socket`) is valid for libpq but not for WHATWG
    // URL: parse it with a placeholder host and remember it was empty.
    const generic = input.replace(/^postgres(ql)?:/i, 'pgsql:');
    const m = /^pgsql:\/\/([^/?#]*@)?(?=[/?#]|$)/.exec(generic);
    emptyHost = m !== null;
    u = new URL(emptyHost ? generic.replace(/^pgsql:\/\/([^/?#]*@)?/, (all) => `${all}placeholder.invalid`) : generic);
  } catch {
    throw new PgUrlError('the PostgreSQL store URL is malformed');
  }
  const q = u.searchParams;
  for (const key of q.keys()) {
    if (!PARAMS.includes(key)) {
      throw new PgUrlError(`unsupported parameter in the PostgreSQL store URL: ${key.slice(0, 40).replace(/[^\w-]/g, '?')}`);
    }
  }
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new PgUrlError('the PostgreSQL store URL has a malformed percent-encoding');
    }
  };
  let host = q.get('host') ?? (emptyHost ? '' : decode(u.hostname));
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1); // IPv6 literal
  if (host === '') host = 'localhost';
  const portText = q.get('port') ?? (u.port || '5432');
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new PgUrlError('the PostgreSQL store URL has an invalid port');
  const socket = host.startsWith('/');
  const nonEmpty = (v: string | null | undefined): string | undefined => (v === null || v === undefined || v === '' ? undefined : v);
  const sslRootCert = nonEmpty(q.get('sslrootcert')) ?? nonEmpty(env.PGSSLROOTCERT);
  // PostgreSQL never uses TLS over a unix socket: PGSSLMODE does not apply there (libpq ignores
  // sslmode for sockets); an explicit `sslmode` in the URL is honoured as written.
  // libpq: sslrootcert=system defaults sslmode to verify-full, and refuses a weaker mode.
  const sslText = (nonEmpty(q.get('sslmode')) ?? (socket ? 'disable' : nonEmpty(env.PGSSLMODE) ?? (sslRootCert === 'system' ? 'verify-full' : 'prefer'))) as SslMode;
  if (!SSL_MODES.includes(sslText)) throw new PgUrlError('sslmode must be one of ' + SSL_MODES.join(', '));
  if (sslRootCert === 'system' && sslText !== 'verify-full') throw new PgUrlError('sslrootcert=system needs sslmode=verify-full (as libpq)');
  const user = q.get('user') ?? (u.username ? decode(u.username) : undefined);
  const password = u.password ? decode(u.password) : undefined;
  const dbPath = u.pathname.replace(/^\//, '');
  const database = q.get('dbname') ?? (dbPath ? decode(dbPath) : undefined);
  if (database !== undefined && database.includes('/')) throw new PgUrlError('the PostgreSQL store URL names more than one path segment');
  const target: PgTarget = { host, port, sslMode: sslText, display: '' };
  if (user !== undefined) target.user = user;
  if (password !== undefined) target.password = password;
  if (database !== undefined) target.database = database;
  const sslCert = nonEmpty(q.get('sslcert')) ?? nonEmpty(env.PGSSLCERT);
  const sslKey = nonEmpty(q.get('sslkey')) ?? nonEmpty(env.PGSSLKEY);
  const sslPassword = nonEmpty(q.get('sslpassword'));
  if (sslRootCert !== undefined) target.sslRootCert = sslRootCert;
  if (sslCert !== undefined) target.sslCert = sslCert;
  if (sslKey !== undefined) target.sslKey = sslKey;
  if (sslPassword !== undefined) target.sslPassword = sslPassword;
  target.display = displayOf(target);
  return target;
}

/** `postgres://user@host:port/db?sslmode=...`: every member except the password. */
function displayOf(t: PgTarget): string {
  const socket = t.host.startsWith('/');
  const auth = t.user !== undefined ? `${encodeURIComponent(t.user)}@` : '';
  const hostPart = socket ? '' : `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
  const params = new URLSearchParams();
  if (socket) {
    params.set('host', t.host);
    if (t.port !== 5432) params.set('port', String(t.port));
  }
  params.set('sslmode', t.sslMode);
  // File paths are not secret (the files are); the key's passphrase never appears.
  if (t.sslRootCert !== undefined) params.set('sslrootcert', t.sslRootCert);
  if (t.sslCert !== undefined) params.set('sslcert', t.sslCert);
  if (t.sslKey !== undefined) params.set('sslkey', t.sslKey);
  return `postgres://${auth}${hostPart}/${encodeURIComponent(t.database ?? '')}?${params.toString().replace(/%2F/g, '/')}`;
}

