/**
 * # The memory backend: `class MemoryBackend implements Backend` (src/core/port.ts)
 *
 * Ephemeral sessions (protocol §17): the core's `Sessions` over this backend keeps a process's
 * ephemeral sessions in its memory only — nothing reaches a disk or a database, nothing
 * survives the process. Everything else is the port's contract as the durable backends keep
 * it: gated values only, stored exactly; leases with fencing tokens (a write under a fence
 * that is no longer the lease's is LeaseLost); all-or-nothing writes (every check runs before
 * anything changes); Conflict when a write is not at the position it names; archived
 * generations; content-addressed blobs. "Durable" here means "in memory": no durability is
 * promised, and none is needed for an answer.
 *
 * It never interprets a record's text (it filters by the kind carried beside it), and its
 * second net (secondNet, installed by the core) checks every text once more before it is kept.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import type {
  ArchivedGeneration, Backend, BlobStore, Fence, Gated, Leases, Position, ReadRangeOptions, ReadRangeResult, SealedHeader, SealedRecord, SessionRow, Snapshot,
  StateEntry, StateStore, TrashedSession, UpdateCursor,
} from '../../core/port.js';
import { StoreError } from '../../domain/errors.js';
import { type Kept, rowOf, updatedAtOf, Generation } from './kept.js';
import { checkPersistAt, noPathsHere, SecondNet, Subscribers } from '../shared.js';

export class MemoryBackend implements Backend {
  readonly kind = 'memory' as const;
  readonly display = '(memory)';
  private readonly kept = new Map<string, Kept>();
  private readonly tokens = new Map<string, { token: number; held: boolean }>();
  private readonly blobBytes = new Map<string, Buffer>();
  private readonly subscribers = new Subscribers();
  private readonly net = new SecondNet((rule) => new StoreError('SecretRejected', `a registered secret reached the memory backend (rule: ${rule}); nothing was kept`, { rule, path: '(memory)' }));

  constructor(private readonly clock: () => number = Date.now) {}

  secondNet(find: (text: string) => string | undefined): void {
    this.net.install(find);
  }

  /** The second net over texts about to be kept: SecretRejected, nothing kept. */
  private netted(...texts: Array<string | null>): void {
    this.net.check(...texts);
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  readonly leases: Leases = {
    acquire: async (sessionId) => {
      // One writer per session: a lease still held (by a writer of this process: no other can
      // reach this memory) is SessionLocked; a released one is taken again with the next token,
      // and a write under an earlier token is LeaseLost.
      const t = this.tokens.get(sessionId);
      if (t?.held) {
        throw new StoreError('SessionLocked', `session ${sessionId} is open for writing in this process`, {
          sessionId, holder: { pid: process.pid, hostname: os.hostname() },
        });
      }
      const token = (t?.token ?? 0) + 1;
      this.tokens.set(sessionId, { token, held: true });
      return { sessionId, token };
    },
    check: (fence) => this.fenceError(fence),
    release: async (fence) => {
      const t = this.tokens.get(fence.sessionId);
      if (t && t.token === fence.token) t.held = false;
    },
  };

  private fenceError(fence: Fence): StoreError | undefined {
    const t = this.tokens.get(fence.sessionId);
    if (t && t.held && t.token === fence.token) return undefined;
    return new StoreError('LeaseLost', 'this instance no longer holds the session; nothing was written', { sessionId: fence.sessionId, outcome: 'notWritten' });
  }

  private fenced(fence: Fence): void {
    const err = this.fenceError(fence);
    if (err) throw err;
  }

  /** The session (trashed too), or SessionNotFound. */
  private session(sessionId: string, live = false): Kept {
    const k = this.kept.get(sessionId);
    if (!k || (live && k.trashedAt !== undefined)) throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    return k;
  }

  private poke(sessionId: string): void {
    this.subscribers.poke(sessionId);
  }

  async load(sessionId: string): Promise<SessionRow> {
    return rowOf(this.session(sessionId));
  }

  async create(header: Gated<SealedHeader>, initial: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, fence: Fence): Promise<void> {
    this.fenced(fence);
    // Seqs start at 1 — or at a checkpoint (a fork of a compacted session starts at the one it copies).
    const active = new Generation(0, initial[0]?.kind === 'checkpoint' ? initial[0].seq : 1);
    active.mustFollow(initial);
    if (this.kept.has(header.sessionId)) throw new StoreError('Conflict', 'a session with this id exists already; nothing was written', { reason: 'exists', sessionId: header.sessionId });
    this.netted(header.text, ...initial.map((r) => r.text), ...Object.values(snapshot));
    active.add(initial);
    this.kept.set(header.sessionId, {
      header: Object.freeze({ ...header }), createdAt: header.createdAt, updatedAt: this.now(), generations: [active], snapshot: { ...snapshot },
      toolSeq: 0, state: new Map(),
    });
    this.poke(header.sessionId);
  }

  async persist(fence: Fence, records: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, at: Position): Promise<void> {
    this.fenced(fence);
    const k = this.session(fence.sessionId, true);
    const active = k.generations[k.generations.length - 1] as Generation;
    checkPersistAt(active, at, records.length);
    active.mustFollow(records);
    this.netted(...records.map((r) => r.text), ...Object.values(snapshot));
    active.add(records);
    k.snapshot = { ...snapshot };
    k.updatedAt = this.now();
    this.poke(fence.sessionId);
  }

  async readRange(sessionId: string, range: ReadRangeOptions): Promise<ReadRangeResult> {
    const k = this.session(sessionId);
    const gen = range.generation === undefined ? k.generations[k.generations.length - 1] : k.generations.find((g) => g.generation === range.generation);
    if (!gen) throw new StoreError('InvalidArgument', 'no such generation', { path: 'generation' });
    return gen.read(range);
  }

  async rotate(fence: Fence, r: { throughSeq: number; checkpoint: Gated<SealedRecord>; expect: Position }): Promise<{ generation: number; archived: ArchivedGeneration }> {
    this.fenced(fence);
    const k = this.session(fence.sessionId, true);
    const active = k.generations[k.generations.length - 1] as Generation;
    if (active.generation !== r.expect.generation || active.lastSeq !== r.expect.lastSeq) {
      throw new StoreError('Conflict', 'the session changed since it was read (lastSeq or generation); nothing was written', { reason: 'expectedLastSeq', lastSeq: active.lastSeq, outcome: 'notWritten' });
    }
    if (r.checkpoint.seq !== r.throughSeq || r.throughSeq < active.firstSeq || r.throughSeq > active.lastSeq) {
      throw new StoreError('OutOfRange', `throughSeq must be between ${active.firstSeq} and ${active.lastSeq}`, { path: 'throughSeq', min: active.firstSeq, max: active.lastSeq });
    }
    this.netted(r.checkpoint.text);
    active.throughSeq = r.throughSeq;
    const next = new Generation(active.generation + 1, r.throughSeq);
    next.add([r.checkpoint, ...active.records.filter((x) => x.seq > r.throughSeq)]);
    k.generations.push(next);
    k.updatedAt = this.now();
    this.poke(fence.sessionId);
    return { generation: next.generation, archived: active.archived() };
  }

  async history(sessionId: string): Promise<ArchivedGeneration[]> {
    return this.session(sessionId).generations.slice(0, -1).map((g) => g.archived());
  }

  async trash(fence: Fence): Promise<void> {
    this.fenced(fence);
    const k = this.session(fence.sessionId, true);
    k.trashedAt = k.updatedAt = this.now();
    this.poke(fence.sessionId);
  }

  async restore(fence: Fence): Promise<void> {
    this.fenced(fence);
    const k = this.session(fence.sessionId);
    if (k.trashedAt === undefined) throw new StoreError('SessionNotFound', 'the session is not in the trash', { sessionId: fence.sessionId });
    k.trashedAt = undefined;
    k.updatedAt = this.now();
    this.poke(fence.sessionId);
  }

  async purge(fence: Fence): Promise<void> {
    this.fenced(fence);
    this.session(fence.sessionId);
    this.kept.delete(fence.sessionId);
    this.tokens.delete(fence.sessionId);
    this.poke(fence.sessionId);
  }

  async purgeTrashed(fence: Fence): Promise<void> {
    this.fenced(fence);
    if (this.session(fence.sessionId).trashedAt === undefined) throw new StoreError('SessionNotFound', 'the session is not in the trash', { sessionId: fence.sessionId });
    await this.purge(fence);
  }

  async listByUpdate(o: { before?: UpdateCursor; limit: number; includeTrashed: boolean }): Promise<SessionRow[]> {
    const key = (k: Kept) => [updatedAtOf(k), k.header.sessionId] as const;
    const newer = (a: readonly [string, string], b: readonly [string, string]) => (a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1]);
    const before = o.before && ([o.before.updatedAt, o.before.sessionId] as const);
    return [...this.kept.values()]
      .filter((k) => (o.includeTrashed || k.trashedAt === undefined) && (!before || newer(before, key(k))))
      .sort((a, b) => (newer(key(a), key(b)) ? -1 : 1))
      .slice(0, o.limit)
      .map(rowOf);
  }

  async listTrash(): Promise<TrashedSession[]> {
    return [...this.kept.values()].filter((k) => k.trashedAt !== undefined).map((k) => {
      const storedBytes = k.generations.reduce((n, g) => n + g.storedBytes, 0);
      return { sessionId: k.header.sessionId, headerText: k.header.text, deletedAt: k.trashedAt as string, storedBytes };
    });
  }

  async reserveToolSeq(fence: Fence, floor: number): Promise<number> {
    this.fenced(fence);
    const k = this.session(fence.sessionId, true);
    k.toolSeq = Math.max(k.toolSeq, floor) + 1;
    return k.toolSeq;
  }

  readonly blobs: BlobStore = {
    put: async (bytes) => {
      this.netted(bytes.toString('latin1'));
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      if (!this.blobBytes.has(sha256)) this.blobBytes.set(sha256, Buffer.from(bytes)); // a copy: the caller's buffer may change
      return { sha256, size: bytes.length };
    },
    size: async (sha256) => this.blobBytes.get(sha256)?.length,
    read: async (sha256, range) => {
      const bytes = this.blobBytes.get(sha256);
      return bytes && range ? Buffer.from(bytes.subarray(range.offset, range.offset + range.length)) : bytes && Buffer.from(bytes);
    },
  };

  readonly state: StateStore = {
    set: async (fence, entry: Gated<StateEntry>) => {
      this.fenced(fence);
      const k = this.session(fence.sessionId, true);
      this.netted(entry.key, entry.text);
      k.state.set(entry.key, entry.text);
    },
    get: async (sessionId, key) => this.session(sessionId).state.get(key),
    delete: async (fence, key) => {
      this.fenced(fence);
      return this.session(fence.sessionId, true).state.delete(key);
    },
  };

  sessionIdOfPath(): string {
    throw noPathsHere('sessions kept in memory have no path: they are opened by id');
  }

  /** Only this process's commits: nothing else can write a session kept in its memory. */
  changes(sessionId: string, poke: () => void): () => void {
    return this.subscribers.add(sessionId, poke);
  }

  /** Everything kept, as text to search (tests look for secrets in it, as in a file or a table). */
  dump(): string {
    const out: string[] = [];
    for (const k of this.kept.values()) {
      out.push(k.header.text, ...Object.values(k.snapshot).filter((v) => v !== null) as string[], ...k.state.keys(), ...k.state.values());
      for (const g of k.generations) for (const r of g.records) out.push(`${r.seq} ${r.ts} ${r.kind} ${r.text}`);
    }
    for (const b of this.blobBytes.values()) out.push(b.toString('latin1'));
    return out.join('\n');
  }

  /** Drops everything (the process's ephemeral sessions end). */
  async close(): Promise<void> {
    this.kept.clear();
    this.tokens.clear();
    this.blobBytes.clear();
    this.subscribers.clear();
  }
}
