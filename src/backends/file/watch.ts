import type { FsLayer } from '../../durable/fsLayer.js';
import { type Watch, watchRecords, type WatchSource } from '../../engine/watch.js';
import type { StoreLayout } from './layout.js';
import type { StoredRecord } from '../../domain/types.js';

export type { Watch, WatchSource } from '../../engine/watch.js';

export const WATCH_POLL_MS = 200;

/**
 * The file backend's watch: the engine's delivery loop (engine/watch.ts), poked by a poll of
 * the journal's identity and size (another process wrote it, or a compaction replaced it).
 */
export async function watchSession(
  fsl: FsLayer,
  layout: StoreLayout,
  sessionId: string,
  afterSeq: number,
  source: WatchSource,
  deliver: (records: StoredRecord[]) => boolean | Promise<boolean>,
  onEnd: (reason: 'stopped' | 'error') => void,
): Promise<Watch & { poke(): void }> {
  const journal = layout.journal(sessionId);
  const stamp = () => {
    const st = fsl.lstatSync(journal);
    return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'gone';
  };
  const polled = (poke: () => void) => {
    let seen = stamp();
    const timer = setInterval(() => {
      const now = stamp();
      if (now !== seen) {
        seen = now;
        poke();
      }
    }, WATCH_POLL_MS);
    timer.unref();
    return () => clearInterval(timer);
  };
  return watchRecords(polled, sessionId, afterSeq, source, deliver, onEnd);
}
