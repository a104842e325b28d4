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
import { sslOptionsOf, type PgTarget } from './url.js';

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
  applicationName?: string;
  /**
   * Inspection (the CLI): every connection starts with default_transaction_read_only = on, so
   * the server itself refuses any write, whatever a caller tries (LISTEN is still allowed).
   */
  readOnly?: boolean;
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

function clientConfig(o: PgConnectOptions) {
  const t = o.target;
  return {
    host: t.host,
    port: t.port,
    ...(t.user !== undefined ? { user: t.user } : {}),
    ...(t.password !== undefined ? { password: t.password } : {}),
    ...(t.database !== undefined ? { database: t.database } : {}),
    ssl: sslOptionsOf(t.sslMode),
    connectionTimeoutMillis: o.connectTimeoutMs ?? 5000,
    application_name: o.applicationName ?? 'session-sidecar',
    options: [
      '-c synchronous_commit=on',
      `-c search_path=${checkSchemaName(o.schema)}`,
      `-c idle_in_transaction_session_timeout=${o.idleInTransactionMs ?? 30_000}`,
      `-c lock_timeout=${o.lockTimeoutMs ?? 10_000}`,
      ...(o.readOnly ? ['-c default_transaction_read_only=on'] : []),
    ].join(' '),
  };
}

/** One transaction's connection: queries only; BEGIN/COMMIT/ROLLBACK belong to `transaction`. */
export interface Tx {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
}

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

  static async open(options: PgConnectOptions): Promise<PgConnections> {
    const pg = await loadPg();
    const pool = new pg.Pool({ ...clientConfig(options), max: options.max ?? 8, idleTimeoutMillis: 10_000 });
    // An idle client's error (server restart, network loss): the pool discards the client;
    // we report it (mapped, text-free) and carry on — the next checkout reconnects.
    pool.on('error', (err) => options.onError?.(mapPgError(err, 'read')));
    return new PgConnections(options, pg, pool);
  }

  /** One statement outside an explicit transaction (autocommit). */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = [], phase: Phase = 'read'): Promise<R[]> {
    this.checkParams(params);
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw mapPgError(err, phase, sql); // the statement (our SQL, no values) names a missing privilege
    }
  }

  /**
   * BEGIN, `body`, COMMIT, then resolve. A failure before COMMIT is sent rolls back (phase
   * `write`: nothing written, certain); a failure of the COMMIT itself is phase `commit`
   * (outcome unknown when the connection broke). A client whose connection failed is
   * destroyed, not returned to the pool.
   */
  async transaction<T>(body: (tx: Tx) => Promise<T>, isolation: 'read committed' | 'serializable' | 'snapshot' = 'read committed'): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err, 'write');
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
        await client.query(isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE'
          : isolation === 'snapshot' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN');
      } catch (err) {
        healthy = false;
        throw mapPgError(err, 'write');
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
        throw mapPgError(err, 'write');
      }
      try {
        await client.query('COMMIT');
      } catch (err) {
        healthy = false;
        throw mapPgError(err, 'commit');
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
    const client = new this.pg.Client(clientConfig(this.options));
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
