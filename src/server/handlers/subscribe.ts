import { sessionSubscribe, sessionUnsubscribe } from '../../../protocol/index.js';
import type { SessionStore, StoredRecord } from '../../domain/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** Records sent but not yet written to the client, per subscription, before it is dropped. */
export const MAX_UNSENT_RECORDS = 10_000;
/** A client behind by more than half the limit that reads nothing for this long is dropped. */
export const STALL_MS = 5_000;

/** The record kinds whose delivery is followed by turn/didChange (they move the session's turn state). */
export const TURN_CHANGING_KINDS: readonly string[] = ['turn', 'checkpoint', 'rewind'];

export type Notify = (method: string, params: unknown) => Promise<void>;

/**
 * session/subscribe and session/unsubscribe: one subscription per session per connection.
 * Records are read from the journal page by page, so a subscription never holds more than what
 * it has sent and the client has not read yet. A slow client paces the delivery; one that is
 * more than half of MAX_UNSENT_RECORDS behind and reads nothing for STALL_MS is dropped with
 * session/didOverflow {lastDeliveredSeq}, from which it resubscribes. So is a subscription whose
 * next records cannot be read (an archived generation gone, damage, the session deleted): the
 * store's watch never skips, it ends ('error'); resubscribing then answers the error if it lasts.
 *
 * lastDeliveredSeq is the seq of the last record this subscription handed to the connection:
 * notifications leave in the order they are sent and none is dropped, so the client has read
 * every record up to it by the time it reads the didOverflow that follows them.
 */
export function subscriptionHandlers(store: SessionStore, notify: Notify): { handlers: RequestHandler[]; stopAll(): void } {
  const subs = new Map<string, { stop(): void }>();
  const subscribe = handle(sessionSubscribe, async (p) => {
    subs.get(p.sessionId)?.stop();
    const { sessionId } = p;
    let unsent = 0;
    let lastSent = p.afterSeq ?? 0;
    let progressAt = Date.now();
    let dropped = false;
    const overflow = () => {
      if (!dropped) void notify('session/didOverflow', { sessionId, lastDeliveredSeq: lastSent }).catch(() => {});
      dropped = true;
      return false;
    };
    const deliver = async (records: StoredRecord[]): Promise<boolean> => {
      if (unsent > MAX_UNSENT_RECORDS) return overflow();
      unsent += records.length;
      lastSent = (records[records.length - 1] as StoredRecord).seq;
      const written = notify('session/didAppend', { sessionId, records }).then(() => {
        unsent -= records.length;
        progressAt = Date.now();
      }, () => undefined);
      if (records.some((r) => TURN_CHANGING_KINDS.includes(r.kind))) {
        void store.getTurn(sessionId).then((turn) => notify('turn/didChange', { sessionId, turn })).catch(() => {});
      }
      // A client reading slowly paces the delivery; one that reads nothing for STALL_MS is dropped.
      while (unsent > MAX_UNSENT_RECORDS / 2) {
        const wait = STALL_MS - (Date.now() - progressAt);
        if (wait <= 0) return overflow();
        await Promise.race([written, new Promise((r) => setTimeout(r, Math.min(wait, 250)))]);
      }
      return true;
    };
    const watch = await store.watch(sessionId, p.afterSeq ?? 0, deliver, (reason) => {
      if (reason === 'error') overflow();
      if (subs.get(sessionId) === watch) subs.delete(sessionId);
    });
    subs.set(sessionId, watch);
    return { lastSeq: watch.lastSeq };
  });
  const unsubscribe = handle(sessionUnsubscribe, async (p) => {
    subs.get(p.sessionId)?.stop();
    subs.delete(p.sessionId);
    return {};
  });
  return {
    handlers: [subscribe, unsubscribe],
    stopAll: () => {
      for (const s of subs.values()) s.stop();
      subs.clear();
    },
  };
}
