/**
 * # The file backend: `class FileBackend implements Backend` (src/core/port.ts)
 *
 * The file store's on-disk format (STORAGE.md: per-session journals of checksummed lines, the
 * index, the trash, history archives, blobs, state values) kept for the core's `Sessions`
 * (composed in src/stores/fileStore.ts). Byte positions stay inside: the core sees seqs,
 * generations and sealed texts only. A record's text is the journal line's JSON without its
 * envelope (seq, ts, batchEnd) and checksum — exactly what the core gated — so no text is
 * rewritten, and nothing here interprets it (a compaction copies lines and writes the checkpoint
 * the core planned). Every byte written passes the FsLayer gate (the second net) once more.
 */
import os from 'node:os';
import path from 'node:path';
import { appendDurably, ensurePrivateDir } from '../../durable/durableFile.js';
import { UnsafeFileError } from '../../durable/errors.js';
import { appendFailureError } from './journal/appendFailure.js';
import { type FsLayer, nodeFs } from '../../durable/fsLayer.js';
import { gateFs } from '../../domain/secrets/finalGate.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { StoreError } from '../../domain/errors.js';
import type {
  ArchivedGeneration, Backend, BlobStore, Fence, Gated, Leases, ListedRow, Position, ReadRangeOptions, ReadRangeResult, SealedHeader, SealedRecord, SessionRow, Snapshot,
  ListNarrowing, StateStore, TrashedSession, UpdateCursor,
} from '../../core/port.js';
import { blobSize, putBlob, readBlob, verifyBlob } from './blobs/blobFiles.js';
import { attachKey, keyMismatch, storeKeyOf } from './journal/cipher.js';
import { type CompactionStep, compactJournal } from './journal/compact.js';
import { createJournal, createJournalFrom } from './journal/create.js';
import { decodeLine, encodeHeaderLine, encodeRecordLine, JOURNAL_FORMAT, JOURNAL_VERSION } from './journal/format.js';
import { scanLines } from './journal/lines.js';
import { type JournalHandle, openJournal } from './journal/open.js';
import { readPage, seekAfterSeq } from './journal/read.js';
import { crcOf } from './journal/scan.js';
import { checkMarker } from './encryptionMarker.js';
import { openStoreRoot } from './storeRoot.js';
import { listHistory, removeStaleTemps } from './history.js';
import { KernelLock } from './kernelLock.js';
import { StoreLayout } from './layout.js';
import { checkPersistAt, SecondNet, Subscribers } from '../shared.js';
import { sessionIdOfPath } from './sessionPath.js';
import { finishTrash, liveLeftovers, purgeSession, restoreRefusal, restoreSession, trashSession } from './lineage.js';
import { finishPurges, nothingLeft } from './purge.js';
import { DEFAULT_LEASE_STALE_MS, preloadLeases, SessionLease } from './leases.js';
import { deleteStateValue, getStateValue, writeStateValue } from './runtime/stateValues.js';
import { readIndexEntry } from './sessionIndex.js';
import { IndexWriter } from './indexWriter.js';
import { listRows } from './listRows.js';
import { trashRows } from './trashRows.js';
import { stringifyExact } from '../../domain/exactJson.js';

export interface FileBackendOptions {
  fs?: FsLayer;
  leaseStaleMs?: number;
  /** Cross-process writer leases (default true). */
  leases?: boolean;
  readOnly?: boolean;
  encryptionKey?: StoreKey;
  warn?: (message: string) => void;
  /** A session `list` left out because it cannot be read (its id and the error's kind): a command can still name it. */
  onUnlisted?: (sessionId: string, kind: string) => void;
  hooks?: FileBackendHooks;
}

/**
 * Test seams: compactionStep, awaited after each step of a compaction (a test may throw there,
 * or wait); purgeChecked, inside trash empty's purge after its check, with the session's lock
 * held (a test may stall there).
 */
export interface FileBackendHooks {
  compactionStep?: (step: CompactionStep) => void | Promise<void>;
  purgeChecked?: (sessionId: string) => void | Promise<void>;
}

/** A writer's session as this backend holds it: its lease, token and open journal. */
interface Held {
  fence: Fence;
  lease: SessionLease | undefined;
  handle?: JournalHandle;
  /** Its index entry, rewritten after commits (indexWriter.ts). */
  index: IndexWriter;
  /** A write failed with an unknown outcome (the journal may hold bytes whose sync failed). */
  failed?: boolean;
}

const NOT_WRITTEN_LEASE = (sessionId: string) =>
  new StoreError('LeaseLost', 'this instance no longer holds the session; nothing was written', { sessionId, outcome: 'notWritten' });

export class FileBackend implements Backend {
  readonly kind = 'file' as const;
  readonly display: string;
  readonly encrypted: boolean;
  private readonly fsl: FsLayer;
  private readonly layout: StoreLayout;
  private readonly useLeases: boolean;
  private readonly staleMs: number;
  private readonly readOnly: boolean;
  private readonly key: StoreKey | undefined;
  private readonly hooks: FileBackendHooks;
  private readonly warn: (message: string) => void;
  private readonly onUnlisted: ((sessionId: string, kind: string) => void) | undefined;
  private readonly held = new Map<string, Held>();
  private readonly subscribers = new Subscribers();
  private readonly toolSeqs = new Map<string, number>();
  /**
   * Sessions whose write failed with an unknown outcome, after their lease was given back: the
   * writer's handle is kept, read-only, as this process's view of them — its position is what was
   * acknowledged, while the journal may hold the bytes whose sync failed, which must not be read
   * as committed here. No index entry is written for them. Another process reads the journal.
   */
  private readonly frozen = new Map<string, JournalHandle>();
  private tokens = 0;
  private readonly net = new SecondNet((rule) => new StoreError('SecretRejected', `a registered secret or a credential reached the file backend (rule: ${rule}); nothing was written`, { rule }));

  constructor(root: string, opts: FileBackendOptions = {}) {
    this.display = path.resolve(root);
    this.layout = new StoreLayout(this.display);
    // An FsLayer of its own: the store key is attached to this instance's layer only.
    // The FsLayer gate (domain/secrets/finalGate.ts) as the second net under the core's gate:
    // every byte this backend writes is checked once more at its one write call.
    this.fsl = Object.create(gateFs(opts.fs ?? nodeFs, this.bytesNet)) as FsLayer;
    this.useLeases = opts.leases ?? true;
    this.staleMs = Math.max(5000, opts.leaseStaleMs ?? DEFAULT_LEASE_STALE_MS);
    this.readOnly = opts.readOnly ?? false;
    this.key = opts.encryptionKey;
    this.hooks = opts.hooks ?? {};
    this.warn = opts.warn ?? (() => {});
    this.onUnlisted = opts.onUnlisted;
    if (this.key) attachKey(this.fsl, { key: this.key, gate: (plain) => this.net.matchBytes(plain) });
    this.encrypted = this.key !== undefined;
    openStoreRoot(this.fsl, this.layout, this.key, this.readOnly);
  }

  secondNet(find: (text: string) => string | undefined, findInBytes?: (bytes: Buffer) => string | undefined): void {
    this.net.install(find, findInBytes);
  }

  /** What the FsLayer gate checks against: the core's secrets, once installed. */
  private readonly bytesNet = { size: 1, findInBytes: (bytes: Buffer) => this.net.matchBytes(bytes) };

  // ---- leases ------------------------------------------------------------------------------

  readonly leases: Leases = {
    acquire: async (sessionId) => {
      if (this.readOnly) throw new StoreError('ReadOnly', 'cannot open a session for writing: the store is open for inspection only', { reason: 'readOnlyStore' });
      if (this.held.has(sessionId)) {
        throw new StoreError('SessionLocked', `session ${sessionId} is open for writing in this process`, { sessionId, holder: { pid: process.pid, hostname: os.hostname() } });
      }
      let lease: SessionLease | undefined;
      if (this.useLeases) {
        // The store still under this instance's key: a rekey meanwhile is KeyMismatch before anything is written.
        checkMarker(this.fsl, this.layout, this.key, true);
        lease = await SessionLease.acquire(this.fsl, this.layout, sessionId, this.staleMs);
      }
      const fence = { sessionId, token: ++this.tokens };
      this.held.set(sessionId, { fence, lease, index: new IndexWriter(this.fsl, this.layout, sessionId, this.warn) });
      return fence;
    },
    check: (fence) => this.fenceError(fence),
    release: async (fence) => {
      const h = this.held.get(fence.sessionId);
      if (!h || h.fence.token !== fence.token) return;
      this.held.delete(fence.sessionId);
      if (h.handle && h.failed) {
        h.index.abandon();
        this.frozen.set(fence.sessionId, h.handle);
      } else if (h.handle) {
        h.index.schedule(() => h.handle); // a write open vouches for what it verified (and fsynced), commits or not
        await h.index.flush();
        this.fsl.closeSync(h.handle.fd);
      }
      // Once nothing of the id is left (a purge), its lock file goes too (leases.ts).
      await h.lease?.release({ removeKernelLock: nothingLeft(this.fsl, this.layout, fence.sessionId) }).catch(() => undefined);
    },
  };

  private fenceError(fence: Fence): StoreError | undefined {
    const h = this.held.get(fence.sessionId);
    if (!h || h.fence.token !== fence.token) return NOT_WRITTEN_LEASE(fence.sessionId);
    const lost = h.lease?.check(fence.sessionId);
    if (lost) return lost;
    let ino: number | undefined;
    try {
      ino = h.handle ? this.fsl.lstatSync(this.layout.journal(fence.sessionId))?.ino : undefined;
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      const errno = typeof code === 'string' ? { errno: code } : {};
      return new StoreError('NotWritten', `the journal could not be checked (${errno.errno ?? 'I/O error'}); nothing changed`, { stage: 'preCommit', ...errno });
    }
    if (h.handle && ino !== h.handle.ino) {
      return new StoreError('Conflict', 'the journal was replaced by another program; nothing was written and the session is read-only in this process', { reason: 'journalChanged' });
    }
    return undefined;
  }

  /** The handle this process reads a session through, if it keeps one (a writer's, or a fail-stopped one's). */
  private viewOf(id: string): JournalHandle | undefined {
    return this.held.get(id)?.handle ?? this.frozen.get(id);
  }

  private writer(fence: Fence): Held & { handle: JournalHandle } {
    const err = this.fenceError(fence);
    if (err) throw err;
    const h = this.held.get(fence.sessionId) as Held;
    if (!h.handle) h.handle = this.openWritable(fence.sessionId);
    return h as Held & { handle: JournalHandle };
  }

  private openWritable(id: string): JournalHandle {
    removeStaleTemps(this.fsl, this.layout, id);
    return openJournal(this.fsl, this.layout, id, { writable: true, hint: readIndexEntry(this.fsl, this.layout, id) });
  }

  // ---- rows ----------------------------------------------------------------------------------

  private trashedJournal(id: string): string {
    return path.join(this.layout.trashSessionDir(id), 'session', 'journal.jsonl');
  }

  async load(sessionId: string, opts: { writer?: Fence } = {}): Promise<SessionRow> {
    if (opts.writer) {
      const h = this.held.get(sessionId);
      if (h && h.fence.token === opts.writer.token && this.fsl.lstatSync(this.layout.journal(sessionId))) {
        if (!h.handle) h.handle = this.openWritable(sessionId);
        const row = this.rowOf(h.handle, false);
        h.handle.recovered = undefined; // reported by the load that repaired it
        return row;
      }
    }
    return this.readRow(sessionId);
  }

  private readRow(id: string): SessionRow {
    const h = this.viewOf(id);
    if (h) return this.rowOf(h, false);
    let trashed = false;
    let file: string | undefined;
    if (!this.fsl.lstatSync(this.layout.journal(id))) {
      if (!this.fsl.lstatSync(this.trashedJournal(id))) throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
      trashed = true;
      file = this.trashedJournal(id);
    }
    const handle = openJournal(this.fsl, this.layout, id, { writable: false, ...(file ? { file } : { hint: readIndexEntry(this.fsl, this.layout, id) }) });
    try {
      return this.rowOf(handle, trashed);
    } finally {
      this.fsl.closeSync(handle.fd);
    }
  }

  private rowOf(handle: JournalHandle, trashed: boolean): SessionRow {
    const { format: _f, version: _v, ...header } = handle.header as unknown as Record<string, unknown>;
    const p = handle.position;
    const id = handle.header.sessionId;
    const snapshot: Snapshot = {
      turn: p.turn ? JSON.stringify(p.turn) : null,
      runtime: p.runtime ? JSON.stringify(p.runtime) : null,
      usage: p.usage ? JSON.stringify(p.usage) : null,
      firstMessage: handle.firstMessage ?? null,
      lastMessage: handle.lastMessage ?? null,
      header: p.header ? JSON.stringify(p.header) : null,
    };
    return {
      sessionId: id,
      headerText: JSON.stringify(header),
      createdAt: handle.header.createdAt,
      updatedAt: p.lastTs !== undefined && p.lastTs > handle.header.createdAt ? p.lastTs : handle.header.createdAt,
      generation: handle.generation,
      firstSeq: handle.firstSeq,
      lastSeq: p.lastSeq,
      lastTs: p.lastTs ?? null,
      records: p.records,
      storedBytes: p.bytes, // the journal's size: what the file store always reported as a generation's bytes
      snapshot,
      trashed,
      toolSeq: Math.max(this.toolSeqs.get(id) ?? 0, p.runtime?.toolSeq ?? 0),
      ...(handle.recovered ? { recovered: handle.recovered } : {}),
    };
  }

  // ---- writes --------------------------------------------------------------------------------

  private headerLine(header: SealedHeader): Buffer {
    const members = JSON.parse(header.text) as Record<string, unknown>;
    const cipher = storeKeyOf(this.fsl);
    return encodeHeaderLine({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, ...members, sessionId: header.sessionId }, cipher && { ...cipher, sessionId: header.sessionId });
  }

  /** `batched`: an append of several records carries batchEnd on each line (all or nothing on reopen); a create's are whole by its rename. */
  private lines(id: string, records: ReadonlyArray<SealedRecord>, batched = true): Buffer[] {
    const batchEnd = batched && records.length > 1 ? (records[records.length - 1] as SealedRecord).seq : undefined;
    const key = storeKeyOf(this.fsl);
    const cipher = key && { ...key, sessionId: id };
    return records.map((r) => encodeRecordLine(r.seq, r.ts, batchEnd, r.text, cipher));
  }

  async create(header: Gated<SealedHeader>, initial: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, fence: Fence): Promise<void> {
    const err = this.fenceError(fence);
    if (err) throw err;
    const id = header.sessionId;
    if (this.fsl.lstatSync(this.layout.journal(id))) throw new StoreError('Conflict', 'a session with this id exists already; nothing was written', { reason: 'exists', sessionId: id });
    this.net.check(header.text, ...initial.map((r) => r.text), ...Object.values(snapshot));
    const line = this.headerLine(header);
    if (initial.length === 0) this.fsl.closeSync(createJournal(this.fsl, this.layout, id, line));
    else await createJournalFrom(this.fsl, this.layout, id, line, this.lines(id, initial, false));
    const h = this.held.get(id) as Held;
    h.index.schedule(() => (h.handle ??= this.openWritable(id)));
    await h.index.flush(); // a new session is listed from its entry at once (it costs no sync)
    this.poke(id);
  }

  async persist(fence: Fence, records: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, at: Position & { alone?: boolean }): Promise<void> {
    const h = this.writer(fence);
    const { handle } = h;
    const p = handle.position;
    checkPersistAt({ generation: handle.generation, lastSeq: p.lastSeq }, at, records.length);
    this.net.check(...records.map((r) => r.text), ...Object.values(snapshot));
    const lines = this.lines(fence.sessionId, records);
    const buf = Buffer.concat(lines);
    if (this.fsl.fstatSync(handle.fd).size !== p.bytes) {
      throw new StoreError('Conflict', 'the journal was changed by another writer; nothing was written and the session is read-only in this process', { reason: 'journalChanged' });
    }
    try {
      await appendDurably(this.fsl, handle.fd, buf, p.bytes, { alone: at.alone ?? false });
    } catch (e) {
      const err = appendFailureError(e);
      if (err instanceof StoreError && err.kind === 'Uncertain') h.failed = true;
      throw err;
    }
    const last = records[records.length - 1] as SealedRecord;
    const lastLine = lines[lines.length - 1] as Buffer;
    Object.assign(p, {
      bytes: p.bytes + buf.length, lastSeq: last.seq, records: p.records + records.length,
      lastCrc: crcOf(lastLine.subarray(0, lastLine.length - 1)), lastTs: last.ts,
      turn: snapshot.turn === null ? null : JSON.parse(snapshot.turn),
      runtime: snapshot.runtime === null ? undefined : JSON.parse(snapshot.runtime),
      usage: snapshot.usage === null ? undefined : JSON.parse(snapshot.usage),
      header: snapshot.header === null ? undefined : JSON.parse(snapshot.header),
    });
    if (snapshot.firstMessage !== null) handle.firstMessage = snapshot.firstMessage;
    if (snapshot.lastMessage !== null) handle.lastMessage = snapshot.lastMessage;
    h.index.schedule(() => h.handle);
    this.poke(fence.sessionId);
  }

  async readRange(sessionId: string, range: ReadRangeOptions): Promise<ReadRangeResult> {
    const live = this.viewOf(sessionId);
    let handle: JournalHandle;
    let own = false;
    const current = live ?? this.openReading(sessionId);
    if (range.generation === undefined || range.generation === current.generation) {
      handle = current;
      own = !live;
    } else {
      if (!live) this.fsl.closeSync(current.fd);
      if (range.generation > current.generation) throw new StoreError('InvalidArgument', `generation ${range.generation} does not exist (the current one is ${current.generation})`, { path: 'generation' });
      handle = openJournal(this.fsl, this.layout, sessionId, { writable: false, file: this.layout.archive(sessionId, range.generation) });
      own = true;
    }
    try {
      return this.readFrom(handle, range);
    } finally {
      if (own) this.fsl.closeSync(handle.fd);
    }
  }

  private openReading(id: string): JournalHandle {
    if (this.fsl.lstatSync(this.layout.journal(id))) return openJournal(this.fsl, this.layout, id, { writable: false, hint: readIndexEntry(this.fsl, this.layout, id) });
    if (this.fsl.lstatSync(this.trashedJournal(id))) return openJournal(this.fsl, this.layout, id, { writable: false, file: this.trashedJournal(id) });
    throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
  }

  /** A page of sealed records (journal/read.ts readPage: every line's checksum and seq checked; damage is Corrupt naming its line). */
  private readFrom(handle: JournalHandle, range: ReadRangeOptions): ReadRangeResult {
    const p = handle.position;
    const afterSeq = range.afterSeq ?? 0;
    const from = afterSeq < handle.firstSeq ? handle.dataStart : seekAfterSeq(this.fsl, handle.fd, handle.dataStart, p.bytes, afterSeq);
    const page = readPage(this.fsl, handle.fd, {
      from, end: p.bytes, afterSeq, limit: range.limit, maxBytes: range.maxBytes ?? Number.MAX_SAFE_INTEGER, firstSeq: handle.firstSeq,
      ...(range.kinds ? { kinds: new Set(range.kinds) } : {}), ...(handle.cipher ? { cipher: handle.cipher } : {}),
    });
    // A record's text is its line without the envelope: the JSON the core gated, re-serialized as
    // written (every line is canonical JSON, checked when it was written or scanned).
    const records: SealedRecord[] = page.records.map(({ seq, ts, ...rec }) => ({ seq, ts, kind: rec.kind, text: stringifyExact(rec) }));
    return { generation: handle.generation, records, scannedSeq: page.scannedSeq, lastSeq: p.lastSeq };
  }

  async rotate(fence: Fence, r: { throughSeq: number; checkpoint: Gated<SealedRecord>; expect: Position }): Promise<{ generation: number; archived: ArchivedGeneration }> {
    const h = this.writer(fence);
    const p = h.handle.position;
    if (h.handle.generation !== r.expect.generation || p.lastSeq !== r.expect.lastSeq) {
      throw new StoreError('Conflict', 'the session changed since it was read (lastSeq or generation); nothing was written', { reason: 'expectedLastSeq', lastSeq: p.lastSeq, outcome: 'notWritten' });
    }
    this.net.check(r.checkpoint.text);
    const firstSeq = h.handle.firstSeq;
    h.index.postpone(); // written once, after the rotation (below), not in the middle of it
    let res;
    try {
      // The handle follows the new journal in place from the rename on (compact.ts swapInto).
      res = await compactJournal(this.fsl, this.layout, h.handle, {
        throughSeq: r.throughSeq, ts: r.checkpoint.ts, checkpointText: r.checkpoint.text, fence: () => this.fenceError(fence),
        ...(this.hooks.compactionStep ? { onStep: this.hooks.compactionStep } : {}),
      });
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'Uncertain') h.failed = true;
      throw err;
    }
    h.index.schedule(() => h.handle);
    await h.index.flush(); // the entry of the old journal vouches for nothing now: replaced before the answer
    this.poke(fence.sessionId);
    return {
      generation: res.generation,
      archived: { generation: res.archived.generation, firstSeq, lastSeq: r.expect.lastSeq, throughSeq: r.throughSeq, records: res.archived.records, storedBytes: res.archived.bytes },
    };
  }

  async history(sessionId: string): Promise<ArchivedGeneration[]> {
    this.readRow(sessionId);
    return listHistory(this.fsl, this.layout, sessionId).map((e) => ({
      generation: e.generation, firstSeq: 1, lastSeq: e.throughSeq, throughSeq: e.throughSeq, records: e.records, storedBytes: e.bytes,
    }));
  }

  // ---- lineage -------------------------------------------------------------------------------

  /** Before a trash or purge: the pending index write lands first (a trash moves the entry with the session). */
  private async closeHandle(fence: Fence): Promise<void> {
    const h = this.held.get(fence.sessionId);
    await h?.index.flush();
    if (h?.handle) {
      this.fsl.closeSync(h.handle.fd);
      h.handle = undefined;
    }
  }

  async trash(fence: Fence): Promise<void> {
    const err = this.fenceError(fence);
    if (err) throw err;
    await this.closeHandle(fence);
    const id = fence.sessionId;
    // A delete (or restore) a crash cut short left parts in their live places: the repeated delete completes it.
    if (!this.fsl.lstatSync(this.layout.journal(id)) && liveLeftovers(this.fsl, this.layout, id)) finishTrash(this.fsl, this.layout, id);
    else trashSession(this.fsl, this.layout, id);
    this.poke(id);
  }

  async leftovers(sessionId: string): Promise<boolean> {
    return liveLeftovers(this.fsl, this.layout, sessionId) || this.fsl.lstatSync(path.join(this.layout.trashDir, `.purging-${sessionId}`)) !== undefined;
  }

  async inTrash(sessionId: string): Promise<boolean> {
    return this.fsl.lstatSync(this.trashedJournal(sessionId)) !== undefined;
  }

  async restore(fence: Fence): Promise<void> {
    const err = this.fenceError(fence);
    if (err) throw err;
    if (!this.fsl.lstatSync(this.trashedJournal(fence.sessionId))) throw new StoreError('SessionNotFound', 'the session is not in the trash', { sessionId: fence.sessionId });
    const refused = restoreRefusal(this.fsl, this.layout, fence.sessionId);
    if (refused) throw refused;
    restoreSession(this.fsl, this.layout, fence.sessionId);
    this.poke(fence.sessionId);
  }

  /** Purges (purge.ts): the removal under the session's lease; the lease then ends, its lock file removed once nothing of the id is left. */
  async purge(fence: Fence): Promise<void> {
    const err = this.fenceError(fence);
    if (err) throw err;
    await this.closeHandle(fence);
    await this.finishPurges(fence.sessionId); // other purges a crash cut short first (this id's is finished by its own purge)
    purgeSession(this.fsl, this.layout, fence.sessionId);
    await this.leases.release(fence);
    this.poke(fence.sessionId);
  }

  async purgeTrashed(fence: Fence): Promise<void> {
    const err = this.fenceError(fence);
    if (err) throw err;
    const id = fence.sessionId;
    // The check, under the lease: it stays true until the lease is released.
    if (this.fsl.lstatSync(this.layout.journal(id)) || (!this.fsl.lstatSync(this.layout.trashSessionDir(id)) && !liveLeftovers(this.fsl, this.layout, id))) {
      throw new StoreError('SessionNotFound', 'the session is not in the trash', { sessionId: id });
    }
    await this.hooks.purgeChecked?.(id);
    purgeSession(this.fsl, this.layout, id);
    await this.leases.release(fence);
  }

  async finishPurges(holding?: string): Promise<string[]> {
    return finishPurges({ fsl: this.fsl, layout: this.layout, lease: (id) => this.leaseFor(id) }, holding);
  }

  /** A lease held apart from the core's fences (finishing another id's cut-short purge). */
  private async leaseFor(id: string): Promise<SessionLease | undefined> {
    if (!this.useLeases) return undefined;
    if (this.held.has(id)) throw new StoreError('SessionLocked', `session ${id} is open for writing in this process`, { sessionId: id });
    return SessionLease.acquire(this.fsl, this.layout, id, this.staleMs);
  }

  // ---- listings ------------------------------------------------------------------------------

  private ids(dir: string): string[] {
    try {
      return this.fsl.readdirSync(dir).filter((n) => !n.startsWith('.'));
    } catch {
      return [];
    }
  }

  async listByUpdate(o: { before?: UpdateCursor; limit: number; includeTrashed: boolean; narrow?: ListNarrowing }): Promise<ListedRow[]> {
    return listRows({
      fsl: this.fsl, layout: this.layout, scan: (id) => this.readRow(id), held: (id) => this.viewOf(id) !== undefined, warn: this.warn,
      ...(this.onUnlisted ? { unlisted: this.onUnlisted } : {}),
    }, o);
  }

  async listTrash(): Promise<TrashedSession[]> {
    return trashRows(this.fsl, this.layout);
  }


  /**
   * The scratch directory is the reservation: the core's scratch space for this backend lives
   * in sessions/<id>/scratch (scratchDir), whose tool-NNNNNN directories and issued.json the
   * core's ToolRuns reads back as the floor it passes here; this process's own reservations are
   * kept in memory above it.
   */
  async reserveToolSeq(fence: Fence, floor: number): Promise<number> {
    const err = this.fenceError(fence);
    if (err) throw err;
    const next = Math.max(this.toolSeqs.get(fence.sessionId) ?? 0, floor) + 1;
    this.toolSeqs.set(fence.sessionId, next);
    return next;
  }

  // ---- blobs and state -----------------------------------------------------------------------

  readonly blobs: BlobStore = {
    put: async (bytes) => {
      this.net.checkBytes(bytes);
      const ref = await putBlob(this.fsl, this.layout, bytes);
      return { sha256: ref.replace(/^sha256:/, ''), size: bytes.length };
    },
    size: async (sha256) => blobSize(this.fsl, this.layout, `sha256:${sha256}`),
    read: async (sha256, range) => {
      const ref = `sha256:${sha256}`;
      if (blobSize(this.fsl, this.layout, ref) === undefined) return undefined;
      if (range && range.offset === 0) verifyBlob(this.fsl, this.layout, ref);
      return readBlob(this.fsl, this.layout, ref, range).bytes;
    },
  };

  readonly state: StateStore = {
    set: async (fence, entry) => {
      const err = this.fenceError(fence);
      if (err) throw err;
      this.net.check(entry.key, entry.text);
      writeStateValue(this.fsl, this.layout, fence.sessionId, entry.key, entry.text);
    },
    get: async (sessionId, key) => {
      this.readRow(sessionId);
      const v = getStateValue(this.fsl, this.layout, sessionId, key);
      return v === undefined ? undefined : `${stringifyExact({ value: v })}\n`;
    },
    delete: async (fence, key) => {
      const err = this.fenceError(fence);
      if (err) throw err;
      return deleteStateValue(this.fsl, this.layout, fence.sessionId, key);
    },
  };

  // ---- changes and the rest ------------------------------------------------------------------

  private poke(sessionId: string): void {
    this.subscribers.poke(sessionId);
  }

  changes(sessionId: string, poke: () => void): () => void {
    // Another process's commits: a poll of the journal's size and identity (a hint only).
    const seen = () => {
      const st = this.fsl.lstatSync(this.layout.journal(sessionId));
      return st ? `${st.ino}:${st.size}` : '';
    };
    let last = seen(); // as of the subscribe: a change from here on pokes
    const timer = setInterval(() => {
      const now = seen();
      if (now !== last) {
        last = now;
        poke();
      }
    }, 100);
    timer.unref();
    return this.subscribers.add(sessionId, poke, () => clearInterval(timer));
  }

  sessionIdOfPath(p: string): string {
    return sessionIdOfPath(this.display, p);
  }

  /** Where the core's scratch space puts a session's tool directories (sessions/<id>/scratch). */
  scratchDir(sessionId: string): string {
    return this.layout.scratchDir(sessionId);
  }

  /**
   * Marks a store as served by this process for as long as it lives: a shared kernel lock on
   * locks/.store.flock, which a rekey takes exclusively (rekey.ts). Taken before the store is
   * opened (its encryption marker read), so a rekey under way is told apart from an interrupted
   * one: KeyMismatch rekeyInProgress. While it is held, no rekey starts. Hand it to the instance
   * with `holdServingLock`.
   */
  static async lockForServing(root: string, fsl: FsLayer = nodeFs): Promise<KernelLock | undefined> {
    const layout = new StoreLayout(path.resolve(root));
    let lock: KernelLock | undefined;
    try {
      ensurePrivateDir(fsl, layout.root);
      ensurePrivateDir(fsl, layout.locksDir);
      lock = await KernelLock.tryAcquire(fsl, layout.storeLock, 'shared');
    } catch (err) {
      if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: ${err.path} ${err.reason}`, { reason: err.reason });
      throw err;
    }
    if (!lock) throw keyMismatch('the store is being rekeyed by another process: start the sidecar again when session-sidecar rekey has finished', 'rekeyInProgress');
    return lock;
  }

  /** The store's kernel lock, shared, while this instance serves (lockForServing takes it): released at close. */
  private serving: KernelLock | undefined;

  holdServingLock(lock: KernelLock | undefined): void {
    this.serving = lock;
  }

  /** Test seam: waits until no index write is pending or in flight. */
  async indexSettled(): Promise<void> {
    while ([...this.held.values()].some((h) => h.index.busy)) await Promise.all([...this.held.values()].map((h) => h.index.flush()));
  }

  warmUp(): void {
    if (this.useLeases) preloadLeases();
  }

  /** Test seam: drops every lease and handle as a killed process would (nothing released cleanly). */
  abandon(): void {
    for (const h of this.held.values()) {
      h.index.abandon();
      if (h.handle) this.fsl.closeSync(h.handle.fd);
      h.lease?.abandon();
    }
    this.held.clear();
  }

  async close(): Promise<void> {
    for (const h of [...this.held.values()]) await this.leases.release(h.fence);
    for (const handle of this.frozen.values()) this.fsl.closeSync(handle.fd);
    this.frozen.clear();
    this.subscribers.clear();
    this.serving?.release();
    this.serving = undefined;
  }
}
