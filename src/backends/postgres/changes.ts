/**
 * The dedicated LISTEN connection: live change hints across machines, and this sidecar's
 * liveness identity for leases (its backend pid + start time; when it is gone, other
 * sidecars may take our leases over).
 *
 * Every commit that adds records is followed by a hint (notify.ts: after COMMIT, coalesced,
 * payload `<origin> <id> ...`), so a hint arrives after the records are visible. A hint is
 * only a poke: the engine re-reads by seq. Hints can be lost (while this connection is down,
 * or when their sender died between its COMMIT and the hint), so after every reconnect all
 * subscribers are poked once, and every `pollMs` too. Hints of our own origin are dropped: the
 * notifier poked our subscribers when the write committed.
 *
 * Lifecycle: start() connects (or fails Unavailable); on error/end the connection is replaced
 * with backoff until stop(); onIdentity(identity) runs after each (re)connect so leases can
 * re-assert themselves with the new identity.
 */
import type { Client } from 'pg';
import { mapPgError, PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { holdServing } from './serveLock.js';

export interface ConnIdentity {
  pid: number;
  /** backend_start as text: full microsecond precision (a JS Date would round it off). */
  start: string;
}

export function channelOf(schema: string): string {
  return `ss_changes_${schema}`.slice(0, 63);
}

export class ChangeListener {
  private client: Client | undefined;
  private identity: ConnIdentity | undefined;
  private readonly subs = new Map<string, Set<() => void>>();
  private stopped = false;
  private reconnecting: Promise<void> | undefined;
  /** Connections made so far (1 after start; +1 per reconnect). */
  connects = 0;

  private poll: NodeJS.Timeout | undefined;
  /** The notifier's origin (notify.ts): hints carrying it are ours. */
  origin = '';

  constructor(
    private readonly conns: PgConnections,
    private readonly channel: string,
    private readonly onIdentity: (id: ConnIdentity) => Promise<void> | void,
    private readonly onError: (err: PgBackendError) => void,
    private readonly pollMs = 5000,
    /** A writer's store schema: the serving lock is held shared on this connection (serveLock.ts); undefined for inspection. */
    private readonly servingSchema?: string,
  ) {}

  async start(): Promise<void> {
    await this.connect();
    this.poll = setInterval(() => this.pokeAll(), this.pollMs);
    this.poll.unref();
  }

  /** Pokes this sidecar's subscribers of `sessionId` (a write of ours committed). */
  pokeLocal(sessionId: string): void {
    for (const fn of this.subs.get(sessionId) ?? []) fn();
  }

  /** The current liveness identity; Unavailable while reconnecting. */
  current(): ConnIdentity {
    if (!this.identity) throw new PgBackendError('Unavailable', 'the PostgreSQL store is unavailable (connection); nothing was written; retry later', { reason: 'connection', retryable: true, retryAfterMs: 1000, outcome: 'notWritten' });
    return this.identity;
  }

  subscribe(sessionId: string, poke: () => void): () => void {
    let set = this.subs.get(sessionId);
    if (!set) this.subs.set(sessionId, (set = new Set()));
    const fn = () => poke();
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0 && this.subs.get(sessionId) === set) this.subs.delete(sessionId);
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    const c = this.client;
    this.client = undefined;
    this.identity = undefined;
    await c?.end().catch(() => undefined);
  }

  private pokeAll(): void {
    for (const set of this.subs.values()) for (const fn of set) fn();
  }

  private async connect(): Promise<void> {
    const client = await this.conns.dedicatedClient((err) => {
      this.onError(err);
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.channel !== this.channel || !n.payload) return;
      const [origin, ...ids] = n.payload.split(' ');
      if (origin === this.origin) return;
      for (const id of ids) this.pokeLocal(id);
    });
    try {
      await client.query(`LISTEN "${this.channel}"`);
      if (this.servingSchema !== undefined) await holdServing(client, this.servingSchema);
      const r = await client.query<{ pid: number; start: string }>(
        'SELECT pg_backend_pid() AS pid, backend_start::text AS start FROM pg_stat_activity WHERE pid = pg_backend_pid()',
      );
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      const row = r.rows[0];
      if (!row) throw new PgBackendError('Unavailable', 'the PostgreSQL store is unavailable (connection); retry later', { reason: 'connection', retryable: true });
      this.identity = { pid: row.pid, start: row.start };
      this.connects++;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err instanceof PgBackendError ? err : mapPgError(err, 'read');
    }
    await this.onIdentity(this.identity);
  }

  private lost(client: Client): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    this.identity = undefined;
    client.end().catch(() => undefined);
    this.reconnecting ??= this.reconnectLoop().finally(() => (this.reconnecting = undefined));
  }

  private async reconnectLoop(): Promise<void> {
    for (let delay = 100; !this.stopped; delay = Math.min(delay * 2, 2000)) {
      await new Promise((r) => setTimeout(r, delay));
      if (this.stopped) return;
      try {
        await this.connect();
        this.pokeAll();
        return;
      } catch (err) {
        this.onError(err instanceof PgBackendError ? err : new PgBackendError('Unavailable', 'the PostgreSQL store is unavailable (connection); retry later', { reason: 'connection', retryable: true }));
      }
    }
  }

  /** Resolves when no reconnect is under way (tests). */
  async settled(): Promise<void> {
    while (this.reconnecting) await this.reconnecting;
  }
}
