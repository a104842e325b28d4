/**
 * Change hints after COMMIT, never inside a write transaction.
 *
 * `pg_notify` inside a transaction takes the cluster-wide notification queue lock from the
 * notify to the end of its COMMIT, so every such commit in the cluster (every schema, every
 * sidecar) would be serialised behind every other. Instead a write that committed calls
 * `committed(sessionId)`: this sidecar's own subscribers are poked at once, and the ids are
 * coalesced for 5 ms into ONE autocommit statement of `pg_notify`s, one per payload
 * (`<origin> <id> <id> ...`, under PostgreSQL's 8000-byte payload limit).
 *
 * A hint is only a poke: a subscriber re-reads by seq, so a lost or duplicated hint costs a
 * read, never a record (changes.ts pokes every subscriber after a reconnect, and on a timer).
 * A process that dies between COMMIT and the hint leaves other sidecars' subscribers to that
 * timer. `origin` (random per backend) lets the LISTEN side drop its own hints, which its
 * subscribers already had.
 */
import { randomBytes } from 'node:crypto';
import type { PgBackendError } from './errors.js';
import { mapPgError } from './errors.js';
import type { PgConnections } from './pool.js';

/** Room for ids in one payload (8000 bytes, less the origin). */
const PAYLOAD_BYTES = 7800;

export class CommitNotifier {
  readonly origin = randomBytes(6).toString('hex');
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly conns: PgConnections,
    private readonly channel: string,
    private readonly local: (sessionId: string) => void,
    private readonly onError: (err: PgBackendError) => void,
    private readonly delayMs = 5,
  ) {}

  /** A write of `sessionId` committed. */
  committed(sessionId: string): void {
    this.local(sessionId);
    if (this.closed) return;
    this.pending.add(sessionId);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush());
    }, this.delayMs);
  }

  /** The payloads that carry `ids`: origin first, ids separated by blanks. */
  static payloads(origin: string, ids: readonly string[]): string[] {
    const out: string[] = [];
    let cur = origin;
    for (const id of ids) {
      if (cur.length + 1 + id.length > PAYLOAD_BYTES) {
        out.push(cur);
        cur = origin;
      }
      cur += ` ${id}`;
    }
    if (cur !== origin) out.push(cur);
    return out;
  }

  private async flush(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length === 0) return;
    try {
      // A hint needs no durability: its transaction commits without waiting for the WAL flush
      // (set_config(..., true) is local to it), so the notification lock, which its commit
      // holds, is held for microseconds instead of an fsync.
      await this.conns.writeStatement(
        "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, p) FROM unnest($2::text[]) AS p",
        [this.channel, CommitNotifier.payloads(this.origin, ids)], 'ss_notify');
    } catch (err) {
      this.onError(mapPgError(err, 'write')); // a lost hint: subscribers elsewhere catch up by their timer
    }
  }

  /** Sends what is pending, then no more. */
  async close(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush());
    }
    this.closed = true;
    await this.flushing;
  }
}
