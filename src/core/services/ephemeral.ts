import { StoreError } from '../../domain/errors.js';
import type {
  AppendResult, CandidateQuery, CompactRequest, ContextMessage, CreatedSession, HistoryEntry, ListFilter, ListOptions, ListPage, OpenedSession, OpenMode, PruneOptions, RewindResult, UsageReport,
  ReadOptions, ReadPage, RecordInput, RecordsText, CandidatePage, SecretsInput, SessionHeader, SessionHeaderInput, SessionStore, SessionSummary, StoredRecord, TrashEntry,
  TurnChange, TurnKind, TurnState, UpdatedHeader,
} from '../../domain/types.js';

/**
 * Ephemeral sessions (protocol §17) beside a durable store: one SessionStore that routes every
 * call by session id, to the durable store or to an ephemeral one — the same store code (the
 * core's Sessions over the memory backend, made by `makeEphemeral`), so every method behaves as
 * it does for a durable session and passes the same secret gate. The in-memory store exists only
 * while this process holds an ephemeral session: it is made at the first ephemeral create and
 * dropped (its memory with it) when the last one is closed; nothing of it is ever written to the
 * durable store, so a crash or exit loses exactly the ephemeral sessions and nothing else.
 *
 * Lineage never crosses the line: a fork of an ephemeral session is ephemeral, a fork of a
 * durable one durable; a create whose parent is on the other side is refused (InvalidArgument).
 * A delete of an ephemeral session removes it at once (there is no trash in memory).
 */
export class EphemeralRouter implements SessionStore {
  readonly root: string;
  readonly backend: 'file' | 'postgres';
  readonly readText?: SessionStore['readText'];
  private memory: SessionStore | undefined;
  private readonly ids = new Set<string>();
  /** Creates and forks in flight in the in-memory store: it is not dropped under them. */
  private making = 0;
  private waiting: (() => number) | undefined;

  constructor(private readonly durable: SessionStore, private readonly makeEphemeral: () => SessionStore) {
    this.root = durable.root;
    this.backend = durable.backend ?? 'file';
    if (durable.readText) {
      this.readText = (id, opts) => {
        const s = this.route(id);
        return s.readText ? s.readText(id, opts) : Promise.reject(new Error('readText missing'));
      };
    }
  }

  /** The ephemeral store when `sessionId` is one of its sessions, the durable one otherwise. */
  get encrypted(): boolean {
    return this.durable.encrypted === true;
  }

  private route(sessionId: string): SessionStore {
    return this.memory && this.ids.has(sessionId) ? this.memory : this.durable;
  }

  private ephemeralStore(): SessionStore {
    if (!this.memory) {
      this.memory = this.makeEphemeral();
      if (this.waiting) this.memory.setRequestsWaiting?.(this.waiting);
    }
    return this.memory;
  }

  /** Forgets an ephemeral session that is gone; the last one takes the in-memory store with it. */
  private async forget(sessionId: string): Promise<void> {
    this.ids.delete(sessionId);
    if (this.ids.size === 0 && this.making === 0 && this.memory) {
      const memory = this.memory;
      this.memory = undefined;
      await memory.closeAll();
    }
  }

  warmUp(): void {
    this.durable.warmUp?.();
  }

  setRequestsWaiting(probe: () => number): void {
    this.waiting = probe;
    this.durable.setRequestsWaiting?.(probe);
    this.memory?.setRequestsWaiting?.(probe);
  }

  async create(header: SessionHeaderInput, secrets?: SecretsInput, opts?: { idempotencyKey?: string }): Promise<CreatedSession> {
    if (header.parent && this.ids.has(header.parent.sessionId)) {
      throw crossing('a durable session cannot continue or fork an ephemeral one (create it with ephemeral: true)');
    }
    return this.durable.create(header, secrets, opts);
  }

  async createEphemeral(header: SessionHeaderInput, secrets?: SecretsInput): Promise<CreatedSession> {
    if (header.parent && !this.ids.has(header.parent.sessionId)) {
      throw crossing('an ephemeral session can continue or fork only an ephemeral session of this process');
    }
    const memory = this.ephemeralStore();
    this.making += 1;
    try {
      const created = await memory.create(header, secrets);
      this.ids.add(created.sessionId);
      return created;
    } finally {
      this.making -= 1;
      if (this.ids.size === 0 && this.memory === memory) await this.forget(''); // a refused first create leaves no store behind
    }
  }

  open(sessionId: string, mode: OpenMode, secrets?: SecretsInput): Promise<OpenedSession> {
    return this.route(sessionId).open(sessionId, mode, secrets);
  }

  append(sessionId: string, records: RecordInput[], opts?: { expectedLastSeq?: number; idempotencyKey?: string }): Promise<AppendResult> {
    return this.route(sessionId).append(sessionId, records, opts);
  }

  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage> {
    return this.route(sessionId).read(sessionId, opts);
  }

  /**
   * The ephemeral sessions first (all of them marked `ephemeral: true`, most recently updated
   * first), then the durable store's pages. A cursor into the ephemeral part is `e:<count>`
   * (never a durable cursor: those are base64url, which has no `:`).
   */
  async list(opts: ListOptions = {}): Promise<ListPage> {
    const { limit: _l, cursor: _c, ...filter } = opts; // session/list's filters apply to both parts
    const limit = opts.limit ?? 100;
    let skip = 0;
    if (opts.cursor !== undefined) {
      const m = /^e:(\d{1,9})$/.exec(opts.cursor);
      if (!m) return this.durable.list(opts);
      skip = Number(m[1]);
    }
    const mine = await this.ephemeralSummaries(filter);
    const sessions = mine.slice(skip, skip + limit);
    if (skip + sessions.length < mine.length) return { sessions, nextCursor: `e:${skip + sessions.length}` };
    if (sessions.length === limit) return { sessions, nextCursor: `e:${skip + sessions.length}` };
    const rest = await this.durable.list({ ...filter, limit: limit - sessions.length });
    return { sessions: [...sessions, ...rest.sessions], ...(rest.nextCursor ? { nextCursor: rest.nextCursor } : {}) };
  }

  private async ephemeralSummaries(filter: ListFilter): Promise<SessionSummary[]> {
    if (!this.memory || this.ids.size === 0) return [];
    const all: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.memory.list({ ...filter, limit: 1000, cursor });
      all.push(...page.sessions.map((s) => ({ ...s, ephemeral: true as const })));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return all;
  }

  /** The durable store's index, only while no ephemeral session exists (they are in no index: the search then reads every session). */
  async searchCandidates(q: CandidateQuery): Promise<CandidatePage | undefined> {
    if (this.ids.size > 0 || this.making > 0 || !this.durable.searchCandidates) return undefined;
    return this.durable.searchCandidates(q);
  }

  /** An ephemeral session's close ends it: its bytes are dropped from memory. */
  async close(sessionId: string): Promise<void> {
    const s = this.route(sessionId);
    if (s === this.durable) return this.durable.close(sessionId);
    await s.delete(sessionId, true);
    await this.forget(sessionId);
  }

  update(sessionId: string, update: { title?: string; metadata?: Record<string, unknown>; tags?: string[] }, opts?: { idempotencyKey?: string }): Promise<UpdatedHeader> {
    return this.route(sessionId).update(sessionId, update, opts);
  }

  compact(sessionId: string, req: CompactRequest) {
    return this.route(sessionId).compact(sessionId, req);
  }

  history(sessionId: string): Promise<HistoryEntry[]> {
    return this.route(sessionId).history(sessionId);
  }

  async fork(sessionId: string, atSeq?: number): Promise<{ sessionId: string }> {
    const s = this.route(sessionId);
    if (s === this.durable) return this.durable.fork(sessionId, atSeq);
    this.making += 1;
    try {
      const forked = await s.fork(sessionId, atSeq);
      this.ids.add(forked.sessionId);
      return forked;
    } finally {
      this.making -= 1;
    }
  }

  async delete(sessionId: string, purge?: boolean, opts?: { ifIdle?: boolean; dryRun?: boolean }): Promise<void> {
    const s = this.route(sessionId);
    if (s === this.durable) return this.durable.delete(sessionId, purge, opts);
    if (opts?.dryRun) return; // nothing refuses an ephemeral delete (prune never selects one)
    await s.delete(sessionId, true);
    await this.forget(sessionId);
  }

  /** The durable store's trash (ephemeral sessions have none). */
  listTrash(): Promise<TrashEntry[]> {
    return this.durable.listTrash ? this.durable.listTrash() : Promise.resolve([]);
  }

  /** The header of a durable session (prune reads tags; ephemeral sessions are never pruned). */
  header(sessionId: string): Promise<SessionHeader> {
    const s = this.route(sessionId);
    if (!s.header) return Promise.reject(new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId }));
    return s.header(sessionId);
  }

  restore(sessionId: string): Promise<void> {
    return this.route(sessionId).restore(sessionId);
  }

  watch(sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void) {
    return this.route(sessionId).watch(sessionId, afterSeq, deliver, onEnd);
  }

  startTurn(sessionId: string, kind: TurnKind): Promise<{ turnId: string }> {
    return this.route(sessionId).startTurn(sessionId, kind);
  }

  transitionTurn(sessionId: string, turnId: string, change: TurnChange): Promise<void> {
    return this.route(sessionId).transitionTurn(sessionId, turnId, change);
  }

  getTurn(sessionId: string): Promise<TurnState | null> {
    return this.route(sessionId).getTurn(sessionId);
  }

  context(sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }> {
    return this.route(sessionId).context(sessionId, prune);
  }

  usage(sessionId: string): Promise<UsageReport> {
    return this.route(sessionId).usage(sessionId);
  }

  rewind(sessionId: string, toSeq: number, opts?: { expectedLastSeq?: number }): Promise<RewindResult> {
    return this.route(sessionId).rewind(sessionId, toSeq, opts);
  }

  /** Tool scratch is a real directory for a tool to use: an ephemeral session has none (§17). */
  async allocateScratch(sessionId: string, requestId: string, keep?: 'always' | 'onFailure' | 'never') {
    if (this.route(sessionId) !== this.durable) {
      throw new StoreError('InvalidArgument', 'an ephemeral session has no tool scratch directories (they would be on disk)', {
        path: 'sessionId', reason: 'ephemeral',
      });
    }
    return this.durable.allocateScratch(sessionId, requestId, keep);
  }

  setState(sessionId: string, key: string, value: unknown) {
    return this.route(sessionId).setState(sessionId, key, value);
  }

  getState(sessionId: string, key: string): Promise<unknown> {
    return this.route(sessionId).getState(sessionId, key);
  }

  deleteState(sessionId: string, key: string): Promise<boolean> {
    return this.route(sessionId).deleteState(sessionId, key);
  }

  getBlob(sessionId: string, ref: string, offset?: number, length?: number) {
    return this.route(sessionId).getBlob(sessionId, ref, offset, length);
  }

  /**
   * Paths name durable sessions only: an ephemeral session has no path (§17). The path a durable
   * session of an ephemeral session's id would have holds none (ids are never shared): it is
   * SessionNotFound, as any path where no session is — never the ephemeral session.
   */
  sessionIdOfPath(p: string): string {
    const id = this.durable.sessionIdOfPath(p);
    if (this.ids.has(id)) throw new StoreError('SessionNotFound', `session ${id} not found (an ephemeral session has no path)`, { sessionId: id });
    return id;
  }

  /** Process exit (or shutdown): the durable sessions close, the ephemeral ones are gone. */
  async closeAll(): Promise<void> {
    const memory = this.memory;
    this.memory = undefined;
    this.ids.clear();
    await Promise.all([this.durable.closeAll(), memory?.closeAll()]);
  }

  scrub(text: string, extra?: SecretsInput): string {
    const once = this.durable.scrub(text, extra);
    return this.memory ? this.memory.scrub(once, extra) : once;
  }
}

function crossing(message: string): StoreError {
  return new StoreError('InvalidArgument', message, { path: 'parent', reason: 'ephemeralLineage' });
}
