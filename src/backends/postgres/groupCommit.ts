/**
 * Group commit across sessions: the batches of different sessions that are waiting for a
 * connection go to the database as ONE statement (append.ts APPEND_MANY), so they share one
 * round trip, one transaction and one WAL flush.
 *
 * The core's commit queue already gathers one session's requests into one batch and sends one
 * batch per session at a time; what it cannot do is share a commit between sessions. Here:
 *   - at most `maxInFlight` append statements run at once (the pool keeps a connection for
 *     reads, the heartbeat and lease changes);
 *   - a batch that finds a free slot is sent at once, alone: a lone writer waits for nothing;
 *   - batches that arrive while every slot is busy wait, and the next free slot sends all of
 *     them (bounded: MAX_MEMBERS sessions, MAX_BYTES of record text) in one statement.
 *
 * Each member keeps its own fence and its own outcome. The statement advances every member
 * whose fence and position hold and inserts only their records; a member that did not advance
 * is told why (LeaseLost, SessionNotFound, Conflict) without touching the others. When the
 * database refused the statement with an ERROR (a lock timeout behind one session's frozen
 * holder, a value it rejects), the transaction rolled back and nothing of anyone was written
 * (outcome notWritten, certain): each member is then sent again alone, so one member's failure
 * is its own. When the connection broke after the statement was sent, every member's outcome
 * is unknown, and each member's caller confirms its own batch (confirmBatch) once the database
 * is back — the transaction was all or nothing, so they all landed or none did.
 *
 * A session never has two members in one statement (the core sends one batch per session at a
 * time; a second one is held for the next statement all the same).
 */
import { PgBackendError } from './errors.js';
import { appendMany, whyNotAppended, type AppendMember } from './append.js';
import type { PgConnections } from './pool.js';

/** Sessions per statement. */
export const MAX_MEMBERS = 64;
/** Record text per statement (a first member always goes, whatever its size). */
export const MAX_BYTES = 4 << 20;

interface Waiting {
  member: AppendMember;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitLimits {
  /** Append statements running at once (at least 1: the caller's to ensure). */
  maxInFlight: number;
  /** Sessions per statement (default MAX_MEMBERS). */
  maxMembers?: number;
  /** Record text per statement (default MAX_BYTES). */
  maxBytes?: number;
}

export class GroupCommit {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxMembers: number;
  private readonly maxBytes: number;
  /** Statements tried, refused ones included (bench and tests read it). */
  statements = 0;

  constructor(private readonly conns: PgConnections, limits: GroupCommitLimits) {
    this.maxInFlight = limits.maxInFlight;
    this.maxMembers = limits.maxMembers ?? MAX_MEMBERS;
    this.maxBytes = limits.maxBytes ?? MAX_BYTES;
  }

  /** Resolves once `member`'s records are committed (or rejects with why they are not). */
  append(member: AppendMember): Promise<void> {
    const bytes = member.records.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ member, bytes, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const group = this.take();
      this.inFlight += 1;
      void this.send(group).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /** The next statement's members, oldest first, each session at most once, within the bounds. */
  private take(): Waiting[] {
    const group: Waiting[] = [];
    const sessions = new Set<string>();
    let bytes = 0;
    for (let i = 0; i < this.waiting.length && group.length < this.maxMembers;) {
      const w = this.waiting[i]!;
      const id = w.member.fence.sessionId;
      if (sessions.has(id) || (group.length > 0 && bytes + w.bytes > this.maxBytes)) {
        i += 1;
        continue;
      }
      group.push(w);
      sessions.add(id);
      bytes += w.bytes;
      this.waiting.splice(i, 1);
    }
    return group;
  }

  private async send(group: Waiting[]): Promise<void> {
    this.statements += 1;
    let advanced: Set<string>;
    try {
      advanced = await appendMany(this.conns, group.map((w) => w.member));
    } catch (err) {
      if (group.length > 1 && refusedWhole(err)) {
        // Rolled back whole: nobody's records were written. Alone, each meets only its own fate.
        await Promise.all(group.map((w) => this.send([w])));
        return;
      }
      for (const w of group) w.reject(err);
      return;
    }
    await Promise.all(group.map(async (w) => {
      if (advanced.has(w.member.fence.sessionId)) return w.resolve();
      // why (LeaseLost, SessionNotFound, Conflict), or why that could not be read
      w.reject(await whyNotAppended(this.conns, w.member.fence).catch((err: unknown) => err));
    }));
  }
}

/**
 * The statement's transaction certainly did not commit: whatever the database or this process
 * refused (an ERROR answer, a secret caught before sending, no connection to send it on) —
 * everything but a connection that broke after sending (outcome unknown).
 */
function refusedWhole(err: unknown): boolean {
  return err instanceof PgBackendError && err.details.outcome !== 'unknown';
}
