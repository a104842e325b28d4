/**
 * The index entry of a session held for writing (index/<id>.json, sessionIndex.ts), rewritten
 * at most every INDEX_DELAY_MS while commits land, and once more when the session is released.
 * It never delays a commit: the entry is a cache, trusted only while it matches the journal
 * (inode and length), so a lost or late write costs a scan, never a wrong answer. It vouches
 * only for bytes known durable: it is taken from the writer's handle, whose position advances
 * only after the bytes were fdatasynced.
 */
import type { FsLayer } from '../../durable/fsLayer.js';
import type { JournalHandle } from './journal/open.js';
import type { StoreLayout } from './layout.js';
import { entryOf, writeIndexEntry } from './sessionIndex.js';

/** How long committed appends may wait before their index entry is rewritten. */
export const INDEX_DELAY_MS = 50;

export class IndexWriter {
  private dirty = false;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private abandoned = false;

  constructor(
    private readonly fsl: FsLayer,
    private readonly layout: StoreLayout,
    private readonly sessionId: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** After a commit: the entry of `handle` is written within INDEX_DELAY_MS (or after the write in flight). */
  schedule(handle: () => JournalHandle | undefined): void {
    if (this.abandoned) return; // a "killed" process schedules nothing more
    this.current = handle;
    this.dirty = true;
    if (this.timer || this.writing) return;
    this.timer = setTimeout(() => void this.flush(), INDEX_DELAY_MS);
  }

  private current: () => JournalHandle | undefined = () => undefined;

  /** Writes a pending entry now and waits for every write in flight. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (!this.dirty || this.abandoned) return;
    const w = this.writeOnce();
    this.writing = w;
    try {
      await w;
    } finally {
      if (this.writing === w) this.writing = undefined;
    }
    if (this.dirty) this.schedule(this.current); // commits that landed meanwhile: their own write, after the delay
  }

  /** Cancels a pending write (it stays due): the caller writes the entry itself when it is done (a compaction). */
  postpone(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Whether a write is pending or in flight (a test waits for none). */
  get busy(): boolean {
    return this.timer !== undefined || this.writing !== undefined;
  }

  /** Drops the pending write as a killed process would (one in flight finishes, as it could before a real kill). */
  abandon(): void {
    this.abandoned = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async writeOnce(): Promise<void> {
    this.dirty = false;
    try {
      const handle = this.current();
      if (handle) await writeIndexEntry(this.fsl, this.layout, entryOf(handle));
    } catch {
      this.warn(`index entry of session ${this.sessionId} not written; it will be rebuilt from the journal`);
    }
  }
}
