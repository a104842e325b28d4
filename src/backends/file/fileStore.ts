import path from 'node:path';
import { StoreError } from '../../domain/errors.js';
import { checkSessionId, newSessionId } from '../../domain/ids.js';
import { type CompactionResult, compactJournal } from './journal/compact.js';
import { createJournal, createJournalFrom, uncertainCreate } from './journal/create.js';
import { forkLines, forkSource } from './journal/forkJournal.js';
import { errnoOf } from '../../durable/errors.js';
import { listHistory } from './history.js';
import { sanitizeSummary } from '../../domain/summary.js';
import { encodeHeaderLine, JOURNAL_FORMAT, JOURNAL_VERSION, sealLine, sealPlainLine } from './journal/format.js';
import { type JournalCipher, storeKeyOf } from './journal/cipher.js';
import { catchUp, type JournalHandle, openJournalInSlices } from './journal/open.js';
import { type Page, readPage, type RecordBytes, seekAfterSeq } from './journal/read.js';
import { readTextPage } from './journal/readText.js';
import { crcOf } from './journal/scan.js';
import { JournalWriter } from './journal/writer.js';
import { SessionLease } from './leases.js';
import { finishTrash, liveLeftovers, restoreRefusal, restoreSession, trashSession } from './lineage.js';
import { finishPurges, purgeAny, type PurgeContext, purgeTrashed } from './purge.js';
import { listSessions } from './list.js';
import { listTrashed } from './trash.js';
import { watchSession } from './watch.js';
import { OpenSession } from './openSession.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { guardValue } from '../../domain/secrets/gate.js';
import { resolveSecrets } from '../../domain/secrets/sessionSecrets.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import { prepareRecord } from '../../domain/serialize.js';
import { batchSummaries } from '../../domain/summary.js';
import { ContextBuilder } from '../../domain/turns/context.js';
import { newTurnId } from '../../domain/turns/ids.js';
import { type TurnEvent } from '../../domain/turns/turnState.js';
import { checkSealedHeader, guardHeader, scrubText, withoutSecretSummaries } from '../../engine/header.js';
import { appendResult, planBatch, prepareBatch, rewindPlan, turnEventPlan, wroteNothing } from '../../engine/appendPlan.js';
import { checkRewindTarget, type RewindRecord, rewindRecord } from '../../domain/rewind.js';
import { NO_USAGE, shownUsage } from '../../domain/usage.js';
import { stateAt } from './journal/compact.js';
import type {
  AppendResult, RewindResult, UsageReport, CompactRequest, ContextMessage, CreatedSession, HistoryEntry, ListOptions, ListPage, PruneOptions, ReadOptions, ReadPage, RecordInput, RecordsText,
  PurgeOutcome, SecretsInput, SecretsStatus, SessionHeader, SessionHeaderInput, TrashEntry, SessionStore, StoredRecord, TurnChange, TurnKind, TurnState, UpdatedHeader,
} from '../../domain/types.js';
import { DEFAULT_READ_LIMIT, PAGE_BYTES } from '../../domain/limits.js';
import { RuntimeStore } from './runtimeStore.js';
import { baseState, effectiveHeader, type SessionUpdate } from '../../domain/sessionUpdate.js';
import { prepareUpdate, updatedHeader, updatePlan } from '../../engine/sessionUpdate.js';
import { CONVERSATION_KINDS } from '../../domain/turns/context.js';

export { type FileStoreOptions } from './storeCore.js';

/** The journal-file backend of SessionStore: the operations, over StoreCore's open sessions. */
export class FileSessionStore extends RuntimeStore implements SessionStore {
  async create(input: SessionHeaderInput, secretsInput: SecretsInput = {}): Promise<CreatedSession> {
    this.refuseIfReadOnly('create a session');
    if (input.parent) this.mustExist(checkSessionId(input.parent.sessionId));
    return this.createWith(input, secretsInput, []);
  }

  /** Creates a session whose journal holds the header and then `lines` (plaintext record lines the gates checked; sealed as written). */
  private async createWith(input: SessionHeaderInput, secretsInput: SecretsInput, lines: Buffer[]): Promise<CreatedSession> {
    const { set, status } = resolveSecrets({ apiKeyEnv: input.llm?.apiKeyEnv, input: secretsInput }, this.env, this.vocabulary);
    const now = this.clock();
    const sessionId = newSessionId(now);
    const createdAt = new Date(now).toISOString();
    this.allSecrets.addAll(set); // a secret registered for any session may reach no journal
    const guarded = guardHeader(input, secretsInput, this.allSecrets);
    const header = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, sessionId, createdAt, ...(guarded.value as object) };
    checkSealedHeader(sealLine(JSON.stringify(header)), this.allSecrets, this.maxRecordBytes);
    // Encryption at rest sits below the gates: what was checked is the plaintext line.
    const key = storeKeyOf(this.fsl);
    const cipher: JournalCipher | undefined = key && { ...key, sessionId };
    const line = encodeHeaderLine(header, cipher);
    const lease = await this.acquireLease(sessionId);
    try {
      if (lines.length > 0) {
        const seal = cipher ? (l: Buffer) => sealPlainLine(l, cipher) : undefined;
        return await this.createFromLines(sessionId, createdAt, line, lines, seal, set, status, lease);
      }
      return await this.createEmpty(sessionId, createdAt, line, guarded, set, status, lease);
    } catch (err) {
      if (!this.sessions.has(sessionId)) await lease?.release();
      // Fail-stop as after an uncertain append: this process never writes the session again.
      if (err instanceof StoreError && err.kind === 'Uncertain') this.failStopped.add(sessionId);
      throw err;
    }
  }

  private async createEmpty(
    sessionId: string, createdAt: string, line: Buffer, guarded: { value: unknown; redactions: Redaction[] }, set: SecretSet,
    status: SecretsStatus, lease: SessionLease | undefined,
  ): Promise<CreatedSession> {
    const fd = createJournal(this.fsl, this.layout, sessionId, line);
    const key = storeKeyOf(this.fsl);
    const handle: JournalHandle = {
      ...(key ? { cipher: { ...key, sessionId } } : {}),
      fd, ino: this.fsl.fstatSync(fd).ino, header: { sessionId, createdAt, ...(guarded.value as SessionHeaderInput) }, dataStart: line.length, firstSeq: 1, generation: 0,
      position: { bytes: line.length, lastSeq: 0, records: 0, lastCrc: crcOf(line.subarray(0, line.length - 1)) },
    };
    const session = this.adopt(handle, 'write', set, status, lease);
    await session.writeIndexNow();
    const redactions = guarded.redactions.map((r: Redaction) => ({ seq: 0, ...r }));
    return { sessionId, createdAt, secrets: status, ...(redactions.length > 0 ? { redactions } : {}) };
  }

  /** A fork's create: written and then verified in slices (createJournalFrom, openJournalInSlices): a big fork does not stall the sidecar. */
  private async createFromLines(
    sessionId: string, createdAt: string, header: Buffer, lines: Buffer[], seal: ((line: Buffer) => Buffer) | undefined, set: SecretSet, status: SecretsStatus,
    lease: SessionLease | undefined,
  ): Promise<CreatedSession> {
    await createJournalFrom(this.fsl, this.layout, sessionId, header, lines, seal);
    let handle: JournalHandle;
    try {
      handle = await openJournalInSlices(this.fsl, this.layout, sessionId);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw uncertainCreate(sessionId, errnoOf(err)); // the fork's journal is in place: it may exist after a crash
    }
    this.adopt(handle, 'write', set, status, lease);
    await (this.sessions.get(sessionId) as OpenSession).writeIndexNow();
    return { sessionId, createdAt, secrets: status };
  }

  /**
   * The source is pinned on a descriptor of the fork's own (forkSource) in the committed view, then
   * read in slices: the source's writer may append or compact meanwhile without the fork seeing it.
   */
  async fork(sessionId: string, atSeq?: number): Promise<{ sessionId: string }> {
    this.refuseIfReadOnly('fork a session');
    const { header, source, at } = await this.withReadHandle(sessionId, undefined, (handle) => {
      const at = atSeq ?? handle.position.lastSeq;
      if (at < handle.firstSeq - (handle.firstSeq === 1 ? 1 : 0) || at > handle.position.lastSeq) {
        throw new StoreError('InvalidArgument', `atSeq must be between ${handle.firstSeq} and ${handle.position.lastSeq} (older records are archived)`, { path: 'atSeq' });
      }
      return { header: handle.header, source: forkSource(this.fsl, this.layout, handle), at };
    });
    let forked: { lines: Buffer[]; rule?: string };
    try {
      forked = await forkLines(this.fsl, source, at, (bytes) => this.allSecrets.findInBytes(bytes));
    } finally {
      this.fsl.closeSync(source.fd);
    }
    const { lines, rule } = forked;
    if (rule) throw new StoreError('SecretRejected', `the records to fork hold a registered secret (rule: ${rule}); nothing was written`, { path: 'records', rule });
    const { sessionId: _id, createdAt: _c, secretEnv, parent: _p, ...fields } = header;
    const parent = { sessionId, relation: 'fork' as const, atSeq: at };
    const created = await this.createWith({ ...fields, parent }, { env: secretEnv }, lines);
    return { sessionId: created.sessionId };
  }

  async listTrash(): Promise<TrashEntry[]> {
    return listTrashed(this.fsl, this.layout);
  }

  async header(sessionId: string): Promise<SessionHeader> {
    // the effective header (after session/update): prune's tag filter sees the tags as they are now
    return this.withReadHandle(sessionId, undefined, (handle) => effectiveHeader(handle.header as SessionHeader, handle.position.header));
  }

  async delete(sessionId: string, purge = false, opts: { ifIdle?: boolean } = {}): Promise<void> {
    checkSessionId(sessionId);
    this.refuseIfReadOnly('delete a session');
    const live = this.fsl.lstatSync(this.layout.journal(sessionId)) !== undefined;
    const trashed = this.fsl.lstatSync(this.layout.trashSessionDir(sessionId)) !== undefined;
    const purging = purge && this.fsl.lstatSync(path.join(this.layout.trashDir, `.purging-${sessionId}`)) !== undefined;
    if (!live && !trashed && !purging) throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    if (!live && !purge) {
      // A delete (or restore) a crash cut short left parts in their live places: the repeated delete completes it.
      if (liveLeftovers(this.fsl, this.layout, sessionId)) return finishTrash(this.fsl, this.layout, sessionId);
      throw new StoreError('Conflict', `session ${sessionId} is already in the trash: restore or purge it`, { reason: 'inTrash', sessionId });
    }
    const open = this.sessions.get(sessionId);
    if (opts.ifIdle && open?.writer) throw openHere(sessionId);
    if (open) {
      this.sessions.delete(sessionId);
      await open.close();
    }
    // A session open for writing in another process, or being restored, cannot be deleted or
    // purged: its lease is taken first (a purge: purge.ts, the check and the removal under it).
    if (purge) return purgeAny(this.purgeContext(), sessionId);
    const lease = await this.acquireLease(sessionId);
    try {
      trashSession(this.fsl, this.layout, sessionId);
    } finally {
      await lease?.release();
    }
  }

  /** trash empty's purge: see purge.ts (the check that no live session has the id, and the purge, under its lock). */
  async purgeTrashed(sessionId: string): Promise<PurgeOutcome> {
    checkSessionId(sessionId);
    this.refuseIfReadOnly('purge a session');
    return purgeTrashed(this.purgeContext(), sessionId);
  }

  async finishPurges(): Promise<string[]> {
    this.refuseIfReadOnly('purge a session');
    return finishPurges(this.purgeContext());
  }

  private purgeContext(): PurgeContext {
    return { fsl: this.fsl, layout: this.layout, lease: (id) => this.acquireLease(id), checked: this.hooks.purgeChecked };
  }

  /**
   * Under the session's lease, so that a purge (which checks that no live session has the id,
   * then removes the trashed one, under the same lease) never runs between a restore's steps,
   * and a restore never between a purge's check and its removal: SessionLocked meanwhile.
   */
  async restore(sessionId: string): Promise<void> {
    this.refuseIfReadOnly('restore a session');
    checkSessionId(sessionId);
    const refused = restoreRefusal(this.fsl, this.layout, sessionId); // first without the lock; asked again under it
    if (refused) throw refused;
    const lease = await this.acquireLease(sessionId);
    try {
      restoreSession(this.fsl, this.layout, sessionId);
    } finally {
      await lease?.release();
    }
  }

  async watch(
    sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void,
  ): Promise<{ lastSeq: number; stop(): void }> {
    checkSessionId(sessionId);
    const set = this.watchers.get(sessionId) ?? new Set<{ poke(): void }>();
    const w = await watchSession(this.fsl, this.layout, sessionId, afterSeq, this, deliver, (reason) => {
      set.delete(w);
      onEnd(reason);
    });
    set.add(w);
    this.watchers.set(sessionId, set);
    return w;
  }

  async append(sessionId: string, records: RecordInput[], opts: { expectedLastSeq?: number } = {}): Promise<AppendResult> {
    const session = this.writable(sessionId);
    const batch = prepareBatch(records, this.allSecrets, this.maxRecordBytes, this.blobSink(session));
    const tools = session.tools();
    const planned = planBatch(batch, session.handle.header.turns === 'auto', tools);
    const committed = await this.commit(session, { texts: batch.texts, expectedLastSeq: opts.expectedLastSeq, plan: planned.plan })
      .catch((err: unknown) => {
        if (wroteNothing(err)) planned.giveBack();
        throw err;
      });
    tools.noteCommitted(batch.values);
    session.noteCommitted(batchSummaries(batch.values, session.handle.firstMessage === undefined), committed.ts);
    return appendResult(committed, batch, planned.recordSeqs());
  }

  async usage(sessionId: string): Promise<UsageReport> {
    return this.withReadHandle(sessionId, undefined, (handle) => ({
      lastSeq: handle.position.lastSeq, ...shownUsage(handle.position.usage ?? NO_USAGE, handle.header.llm?.model),
    }));
  }

  /** The state as of toSeq is reduced when the rewind's turn in the queue comes (everything before it committed). */
  async rewind(sessionId: string, toSeq: number, opts: { expectedLastSeq?: number } = {}): Promise<RewindResult> {
    const session = this.writable(sessionId);
    let rec: RewindRecord | undefined;
    const committed = await this.commit(session, async () => {
      const { handle } = session;
      checkRewindTarget(toSeq, handle.firstSeq, handle.position.lastSeq);
      rec = rewindRecord(toSeq, await stateAt(this.fsl, handle, toSeq)); // in slices: the prefix may be most of a big journal
      const { text } = prepareRecord(rec as unknown as RecordInput, 0, this.allSecrets, this.maxRecordBytes);
      return { texts: [], expectedLastSeq: opts.expectedLastSeq, plan: rewindPlan(text, rec) };
    });
    session.noteCommitted([], committed.ts);
    return { seq: committed.firstSeq, toSeq, turn: (rec as RewindRecord).turn };
  }

  async startTurn(sessionId: string, kind: TurnKind): Promise<{ turnId: string }> {
    const turnId = newTurnId();
    await this.writeTurnEvent(sessionId, { kind: 'turn', turnId, event: 'start', turnKind: kind });
    return { turnId };
  }

  async transitionTurn(sessionId: string, turnId: string, change: TurnChange): Promise<void> {
    await this.writeTurnEvent(sessionId, { kind: 'turn', turnId, ...change });
  }

  /** session/update: a `sessionUpdate` record through the commit queue, laid out against the header state at commit time. */
  async update(sessionId: string, update: SessionUpdate): Promise<UpdatedHeader> {
    const session = this.writable(sessionId);
    const prepared = prepareUpdate(update, this.allSecrets, this.maxRecordBytes);
    const { header } = session.handle;
    const planned = updatePlan(prepared, baseState(header), header, this.allSecrets, this.maxRecordBytes);
    const committed = await this.commit(session, { texts: [], plan: planned.plan });
    session.noteCommitted([], committed.ts);
    return updatedHeader(header, planned.after(), committed.firstSeq, prepared.redactions);
  }

  /** A transition is validated at commit time, against the state the appends before it left. */
  private async writeTurnEvent(sessionId: string, event: TurnEvent): Promise<void> {
    const session = this.writable(sessionId);
    const { text, value } = prepareRecord(event as unknown as RecordInput, 0, this.allSecrets, this.maxRecordBytes);
    const committed = await this.commit(session, { texts: [], plan: turnEventPlan(text, value as TurnEvent) });
    session.noteCommitted([], committed.ts);
  }

  /**
   * Compacts a session: see compactJournal for the steps, the fence and what is authoritative
   * when. It runs as an exclusive operation of the session's commit queue, which holds the queue
   * until the returned promise settles: appends to this session sent meanwhile wait and commit
   * after it, in order, while the compaction yields to the event loop between its slices and
   * every other session is served.
   */
  async compact(sessionId: string, req: CompactRequest): Promise<CompactionResult> {
    const session = this.writable(sessionId);
    const summary = sanitizeSummary(req.summary);
    const extra = { summary, ...(req.provider ? { provider: req.provider } : {}), ...(req.model ? { model: req.model } : {}) };
    const writer = session.writer as JournalWriter;
    const result = await writer.exclusive(async () => {
      const { position } = session.handle;
      if (req.expectedLastSeq !== undefined && req.expectedLastSeq !== position.lastSeq) {
        throw new StoreError('Conflict', `expectedLastSeq ${req.expectedLastSeq} does not match lastSeq ${position.lastSeq}; nothing was compacted`, {
          expectedLastSeq: req.expectedLastSeq, lastSeq: position.lastSeq, stage: 'preCommit',
        });
      }
      return compactJournal(this.fsl, this.layout, session.handle, {
        throughSeq: req.throughSeq,
        ts: new Date(this.clock()).toISOString(),
        checkpointText: (members) => {
          const guarded = guardValue({ ...members, ...extra }, this.allSecrets, 'checkpoint');
          if (guarded.text.length > this.maxRecordBytes) throw new StoreError('PayloadTooLarge', `the checkpoint is larger than ${this.maxRecordBytes} bytes`);
          return guarded.text;
        },
        fence: () => session.lease?.check(sessionId),
        onStep: this.hooks.compactionStep,
      });
    }).catch((err: unknown) => {
      if (writer.stoppedReason) this.failStopped.add(sessionId);
      throw err;
    });
    await session.writeIndexNow();
    this.pokeWatchers(sessionId);
    return result;
  }

  /** The archived generations of a session, oldest first. */
  async history(sessionId: string): Promise<HistoryEntry[]> {
    checkSessionId(sessionId);
    if (this.fsl.lstatSync(this.layout.journal(sessionId)) === undefined) {
      throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    }
    return listHistory(this.fsl, this.layout, sessionId);
  }

  async getTurn(sessionId: string): Promise<TurnState | null> {
    return this.withReadHandle(sessionId, undefined, (handle) => handle.position.turn ?? null);
  }

  async context(sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }> {
    return this.withReadHandle(sessionId, undefined, (handle) => {
      const builder = new ContextBuilder(handle.header);
      const { fd, dataStart, position } = handle;
      let from = dataStart;
      let afterSeq = 0;
      while (afterSeq < position.lastSeq) {
        const page = readPage(this.fsl, fd, {
          from, end: position.bytes, afterSeq, limit: 10_000, maxBytes: PAGE_BYTES, firstSeq: handle.firstSeq, kinds: CONVERSATION_KINDS, cipher: handle.cipher,
        });
        for (const rec of this.inline(page.records)) builder.add(rec);
        if (page.scannedSeq === afterSeq) break;
        afterSeq = page.scannedSeq;
        from = seekAfterSeq(this.fsl, fd, dataStart, position.bytes, afterSeq);
      }
      return { messages: builder.finish(prune), turn: position.turn ?? null };
    });
  }

  async read(sessionId: string, opts: ReadOptions = {}): Promise<ReadPage> {
    return this.readPageOf(sessionId, opts, false, (page) => (opts.inline ? this.inline(page.records) : page.records));
  }

  /** session/read without objects: each record's stored JSON bytes, as the server sends them on. */
  async readText(sessionId: string, opts: Omit<ReadOptions, 'inline'> = {}): Promise<RecordsText> {
    if (opts.kinds === undefined) {
      // The fast path: records copied as stored into a few buffers (journal/readText.ts), or,
      // at a line it leaves to the general path, the page read again through that path.
      const fast = await this.withReadHandle(sessionId, opts.generation, (handle) => {
        const { fd, dataStart, position } = handle;
        if (handle.cipher) return undefined; // sealed lines are opened one by one: the general path
        const afterSeq = Math.min(opts.afterSeq ?? 0, position.lastSeq);
        const from = afterSeq === 0 ? dataStart : seekAfterSeq(this.fsl, fd, dataStart, position.bytes, afterSeq);
        const page = readTextPage(this.fsl, fd, { from, end: position.bytes, afterSeq, limit: opts.limit ?? DEFAULT_READ_LIMIT, maxBytes: PAGE_BYTES, firstSeq: handle.firstSeq });
        return page && { body: page.chunks, count: page.count, lastSeq: position.lastSeq, nextAfterSeq: page.scannedSeq < position.lastSeq ? page.scannedSeq : null, release: page.release };
      });
      if (fast) return fast;
    }
    const page = await this.readPageOf(sessionId, opts, true, (p) => p.texts);
    return { body: joinRecords(page.records), count: page.records.length, lastSeq: page.lastSeq, nextAfterSeq: page.nextAfterSeq };
  }

  private readPageOf<R>(sessionId: string, opts: ReadOptions, asText: boolean, take: (page: Page) => R[]) {
    return this.withReadHandle(sessionId, opts.generation, (handle) => {
      const { fd, dataStart, position } = handle;
      const afterSeq = Math.min(opts.afterSeq ?? 0, position.lastSeq);
      const end = position.bytes;
      const from = afterSeq === 0 ? dataStart : seekAfterSeq(this.fsl, fd, dataStart, end, afterSeq);
      const page = readPage(this.fsl, fd, {
        from, end, afterSeq, limit: opts.limit ?? DEFAULT_READ_LIMIT,
        kinds: opts.kinds ? new Set(opts.kinds) : undefined, maxBytes: PAGE_BYTES, firstSeq: handle.firstSeq, asText, cipher: handle.cipher,
      });
      const more = page.scannedSeq < position.lastSeq;
      return { records: take(page), lastSeq: position.lastSeq, nextAfterSeq: more ? page.scannedSeq : null };
    });
  }

  async list(opts: ListOptions = {}): Promise<ListPage> {
    const live = new Map(this.sessions);
    for (const [id, s] of this.sessions) {
      if (s.writer) continue;
      try {
        catchUp(this.fsl, s.handle);
      } catch {
        live.delete(id); // listed from its index or journal like a closed session (or left out, with a warning)
      }
    }
    const page = await listSessions(this.fsl, this.layout, live, this.listCache, opts, this.warn);
    return withoutSecretSummaries(page, this.allSecrets);
  }

  scrub(text: string, extra: SecretsInput = {}): string {
    return scrubText(text, this.allSecrets, this.env, extra);
  }

}

const COMMA = Buffer.from(',');

function openHere(sessionId: string): StoreError {
  return new StoreError('SessionLocked', `session ${sessionId} is open for writing in this process`, { sessionId, reason: 'openHere' });
}

/** Records' byte slices as one comma-separated list. */
function joinRecords(records: RecordBytes[]): Buffer[] {
  const out: Buffer[] = [];
  records.forEach((r, i) => (i === 0 ? out.push(...r) : out.push(COMMA, ...r)));
  return out;
}
