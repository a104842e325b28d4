/**
 * The ONE place where database and driver errors become the protocol's error kinds.
 *
 * Invariant: a PostgreSQL error's text (message, detail, hint, where, the failing statement)
 * can contain parameter values — record text, secrets, passwords — so nothing of it is ever
 * forwarded: the message of a `PgBackendError` is chosen from the fixed table below, and
 * `details` hold only the SQLSTATE (five characters, checked), a fixed reason, retry advice
 * and the outcome. The original error is not kept (not even as `cause`), so a logger that
 * prints causes cannot leak it either.
 *
 * Kinds are the protocol's (`protocol/errors.ts`) plus one new kind, `Unavailable`: the
 * database cannot be reached or went away; nothing was written unless `details.outcome` says
 * `unknown` (the connection broke while COMMIT was in flight). Retry after `retryAfterMs` —
 * unless `retryable: false`: a configuration error (`reason` `authentication`, `noDatabase`,
 * `tls`) that retrying cannot fix; its message ends "check the store configuration".
 */

import { StoreError } from '../../domain/errors.js';

export type PgBackendErrorKind =
  | 'Unavailable'
  | 'Conflict'
  | 'Corrupt'
  | 'NotWritten'
  | 'SessionNotFound'
  | 'SessionLocked'
  | 'LeaseLost'
  | 'InvalidArgument'
  | 'UnsafeStore'
  | 'SecretRejected'
  /** Encryption at rest: the key given does not open the store (reasons keyRequired, wrongKey, notEncrypted, rekeyUnfinished). */
  | 'KeyMismatch'
  /** A well-formed argument outside the session's current range: details {path, min, max}. */
  | 'OutOfRange';

/** Where the failing call was: before COMMIT nothing can have been written. */
export type Phase = 'read' | 'write' | 'commit';

export interface PgErrorDetails {
  /** SQLSTATE of a database error, when there was one. */
  sqlstate?: string;
  /** A fixed word naming the cause (never database text). */
  reason?: string;
  /** Unavailable: whether retrying can help, and after how long. */
  retryable?: boolean;
  retryAfterMs?: number;
  /** Writes: `notWritten` (certain) or `unknown` (the connection broke during COMMIT). */
  outcome?: 'notWritten' | 'unknown';
  [key: string]: unknown;
}

export class PgBackendError extends Error {
  constructor(
    readonly kind: PgBackendErrorKind,
    message: string,
    readonly details: PgErrorDetails = {},
  ) {
    super(message);
    this.name = 'PgBackendError';
  }
}

const RETRY_MS = 1000;

/** Node socket errors that mean "the database is not reachable right now". */
const NETWORK_ERRNOS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENOTFOUND', 'EAI_AGAIN', 'ENOENT', 'EADDRNOTAVAIL', 'ERR_SOCKET_CLOSED', 'ERR_STREAM_DESTROYED',
]);

/**
 * TLS failures (node's and OpenSSL's codes): an untrusted, expired or self-signed certificate,
 * a host-name mismatch, an alert from the server refusing our certificate. Configuration, not
 * weather: not retryable. Only the code is looked at; node's message can quote the certificate.
 */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|CERT_UNTRUSTED|CERT_REJECTED)/;

/** pg's fixed texts for a TLS connection the server would not make (sslmode require and stricter). */
const DRIVER_TLS_MESSAGES = ['The server does not support SSL connections', 'There was an error establishing an SSL connection'];

/** Driver errors without a code, recognised by their fixed (parameter-free) messages. */
const DRIVER_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'timeout exceeded when trying to connect',
  'Client was closed',
  'Cannot use a pool after calling end',
  'Connection terminated unexpectedly',
  'Query read timeout',
];

function unavailable(reason: string, sqlstate: string | undefined, phase: Phase, retryable = true): PgBackendError {
  const outcome = phase === 'commit' ? 'unknown' : 'notWritten';
  const what = phase === 'read' ? 'nothing was read' : outcome === 'unknown' ? 'the write may or may not have committed' : 'nothing was written';
  return new PgBackendError('Unavailable', `the PostgreSQL store is unavailable (${reason}); ${what}; ${retryable ? 'retry later' : 'check the store configuration'}`, {
    ...(sqlstate ? { sqlstate } : {}),
    reason,
    retryable,
    ...(retryable ? { retryAfterMs: RETRY_MS } : {}),
    ...(phase === 'read' ? {} : { outcome }),
  });
}

/**
 * Maps anything a database call threw. A `PgBackendError` passes through unchanged (the
 * backend's own checks throw those); everything else is classified by SQLSTATE or errno.
 */
export function mapPgError(err: unknown, phase: Phase, statement?: string): PgBackendError {
  if (err instanceof PgBackendError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown; severity?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && NETWORK_ERRNOS.has(code)) return unavailable('connection', undefined, phase);
  if (code !== undefined && typeof e.severity !== 'string' && TLS_CODE.test(code)) return unavailable('tls', undefined, phase, false);
  // A server error (node-postgres DatabaseError) carries a severity; only then is `code` a
  // SQLSTATE (an errno such as EPIPE has five capitals too).
  const sqlstate = typeof e.severity === 'string' && code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  // A transaction pooler (PgBouncer) refusing the startup packet's settings: configuration, not an outage.
  if (sqlstate === '08P01' && typeof e.message === 'string' && e.message.startsWith('unsupported startup parameter')) {
    return new PgBackendError('Unavailable', 'the PostgreSQL server refused the connection settings: behind a transaction pooler (PgBouncer) serve with --pg-pooler transaction and --pg-listen-url; check the store configuration', {
      sqlstate, reason: 'startupParameters', retryable: false, ...(phase === 'read' ? {} : { outcome: 'notWritten' }),
    });
  }
  if (sqlstate === '42501') return privilegeError(typeof e.message === 'string' ? e.message : '', statement, phase);
  if (sqlstate !== undefined) return fromSqlState(sqlstate, phase);
  const msg = typeof e.message === 'string' ? e.message : '';
  if (DRIVER_TLS_MESSAGES.includes(msg)) return unavailable('tls', undefined, phase, false);
  if (DRIVER_CONNECTION_MESSAGES.some((m) => msg.startsWith(m))) return unavailable('connection', undefined, phase);
  // Unknown: keep the certainty rule (before COMMIT nothing was written) and say nothing else.
  return unavailable('unexpectedError', undefined, phase, phase !== 'read');
}

function fromSqlState(s: string, phase: Phase): PgBackendError {
  const cls = s.slice(0, 2);
  if (cls === '08') return unavailable('connection', s, phase); // connection exceptions
  if (s === '57P01' || s === '57P02') return unavailable('serverShutdown', s, phase);
  if (s === '57P03') return unavailable('serverStarting', s, phase);
  if (s === '53300' || s === '53400') return unavailable('tooManyConnections', s, phase);
  if (cls === '53') return unavailable('insufficientResources', s, phase); // disk full, out of memory
  if (s === '57014') return unavailable('statementTimeout', s, phase);
  if (s === '55P03') return unavailable('lockTimeout', s, phase);
  if (s === '25P03') return unavailable('idleTransactionTimeout', s, phase);
  // Configuration errors, not retryable: wrong password (28P01), no pg_hba entry or no such
  // role (28000), no such database (3D000). The server's text (it names the user, database
  // and host) is not forwarded, as no server text is.
  if (cls === '28') return unavailable('authentication', s, phase, false);
  if (s === '3D000') return unavailable('noDatabase', s, phase, false);
  if (cls === '40') {
    return new PgBackendError('Conflict', 'a concurrent transaction conflicted; nothing was written', { sqlstate: s, reason: 'serialization' });
  }
  if (s === '23505' || s === '23P01') {
    return new PgBackendError('Conflict', 'another writer stored the same key first; nothing was written', { sqlstate: s, reason: 'uniqueViolation' });
  }
  if (s === '23503') {
    return new PgBackendError('SessionNotFound', 'the session does not exist (anymore)', { sqlstate: s, reason: 'foreignKey' });
  }
  if (cls === '42' || s === '3F000') {
    return new PgBackendError('UnsafeStore', 'the store schema is missing or not what this version expects', { sqlstate: s, reason: 'schema' });
  }
  if (cls === '22' || cls === '23') {
    return new PgBackendError('NotWritten', 'the database refused the data; nothing was written', { sqlstate: s, reason: 'dataRejected', outcome: 'notWritten' });
  }
  return unavailable('databaseError', s, phase, true);
}

/**
 * "permission denied for table sessions": the object is taken from the server's message only
 * when the whole message is that fixed English shape with an identifier (an object name, never
 * a parameter value); the privilege is the statement's own verb (our SQL text, never a
 * parameter). Anything else (another lc_messages, a row-level-security text) gives neither.
 */
const DENIED = /^permission denied for (table|schema|sequence|function|database|view|relation|materialized view) ("?[A-Za-z_][A-Za-z0-9_$]{0,62}"?(?:\."?[A-Za-z_][A-Za-z0-9_$]{0,62}"?)?)$/;

const OWNER = /^must be owner of (table|schema|sequence|function|index|view|relation|materialized view) ("?[A-Za-z_][A-Za-z0-9_$]{0,62}"?(?:\."?[A-Za-z_][A-Za-z0-9_$]{0,62}"?)?)$/;

function privilegeOf(statement: string | undefined): string | undefined {
  const verb = /^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|LISTEN|TRUNCATE|WITH)\b/i.exec(statement ?? '')?.[1]?.toUpperCase();
  if (verb === undefined || verb === 'WITH') return undefined;
  // SELECT ... FOR UPDATE/SHARE needs UPDATE as well as SELECT; an INSERT ... ON CONFLICT DO UPDATE needs UPDATE too.
  if (verb === 'SELECT' && /\bFOR (UPDATE|SHARE|NO KEY UPDATE|KEY SHARE)\b/i.test(statement!)) return 'SELECT and UPDATE';
  if (verb === 'INSERT' && /\bON CONFLICT\b[\s\S]*\bDO UPDATE\b/i.test(statement!)) return 'INSERT and UPDATE';
  return verb;
}

/** "the INSERT privilege on table leases", from a privilege error's details (text of ours only). */
export function privilegeText(d: Record<string, unknown>): string {
  const on = typeof d.object === 'string' ? ` on ${d.object}` : '';
  if (d.privilege === 'ownership') return `the ownership of ${typeof d.object === 'string' ? d.object : 'the object'}`;
  return `${typeof d.privilege === 'string' ? `the ${d.privilege}` : 'a'} privilege${on}`;
}

function privilegeError(message: string, statement: string | undefined, phase: Phase): PgBackendError {
  const owner = OWNER.exec(message);
  const m = owner ?? DENIED.exec(message);
  const object = m ? `${m[1]} ${m[2]!.replaceAll('"', '')}` : undefined;
  // DDL on an existing object needs its ownership, whatever the statement; reaching into a
  // schema needs USAGE on it (CREATE to create in it), connecting CONNECT, a function EXECUTE.
  const verb = privilegeOf(statement);
  const kind = m?.[1];
  const privilege = owner ? 'ownership'
    : kind === 'schema' ? (verb === 'CREATE' ? 'CREATE' : 'USAGE')
    : kind === 'database' ? (verb === 'CREATE' ? 'CREATE' : 'CONNECT')
    : kind === 'function' ? 'EXECUTE'
    : verb;
  const what = privilegeText({ privilege, object });
  return new PgBackendError('UnsafeStore',
    `the database role lacks ${what} (the statement was refused); grant it (see the GRANTs in protocol/STORAGE.md), or run 'session-sidecar pg migrate' as the schema owner when the schema is not migrated`, {
      sqlstate: '42501', reason: 'privilege', retryable: false, ...(phase === 'read' ? {} : { outcome: 'notWritten' as const }), ...(privilege ? { privilege } : {}), ...(object ? { object } : {}),
    });
}

/** Runs a database call and maps whatever it throws (see mapPgError). */
export async function mapped<T>(phase: Phase, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw mapPgError(err, phase);
  }
}

/**
 * The backend's errors as the store's (what every port method rejects with): the same kind
 * names (Unavailable is a store kind too). Messages and details are already free of database
 * content; `holder` is put in the protocol's SessionLocked shape, Unavailable gets its retry
 * advice. Anything else passes through.
 */
export function storeErrorOf(err: unknown): unknown {
  if (!(err instanceof PgBackendError)) return err;
  const details: Record<string, unknown> = { ...err.details };
  const holder = details.holder as { host?: string; pid?: number; sidecarId?: string } | undefined;
  if (holder) details.holder = { pid: holder.pid, hostname: holder.host, sidecarId: holder.sidecarId };
  if (err.kind === 'Unavailable') {
    details.retryable ??= true;
    details.retryAfterMs ??= 1000;
    details.reason ??= 'unavailable';
  }
  return new StoreError(err.kind, err.message, details);
}

/** Runs a backend call with its errors as the store's (storeErrorOf). */
export async function asStoreErrors<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storeErrorOf(err);
  }
}
