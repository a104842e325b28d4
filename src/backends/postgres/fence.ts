/**
 * The fence of a write: the writer's lease token must still be the session's.
 *
 * The token lives in two rows: `leases.token` (what acquisition increments, with the holder's
 * liveness) and `sessions.writer_token` (migration 5), set in the same transaction as every
 * acquisition (leases.ts). Writes check the session row, never the lease row, so the
 * heartbeat (an UPDATE of lease rows only) never waits for a write and no write waits for it:
 *
 * - an append is ONE statement whose UPDATE of the session row has `writer_token = $token` in
 *   its WHERE (append.ts): a takeover's UPDATE of that row and the append's are serialised by
 *   the row lock — committed before, the append's WHERE is re-checked against it and fails;
 *   committed after, it waited for the append, which was then before the takeover;
 * - other writes take the session row FOR SHARE (state values) or FOR UPDATE (those that then
 *   change the row: toolSeq reservations, compaction, trash, restore, purge) and compare: a
 *   takeover's UPDATE waits for them, and once committed they fail.
 *
 * Only `create` has no session row to lock: it checks the lease row (FOR SHARE), which the
 * takeover's UPDATE of that row waits for, and writes the token into the new row.
 */
import { PgBackendError } from './errors.js';
import type { Tx } from './pool.js';
import type { Fence } from './types.js';

export function leaseLost(sessionId: string): PgBackendError {
  return new PgBackendError('LeaseLost', 'this sidecar no longer holds the session (another took it over); nothing was written', {
    sessionId, outcome: 'notWritten',
  });
}

/**
 * Inside a write transaction: the session row is locked until COMMIT and carries our token.
 * `update`: the transaction goes on to update or delete that row, so it takes the row lock it
 * will need at once (FOR UPDATE) — upgrading a share lock later, while a takeover waits on the
 * row, could deadlock with it.
 */
export async function checkFence(tx: Tx, fence: Fence, mode: 'share' | 'update' = 'share'): Promise<void> {
  const rows = await tx.query<{ writer_token: string | null }>(
    `SELECT writer_token FROM sessions WHERE session_id = $1 ${mode === 'update' ? 'FOR UPDATE' : 'FOR SHARE'}`, [fence.sessionId]);
  const row = rows[0];
  // No row: the write that follows finds no session (SessionNotFound) — the lease row decides the fence.
  if (!row) return checkLeaseFence(tx, fence);
  // NULL (no writer of this version acquired it yet) is Number(null) = 0: never a token (they start at 1).
  if (Number(row.writer_token) !== fence.token) throw leaseLost(fence.sessionId);
}

/** Before a session row exists (create): the lease row share-locked until COMMIT. */
export async function checkLeaseFence(tx: Tx, fence: Fence): Promise<void> {
  const rows = await tx.query<{ token: string; released: boolean }>(
    'SELECT token, released_at IS NOT NULL AS released FROM leases WHERE session_id = $1 FOR SHARE',
    [fence.sessionId],
  );
  const row = rows[0];
  if (!row || Number(row.token) !== fence.token || row.released) throw leaseLost(fence.sessionId);
}
