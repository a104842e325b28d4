/**
 * Connections to one PostgreSQL store: a node-postgres Pool for transactions and a dedicated
 * LISTEN connection (which is also this sidecar's liveness identity for leases).
 *
 * - `pg` is imported dynamically here and nowhere else, so a file-store sidecar never loads it.
 * - Every connection starts with `synchronous_commit = on` and `search_path = <schema>` in its
 *   startup packet (not a query after connecting), so no statement can run without them.
 * - Errors are surfaced, not hidden: every call maps through errors.ts; a pool or listener
 *   `error` event (an idle connection dying) is reported to `onError` as a mapped error, never
 *   left unhandled (an unhandled `error` event would kill the process).
 */
import type { Pool, PoolClient, Client, QueryResultRow } from 'pg';
import { mapPgError, PgBackendError, type Phase } from './errors.js';
import type { PgTarget } from './url.js';
import { negotiatingClient } from './tlsClient.js';

export interface PgConnectOptions {
  target: PgTarget;
  /** Validated schema name (see checkSchemaName). */
  schema: string;
  /** Pool size (default 8). */
  max?: number;
  connectTimeoutMs?: number;
  /** A transaction left idle this long is ended by the server, releasing its locks (default 30 s). */
  idleInTransactionMs?: number;
  /** Lock waits longer than this fail as Unavailable/lockTimeout (default 10 s). */
  lockTimeoutMs?: number;
  /** A statement running longer than this is cancelled (default 5 min: a large compaction copies in one). */
  statementTimeoutMs?: number;
  applicationName?: string;
  /**
   * Inspection (the CLI): every connection starts with default_transaction_read_only = on, so
   * the server itself refuses any write, whatever a caller tries (LISTEN is still allowed).
   */
  readOnly?: boolean;
  /**
   * `transaction`: the pooled connections go through a transaction-pooling proxy (PgBouncer
   * `pool_mode = transaction`), where a connection's session state does not outlive one
   * transaction: no startup `options`; every statement runs inside a transaction that begins
   * with `SET LOCAL` of the settings; no named prepared statements. The LISTEN connection
   * (`listenTarget`) is direct and keeps the startup settings.
   */
  pooler?: 'transaction';
  /** Where the LISTEN connection goes (default: `target`): a direct server, never a transaction pooler. */
  listenTarget?: PgTarget;
  onError?: (err: PgBackendError) => void;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw new Error('--pg-schema must match [a-z_][a-z0-9_]{0,62}');
  return name;
}

type PgModule = typeof import('pg');
let pgModule: Promise<PgModule> | undefined;
/** The lazily loaded driver (ESM interop: node-postgres is CommonJS). */
export function loadPg(): Promise<PgModule> {
  pgModule ??= import('pg').then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule);
  return pgModule;
}

/** The settings every connection (or, behind a transaction pooler, every transaction) runs with. */
function settingsOf(o: PgConnectOptions): Array<[string, string]> {
  return [
    ['synchronous_commit', 'on'],
    ['search_path', checkSchemaName(o.schema)],
    ['idle_in_transaction_session_timeout', String(o.idleInTransactionMs ?? 30_000)],
    ['lock_timeout', String(o.lockTimeoutMs ?? 10_000)],
    ['statement_timeout', String(o.statementTimeoutMs ?? 300_000)],
    ...(o.readOnly ? [['default_transaction_read_only', 'on'] as [string, string]] : []),
  ];
}

/** `BEGIN ...; SET LOCAL ...` as ONE simple query (one round trip): a pooled transaction's settings. */
function beginWithSettings(begin: string, o: PgConnectOptions): string {
  // Names are fixed; values are digits, `on`, or a checked schema name: nothing to escape.
  const sets = settingsOf(o).map(([k, v]) => (k === 'default_transaction_read_only' ? 'SET LOCAL transaction_read_only = on' : `SET LOCAL ${k} = '${v}'`));
  return [begin, ...sets].join('; ');
}

function clientConfig(o: PgConnectOptions, t: PgTarget = o.target, startupSettings = o.pooler === undefined) {
  return {
    host: t.host,
    port: t.port,
    ...(t.user !== undefined ? { user: t.user } : {}),
    ...(t.password !== undefined ? { password: t.password } : {}),
    ...(t.database !== undefined ? { database: t.database } : {}),
    // TLS is negotiated per connection by the Client class (tlsClient.ts: libpq's sslmode,
    // files read when connecting); the driver's own option starts off.
    ssl: false as const,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 5000,
    application_name: o.applicationName ?? 'session-sidecar',
    ...(startupSettings ? { options: settingsOf(o).map(([k, v]) => `-c ${k}=${v}`).join(' ') } : {}),
  };
}

/** One transaction's connection: queries only; BEGIN/COMMIT/ROLLBACK belong to `transaction`. */
export interface Tx {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
}

/** Pooled connections when the caller says nothing (the backend passes --pg-pool-max's default). */
const DEFAULT_MAX = 8;

export class PgConnections {
  /**
   * The second net (the first is the store's final gate, over every value it hands the
   * backend): every text or bytes parameter of every statement, in the one place statements are
   * issued, is looked at for a registered secret before it is sent — a write path that forgot the
   * gate is refused here (SecretRejected, nothing sent), as the file store's FsLayer wrapper
   * refuses a write. Set by the store that owns the secrets (guardParams).
   */
  private net: ((text: string) => string | undefined) | undefined;

  guardParams(net: (text: string) => string | undefined): void {
    this.net = net;
  }

  private checkParams(params: unknown[]): void {
    const net = this.net;
    if (!net) return;
    const look = (v: unknown, depth: number): void => {
      const rule = typeof v === 'string' ? net(v) : Buffer.isBuffer(v) ? net(v.toString('latin1')) : undefined;
      if (rule !== undefined) {
        throw new PgBackendError('SecretRejected', `a registered secret reached a database statement (rule: ${rule}); nothing was sent`, { rule, path: '(database parameter)' });
      }
      if (Array.isArray(v) && depth < 2) for (const x of v) look(x, depth + 1);
    };
    for (const p of params) look(p, 0);
  }

  private constructor(
    readonly options: PgConnectOptions,
    private readonly pg: PgModule,
    private readonly pool: Pool,
  ) {}

  /** Pooled connections at most (the LISTEN connection is not one of them). */
  get max(): number {
    return this.options.max ?? DEFAULT_MAX;
  }

  static async open(options: PgConnectOptions): Promise<PgConnections> {
    const pg = await loadPg();
    const pool = new pg.Pool({ ...clientConfig(options), max: options.max ?? DEFAULT_MAX, idleTimeoutMillis: 10_000, Client: negotiatingClient(pg, options.target) });
    // An idle client's error (server restart, network loss): the pool discards the client;
    // we report it (mapped, text-free) and carry on — the next checkout reconnects.
    pool.on('error', (err) => options.onError?.(mapPgError(err, 'read')));
    return new PgConnections(options, pg, pool);
  }

  /** One statement outside an explicit transaction (autocommit). */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = [], phase: Phase = 'read'): Promise<R[]> {
    this.checkParams(params);
    // Behind a transaction pooler a statement needs the settings, so it runs in a transaction of its own.
    if (this.options.pooler) return this.transaction((tx) => tx.query<R>(sql, params), 'read committed', phase);
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw mapPgError(err, phase, sql); // the statement (our SQL, no values) names a missing privilege
    }
  }

  /**
   * One statement that is its own transaction (autocommit) and writes: one round trip. A
   * failure to get a connection sent nothing (phase `write`: nothing written, certain); a
   * failure once the statement was sent is phase `commit` (outcome unknown when the
   * connection broke, since its implicit COMMIT may have happened). A client whose connection
   * failed is destroyed, not returned to the pool. A named statement is prepared once per
   * connection (the text must never change under one name).
   */
  async writeStatement<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[], name?: string): Promise<R[]> {
    this.checkParams(params);
    // Behind a transaction pooler: BEGIN + settings, the statement, COMMIT (three round trips;
    // a failure before COMMIT wrote nothing, one of COMMIT is outcome unknown, as here).
    if (this.options.pooler) return this.transaction((tx) => tx.query<R>(sql, params));
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err, 'write');
    }
    let healthy = true;
    const onClientError = () => (healthy = false);
    client.on('error', onClientError);
    try {
      // `name`: a prepared statement, parsed and planned once per connection (the append's).
      return (await client.query<R>(name !== undefined ? { name, text: sql, values: params } : { text: sql, values: params })).rows;
    } catch (err) {
      // Only a statement the server refused with an ERROR leaves the connection usable; a FATAL
      // (the backend terminated, the server shutting down) or a socket error does not.
      // An ERROR answer rolled the statement's transaction back: nothing was written, certainly
      // (phase write). Anything else (the connection broke after sending) leaves it unknown.
      const refused = (err as { severity?: unknown } | null)?.severity === 'ERROR';
      if (!refused) healthy = false;
      throw mapPgError(err, refused ? 'write' : 'commit');
    } finally {
      client.off('error', onClientError);
      client.release(healthy ? undefined : true);
    }
  }

  /**
   * BEGIN, `body`, COMMIT, then resolve. A failure before COMMIT is sent rolls back (phase
   * `write`: nothing written, certain); a failure of the COMMIT itself is phase `commit`
   * (outcome unknown when the connection broke). A client whose connection failed is
   * destroyed, not returned to the pool.
   */
  async transaction<T>(body: (tx: Tx) => Promise<T>, isolation: 'read committed' | 'serializable' | 'snapshot' = 'read committed', phase: Phase = 'write'): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err, phase);
    }
    let healthy = true;
    // A checked-out client whose socket dies between queries emits 'error'; without a
    // listener that would be an uncaught exception. The failure surfaces through the next
    // query anyway, so here it only marks the client as not reusable.
    const onClientError = () => (healthy = false);
    client.on('error', onClientError);
    try {
      try {
        // snapshot: every statement of the transaction sees one state of the database (read only).
        const begin = isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE'
          : isolation === 'snapshot' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN';
        await client.query(this.options.pooler ? beginWithSettings(begin, this.options) : begin);
      } catch (err) {
        healthy = false;
        throw mapPgError(err, phase);
      }
      const tx: Tx = {
        query: async (sql, params = []) => {
          this.checkParams(params);
          try {
            return (await client.query(sql, params)).rows;
          } catch (err) {
            // A missing privilege is named with the statement's verb (our SQL, no values); other
            // errors reach the body as the driver threw them (it may inspect them) and are mapped below.
            throw (err as { code?: unknown }).code === '42501' ? mapPgError(err, 'write', sql) : err;
          }
        },
      };
      let result: T;
      try {
        result = await body(tx);
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch {
          healthy = false;
        }
        throw mapPgError(err, phase);
      }
      try {
        await client.query('COMMIT');
      } catch (err) {
        healthy = false;
        throw mapPgError(err, phase === 'read' ? 'read' : 'commit');
      }
      return result;
    } finally {
      // release(true) destroys the connection: after a failed BEGIN/ROLLBACK/COMMIT its state
      // is unknown, so it never goes back to the pool.
      client.off('error', onClientError);
      client.release(healthy ? undefined : true);
    }
  }

  /** A dedicated, unpooled client (the LISTEN connection). The caller owns its lifecycle. */
  async dedicatedClient(onError: (err: PgBackendError) => void): Promise<Client> {
    const target = this.options.listenTarget ?? this.options.target;
    const client = new (negotiatingClient(this.pg, target))(clientConfig(this.options, target, true));
    client.on('error', (err) => onError(mapPgError(err, 'read')));
    try {
      await client.connect();
    } catch (err) {
      client.end().catch(() => undefined);
      throw mapPgError(err, 'read');
    }
    return client;
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
