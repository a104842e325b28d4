import type { ReadPage, ReadOptions, StoredRecord } from '../../domain/types.js';
import { type Cursor, firstArchive, handOnArchived, hole, WATCH_PAGE } from './watchArchives.js';

export interface WatchSource {
  read(id: string, opts: ReadOptions): Promise<ReadPage>;
}

export interface Watch {
  lastSeq: number;
  stop(): void;
}

/**
 * Delivers a session's records after `afterSeq`, then each newly committed one, in seq order,
 * each exactly once: a pump reads from the last delivered seq whenever it is poked — by a
 * commit in this process, or by a poll that sees the journal change (another process wrote
 * it, or a compaction replaced it). A journal that starts with a checkpoint above the cursor
 * was compacted past records not delivered yet: they come from the archived generations, in
 * order (watchArchives.ts), then the journal is read on after them. The cursor moves only by
 * the records handed to `deliver`, and each page handed on starts right after it: whatever
 * cannot be read (an archive gone, damage, the session deleted) ends the watch with 'error',
 * never with a skip. `deliver` returning false ends the watch; the next page is read only once
 * it settled, so a watch holds at most one page in memory whatever the client's pace.
 */
export async function watchRecords(
  /** Calls `poke` whenever the session may have changed (a hint: the pump reads by seq); returns its stop. */
  changes: (poke: () => void) => () => void,
  sessionId: string,
  afterSeq: number,
  source: WatchSource,
  deliver: (records: StoredRecord[]) => boolean | Promise<boolean>,
  onEnd: (reason: 'stopped' | 'error') => void,
): Promise<Watch & { poke(): void }> {
  const cursor: Cursor = { seq: afterSeq };
  let stopped = false;
  let running = false;
  let again = false;
  const read = (opts: ReadOptions) => source.read(sessionId, opts);
  const first = await read({ afterSeq, limit: 1 });
  const head = first.records[0];
  // Records archived before they could be delivered must be readable: if not, the subscription
  // is refused now with the error, rather than accepted and dropped at once.
  if (head?.kind === 'checkpoint' && head.seq > afterSeq) await firstArchive(read, sessionId, { seq: afterSeq }, head);
  /** Hands a page on: it starts right after the cursor (checked by the callers), which moves to its end. */
  const handOn = async (records: StoredRecord[]): Promise<boolean> => {
    if (stopped) return false; // unsubscribed while a page was read: nothing more is delivered
    cursor.seq = (records[records.length - 1] as StoredRecord).seq;
    return deliver(records);
  };
  const pump = async (): Promise<void> => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (;;) {
          const page = await read({ afterSeq: cursor.seq, limit: WATCH_PAGE });
          if (stopped) return;
          const top = page.records[0];
          if (top?.kind === 'checkpoint' && top.seq > cursor.seq) {
            // A compaction archived records not delivered yet: deliver them from the archives.
            if (!(await handOnArchived(read, sessionId, cursor, top, handOn))) return stop('stopped');
            continue;
          }
          if (top !== undefined) {
            if (top.seq !== cursor.seq + 1) throw hole(sessionId, cursor.seq);
            if (!(await handOn(page.records))) return stop('stopped');
          } else if (page.nextAfterSeq !== null) {
            throw hole(sessionId, cursor.seq); // more to read, nothing read: no progress possible
          }
          if (page.nextAfterSeq === null) break;
        }
      } while (again && !stopped);
    } catch {
      stop('error');
    } finally {
      running = false;
    }
  };
  const unsubscribe = changes(() => void pump());
  const stop = (reason: 'stopped' | 'error') => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    onEnd(reason);
  };
  setImmediate(() => void pump()); // after the caller answered (a subscribe's result precedes its records)
  return { lastSeq: first.lastSeq, stop: () => stop('stopped'), poke: () => void pump() };
}
