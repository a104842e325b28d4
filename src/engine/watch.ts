import type { HistoryEntry, ReadPage, ReadOptions, StoredRecord } from '../domain/types.js';

export interface WatchSource {
  read(id: string, opts: ReadOptions): Promise<ReadPage>;
  history(id: string): Promise<HistoryEntry[]>;
}

export interface Watch {
  lastSeq: number;
  stop(): void;
}

/**
 * Delivers a session's records after `afterSeq`, then each newly committed one, in seq order,
 * each exactly once: a pump reads from the last delivered seq whenever it is poked — by a
 * commit in this process, or by a poll that sees the journal change (another process wrote
 * it, or a compaction replaced it: reading on from the delivered seq then starts at the new
 * checkpoint). `deliver` returning false ends the watch; the next page is read only once it
 * settled, so a watch holds at most one page in memory whatever the client's pace.
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
  let cursor = afterSeq;
  let stopped = false;
  let running = false;
  let again = false;
  const read = (opts: ReadOptions) => source.read(sessionId, opts);
  const first = await read({ afterSeq: cursor, limit: 1 });
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
          const page = await read({ afterSeq: cursor, limit: 1000 });
          if (stopped) return;
          const head = page.records[0];
          if (head?.kind === 'checkpoint' && head.seq > cursor) {
            // A compaction archived records not delivered yet: deliver them from the archives.
            if (!(await fromArchives(head.seq))) return stop('stopped');
            continue;
          }
          if (page.records.length > 0) {
            cursor = (page.records[page.records.length - 1] as StoredRecord).seq;
            if (!(await deliver(page.records))) return stop('stopped');
          } else if (page.nextAfterSeq !== null) cursor = page.nextAfterSeq;
          if (page.nextAfterSeq === null) break;
        }
      } while (again && !stopped);
    } catch {
      stop('error');
    } finally {
      running = false;
    }
  };
  /** Delivers the archived records after the cursor up to `through`; false when the watch ended. */
  const fromArchives = async (through: number): Promise<boolean> => {
    for (const gen of await source.history(sessionId)) {
      for (;;) {
        const page = await read({ generation: gen.generation, afterSeq: cursor, limit: 1000 });
        const fresh = page.records.filter((r) => r.seq > cursor && r.seq <= through && r.kind !== 'checkpoint');
        if (fresh.length > 0) {
          cursor = (fresh[fresh.length - 1] as StoredRecord).seq;
          if (!(await deliver(fresh))) return false;
        }
        if (page.nextAfterSeq === null || page.records.length === 0 || cursor >= through) break;
        cursor = Math.max(cursor, page.nextAfterSeq);
      }
    }
    cursor = Math.max(cursor, through);
    return true;
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
