import type { FsLayer } from '../../durable/fsLayer.js';
import type { JournalHandle } from './journal/open.js';
import type { JournalWriter } from './journal/writer.js';
import type { StoreLayout } from './layout.js';
import { entryOf, type IndexEntry, latest, writeIndexEntry } from './sessionIndex.js';
import type { SessionLease } from './leases.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { effectiveHeader } from '../../domain/sessionUpdate.js';
import { NO_RUNTIME } from '../../domain/runtimeCounters.js';
import { ToolRuns } from '../../scratch/toolRuns.js';
import type { OpenedSession, OpenMode, SecretsStatus } from '../../domain/types.js';

/** How long committed appends may wait before their index entry is rewritten. */
export const INDEX_DELAY_MS = 50;

/**
 * A session open in this store instance: its journal handle, its writer (write mode), and
 * its index entry, rewritten at most every INDEX_DELAY_MS while appends commit (and at
 * close). It never delays an append. A reader that meets an entry older than the journal
 * verifies just the journal's newer bytes (see list.ts), so results stay exact.
 */
export class OpenSession {
  private updatedAt: string;
  private indexDirty = false;
  private indexWriting: Promise<void> | undefined;
  private indexTimer: NodeJS.Timeout | undefined;
  private toolRuns: ToolRuns | undefined;

  constructor(
    private readonly fsl: FsLayer,
    private readonly layout: StoreLayout,
    readonly handle: JournalHandle,
    readonly mode: OpenMode,
    readonly writer: JournalWriter | undefined,
    private readonly warn: (message: string) => void,
    /** The session's known secrets: values in memory only. */
    readonly secrets: SecretSet,
    private secretsStatus: SecretsStatus,
    /** The cross-process writer lease (write mode). */
    readonly lease?: SessionLease,
    /** Told every entry written (the list cache, listCache.ts). */
    private readonly onIndexWritten: (entry: IndexEntry) => void = () => {},
  ) {
    this.updatedAt = latest(handle.position.lastTs, handle.header.createdAt);
  }

  get id(): string {
    return this.handle.header.sessionId;
  }

  /** The session's tool runs in this process (created at first use: it lists the scratch directories). */
  tools(): ToolRuns {
    this.toolRuns ??= new ToolRuns(this.fsl, this.layout, this.id, (this.handle.position.runtime ?? NO_RUNTIME).toolSeq, this.handle.header.keepScratch);
    return this.toolRuns;
  }

  describe(): OpenedSession {
    const { position, recovered } = this.handle;
    const header = effectiveHeader(this.handle.header, position.header);
    const { secretEnv: _names, ...shown } = header;
    const mode = this.writer?.stoppedReason ? 'read' : this.mode; // a fail-stopped writer writes no more
    return {
      ...shown, mode, lastSeq: position.lastSeq, secrets: this.secretsStatus, turn: position.turn ?? null,
      ...(recovered ? { recovered } : {}),
    };
  }

  /** A later open registered more secrets (they were added to `secrets`). */
  addSecrets(status: SecretsStatus): void {
    this.secretsStatus = status;
  }

  indexEntry(): IndexEntry {
    return entryOf(this.handle, this.updatedAt);
  }

  /** Called in commit order with the summaries of the committed records. */
  noteCommitted(summaries: Array<string | undefined>, ts: string): void {
    for (const s of summaries) {
      if (s === undefined) continue;
      this.handle.firstMessage ??= s;
      this.handle.lastMessage = s;
    }
    this.updatedAt = ts;
    this.scheduleIndexWrite();
  }

  private abandoned = false;

  scheduleIndexWrite(): void {
    // An abandoned session belongs to a "killed" process: it schedules nothing more (an index
    // write already in flight when it was abandoned finishes, as it could before a real kill).
    if (this.abandoned) return;
    this.indexDirty = true;
    if (this.indexTimer || this.indexWriting) return;
    this.indexTimer = setTimeout(() => void this.writeIndexNow(), INDEX_DELAY_MS);
  }

  async writeIndexNow(): Promise<void> {
    clearTimeout(this.indexTimer);
    this.indexTimer = undefined;
    while (this.indexWriting) await this.indexWriting;
    this.indexWriting = this.writeIndexLoop();
    await this.indexWriting;
  }

  /** Writes the entry once; commits that arrived meanwhile schedule the next write (after the delay). */
  private async writeIndexLoop(): Promise<void> {
    this.indexDirty = false;
    try {
      this.onIndexWritten(await writeIndexEntry(this.fsl, this.layout, this.indexEntry()));
    } catch {
      this.warn(`index entry of session ${this.id} not written; it will be rebuilt from the journal`);
    } finally {
      this.indexWriting = undefined;
    }
    if (this.indexDirty) {
      this.indexDirty = false;
      this.scheduleIndexWrite();
    }
  }

  /** Drops the session as a killed process would (see FileSessionStore.abandon). */
  abandon(): void {
    this.abandoned = true;
    clearTimeout(this.indexTimer);
    this.lease?.abandon();
    try {
      this.fsl.closeSync(this.handle.fd);
    } catch {
      // already closed
    }
  }

  /** Waits for in-flight appends and index writes, then releases the file. */
  async close(): Promise<void> {
    await this.writer?.drain();
    await this.toolRuns?.cleanup();
    if (this.indexDirty || this.indexTimer) await this.writeIndexNow();
    while (this.indexWriting) await this.indexWriting;
    clearTimeout(this.indexTimer);
    this.fsl.closeSync(this.handle.fd);
    await this.lease?.release();
  }
}
