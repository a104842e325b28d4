/**
 * One writer per session across machines: a row in `leases` per session.
 *
 * - acquire: in one transaction, the row is locked (FOR UPDATE) and taken when it is free,
 *   released, its holder's liveness connection is gone (no pg_stat_activity row with that
 *   pid AND backend start), or its heartbeat is older than `staleMs` (database clock, so
 *   machines' clocks do not matter). Every acquisition increments the fencing token.
 *   Otherwise SessionLocked names the holder (host, pid, sidecar id).
 * - Every acquisition also writes the token into the session row (`sessions.writer_token`),
 *   which every write checks (fence.ts): a takeover waits for in-flight writes of the old
 *   holder, and once it has committed every later write of the old holder fails LeaseLost. So
 *   a stalled old holder can never write after a takeover, whatever its clock or its idea of
 *   the lease. Writes never lock lease rows, so the heartbeat never waits for them.
 * - heartbeat: refreshes heartbeat_at and the liveness identity of every held lease; a lease
 *   found taken over is dropped and reported through onLost. Runs never overlap (backend.ts
 *   schedules the next one after the last has ended).
 * - release: a release that fails (the database is down: a fail-stopped session after a
 *   server crash) is retried with every heartbeat until it lands, and the lease is no longer
 *   heartbeated meanwhile, so it goes stale even if the retries never land.
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
    const token = await this.conns.transaction(async (tx) => this.take(tx, sessionId, me)).catch((err: unknown) => {
      // A writer's transaction still open on the session row (frozen, or a long compaction)
      // outlasted our lock wait: the session is locked, which is what the caller must hear.
      if (err instanceof PgBackendError && err.details.reason === 'lockTimeout') {
        throw new PgBackendError('SessionLocked', 'the session is being written by another sidecar (its transaction is still open); try again shortly', { sessionId, reason: 'writerInTransaction' });
      }
      throw err;
    });
    this.held.set(sessionId, token);
    return { sessionId, token };
  }

  /** The lease taken in `tx` (free, released, its holder gone or stale), or SessionLocked. */
  private async take(tx: Tx, sessionId: string, me: ConnIdentity): Promise<number> {
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
    const token = Number(taken[0]!.token);
    // The fence writes check (fence.ts): set in this transaction, so no write of the old
    // holder can commit after it (a session not created yet gets it from create).
    await tx.query('UPDATE sessions SET writer_token = $2 WHERE session_id = $1', [sessionId, token]);
    return token;
  }

  /** Gives the lease up (only if still ours); the next acquirer needs no takeover. */
  async release(fence: Fence): Promise<void> {
    if (this.held.get(fence.sessionId) === fence.token) this.held.delete(fence.sessionId);
    try {
      await this.releaseRow(fence);
      this.unreleased.delete(fence.sessionId);
    } catch (err) {
      this.unreleased.set(fence.sessionId, Math.max(this.unreleased.get(fence.sessionId) ?? 0, fence.token));
      throw err;
    }
  }

  /** Releases that failed, by session: retried by every heartbeat until they land. */
  private readonly unreleased = new Map<string, number>();

  private releaseRow(fence: Fence): Promise<unknown> {
    return this.conns.query('UPDATE leases SET released_at = now() WHERE session_id = $1 AND token = $2 AND released_at IS NULL', [fence.sessionId, fence.token], 'write');
  }

  /** Releases still owed to the database (tests, stats). */
  pendingReleases(): number {
    return this.unreleased.size;
  }

  /** Refreshes every held lease (heartbeat + current liveness identity); reports lost ones. */
  async heartbeat(): Promise<void> {
    for (const [sessionId, token] of [...this.unreleased]) {
      // A newer acquisition of ours (the session reopened) supersedes the owed release.
      if ((this.held.get(sessionId) ?? -1) >= token) {
        this.unreleased.delete(sessionId);
        continue;
      }
      await this.releaseRow({ sessionId, token });
      if (this.unreleased.get(sessionId) === token) this.unreleased.delete(sessionId);
    }
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
