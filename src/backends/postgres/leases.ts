/**
 * One writer per session across machines: a row in `leases` per session.
 *
 * - acquire: in one transaction, the row is locked (FOR UPDATE) and taken when it is free,
 *   released, its holder's liveness connection is gone (no pg_stat_activity row with that
 *   pid AND backend start), or its heartbeat is older than `staleMs` (database clock, so
 *   machines' clocks do not matter). Every acquisition increments the fencing token.
 *   Otherwise SessionLocked names the holder (host, pid, sidecar id).
 * - The token is checked inside every write transaction (`checkFence`, FOR SHARE): a takeover's
 *   UPDATE waits for in-flight writes of the old holder, and once it has committed every later
 *   write of the old holder fails LeaseLost. So a stalled old holder can never write after a
 *   takeover, whatever its clock or its idea of the lease.
 * - heartbeat: refreshes heartbeat_at and the liveness identity of every held lease; a lease
 *   found taken over is dropped and reported through onLost.
 *
 * pg_stat_activity shows pid/backend_start of other roles' sessions only to superusers and
 * pg_read_all_stats members: give the sidecars one role (or that grant), else a crashed
 * holder's lease is taken over only once stale.
 */
import { PgBackendError } from './errors.js';
import type { PgConnections, Tx } from './pool.js';
import type { ConnIdentity } from './changes.js';
import type { Fence, LeaseHolder } from './types.js';

interface LeaseRow {
  token: string;
  holder_host: string;
  holder_pid: number;
  sidecar_id: string;
  released: boolean;
  conn_alive: boolean;
  stale: boolean;
}

/** Inside a write transaction: the fence must still be the lease's token (row share-locked). */
export async function checkFence(tx: Tx, fence: Fence): Promise<void> {
  const rows = await tx.query<{ token: string; released: boolean }>(
    'SELECT token, released_at IS NOT NULL AS released FROM leases WHERE session_id = $1 FOR SHARE',
    [fence.sessionId],
  );
  const row = rows[0];
  if (!row || Number(row.token) !== fence.token || row.released) {
    throw new PgBackendError('LeaseLost', 'this sidecar no longer holds the session (another took it over); nothing was written', {
      sessionId: fence.sessionId, outcome: 'notWritten',
    });
  }
}

export class Leases {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly conns: PgConnections,
    readonly holder: LeaseHolder,
    private readonly identity: () => ConnIdentity,
    readonly staleMs: number,
    private readonly onLost: (sessionId: string) => void = () => undefined,
    private readonly readOnly = false,
  ) {}

  async acquire(sessionId: string): Promise<Fence> {
    // A read-only backend (inspection) never leases: refused here before the server would.
    if (this.readOnly) throw new PgBackendError('UnsafeStore', 'the store is open for inspection only; no lease is taken', { reason: 'readOnlyStore', sessionId });
    const me = this.identity();
    const token = await this.conns.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO leases (session_id, token, holder_host, holder_pid, sidecar_id, conn_pid, conn_start, heartbeat_at, released_at)
         VALUES ($1, 0, '', 0, '', 0, now(), now(), now()) ON CONFLICT (session_id) DO NOTHING`,
        [sessionId],
      );
      const rows = await tx.query<LeaseRow>(
        `SELECT token, holder_host, holder_pid, sidecar_id, released_at IS NOT NULL AS released,
                EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.conn_pid AND a.backend_start = l.conn_start) AS conn_alive,
                heartbeat_at < now() - make_interval(secs => $2::double precision / 1000) AS stale
           FROM leases l WHERE session_id = $1 FOR UPDATE`,
        [sessionId, this.staleMs],
      );
      const row = rows[0]!;
      if (!row.released && row.conn_alive && !row.stale) {
        throw new PgBackendError('SessionLocked', `the session is open for writing by another sidecar (pid ${row.holder_pid} on ${row.holder_host})`, {
          sessionId, holder: { host: row.holder_host, pid: row.holder_pid, sidecarId: row.sidecar_id },
        });
      }
      const taken = await tx.query<{ token: string }>(
        `UPDATE leases SET token = token + 1, holder_host = $2, holder_pid = $3, sidecar_id = $4,
                conn_pid = $5, conn_start = $6::timestamptz, heartbeat_at = now(), released_at = NULL
          WHERE session_id = $1 RETURNING token`,
        [sessionId, this.holder.host, this.holder.pid, this.holder.sidecarId, me.pid, me.start],
      );
      return Number(taken[0]!.token);
    });
    this.held.set(sessionId, token);
    return { sessionId, token };
  }

  /** Gives the lease up (only if still ours); the next acquirer needs no takeover. */
  async release(fence: Fence): Promise<void> {
    if (this.held.get(fence.sessionId) === fence.token) this.held.delete(fence.sessionId);
    await this.conns.query('UPDATE leases SET released_at = now() WHERE session_id = $1 AND token = $2 AND released_at IS NULL', [fence.sessionId, fence.token], 'write');
  }

  /** Refreshes every held lease (heartbeat + current liveness identity); reports lost ones. */
  async heartbeat(): Promise<void> {
    if (this.held.size === 0) return;
    const me = this.identity();
    const ids = [...this.held.keys()];
    const tokens = ids.map((id) => this.held.get(id)!);
    const rows = await this.conns.query<{ session_id: string }>(
      `UPDATE leases l SET heartbeat_at = now(), conn_pid = $3, conn_start = $4::timestamptz
         FROM unnest($1::text[], $2::bigint[]) AS h(session_id, token)
        WHERE l.session_id = h.session_id AND l.token = h.token AND l.released_at IS NULL
        RETURNING l.session_id`,
      [ids, tokens, me.pid, me.start],
      'write',
    );
    const kept = new Set(rows.map((r) => r.session_id));
    for (const id of ids) {
      if (!kept.has(id) && this.held.get(id) === tokens[ids.indexOf(id)]) {
        this.held.delete(id);
        this.onLost(id);
      }
    }
  }

  /** Forgets a lease without touching the database (purge removed the row). */
  forget(sessionId: string): void {
    this.held.delete(sessionId);
  }
}
