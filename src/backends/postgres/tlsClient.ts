/**
 * The node-postgres Client the pool and the LISTEN connection use: it builds its TLS options
 * when it connects (tls.ts: files read then) and implements libpq's fallbacks, which
 * node-postgres does not have:
 *
 * - `prefer`: TLS first; only when the server answers the SSLRequest with "no TLS" (pg's
 *   fixed error "The server does not support SSL connections") is the same Client connected
 *   again, in plaintext. A TLS handshake or certificate failure never falls back.
 * - `allow`: plaintext first; only when the server refuses the plaintext connection with
 *   SQLSTATE 28000 (no pg_hba.conf entry for a non-TLS connection: a `hostssl`-only server)
 *   is it connected again over TLS.
 *
 * Invariants: at most one fallback per connect; the first attempt's connection object is
 * detached (no listener of it can reach this Client again) before the second starts; the
 * fallback never changes what is verified (prefer and allow verify nothing, as libpq).
 *
 * This relies on three pg@8 internals, checked by test/backends/postgres/tls.test.ts (prefer
 * against a server with ssl=off): `Client#_connect(callback)`, the Client's and the
 * Connection's `ssl` member (read when connecting), and `pg.Connection`.
 */
import type { EventEmitter } from 'node:events';
import type { PgTarget } from './url.js';
import { planOf, tlsOptionsOf, type PgSslOptions } from './tls.js';

type PgModule = typeof import('pg');

interface ConnectionInternals extends EventEmitter {
  ssl: PgSslOptions | false;
  stream: { destroy(): void };
  _keepAlive?: boolean;
  _keepAliveInitialDelayMillis?: number;
}

interface ClientInternals {
  ssl: PgSslOptions | false;
  connection: ConnectionInternals;
  _connecting: boolean;
  _connectionError: boolean;
  connectionTimeoutHandle?: ReturnType<typeof setTimeout>;
}

type Callback = (err?: unknown) => void;

/** pg's own text when the server answers the SSLRequest with 'N'. */
const NO_TLS = 'The server does not support SSL connections';

function refusesTls(err: unknown): boolean {
  return err instanceof Error && err.message === NO_TLS;
}

function refusesPlain(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e?.severity === 'string' && e.code === '28000';
}

/** A pg.Client class for `target` (pass as the Pool's `Client`, or construct directly). */
export function negotiatingClient(pg: PgModule, target: PgTarget): PgModule['Client'] {
  const plan = planOf(target.sslMode);
  const base = pg.Client.prototype as unknown as { _connect(cb: Callback): void };
  const sslFor = (kind: 'tls' | 'plain'): PgSslOptions | false => (kind === 'tls' ? tlsOptionsOf(target) : false);

  class NegotiatingClient extends pg.Client {
    _connect(callback: Callback): void {
      const self = this as unknown as ClientInternals;
      try {
        const ssl = sslFor(plan.first);
        self.ssl = ssl;
        self.connection.ssl = ssl;
      } catch (err) {
        // A TLS configuration error (tls.ts): reported as the connect's failure.
        process.nextTick(() => callback(err));
        return;
      }
      base._connect.call(this, (err?: unknown) => {
        const fallback = plan.fallback;
        const refused = fallback === 'plain' ? refusesTls(err) : fallback === 'tls' ? refusesPlain(err) : false;
        if (!err || !fallback || !refused) return callback(err);
        let ssl: PgSslOptions | false;
        try {
          ssl = sslFor(fallback);
        } catch (e) {
          return callback(e);
        }
        // Detach the refused attempt: its later 'end'/'error' must not reach this Client.
        const old = self.connection;
        old.removeAllListeners();
        old.on('error', () => undefined);
        old.stream.destroy();
        clearTimeout(self.connectionTimeoutHandle);
        self.connection = new pg.Connection({
          ssl, keepAlive: old._keepAlive ?? false, keepAliveInitialDelayMillis: old._keepAliveInitialDelayMillis ?? 0,
        } as ConstructorParameters<PgModule['Connection']>[0]) as unknown as ConnectionInternals;
        self.ssl = ssl;
        self._connecting = false;
        self._connectionError = false;
        base._connect.call(this, callback);
      });
    }
  }
  return NegotiatingClient;
}
