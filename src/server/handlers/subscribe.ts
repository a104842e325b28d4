import { sessionSubscribe, sessionUnsubscribe } from '../../../protocol/index.js';
import type { SessionStore, StoredRecord } from '../../domain/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** Records sent but not yet written to the client, per subscription, before it is dropped. */
export const MAX_UNSENT_RECORDS = 10_000;
/** A client behind by more than half the limit that reads nothing for this long is dropped. */
export const STALL_MS = 5_000;

export type Notify = (method: string, params: unknown) => Promise<void>;

/**
 * session/subscribe and session/unsubscribe: one subscription per session per connection.
 * Records are read from the journal page by page, so a subscription never holds more than what
 * it has sent and the client has not read yet. A slow client paces the delivery; one that is
 * more than half of MAX_UNSENT_RECORDS behind and reads nothing for STALL_MS is dropped with
 * session/didOverflow {lastDeliveredSeq}, from which it resubscribes.
 */
export function subscriptionHandlers(store: SessionStore, notify: Notify): { handlers: RequestHandler[]; stopAll(): void } {
  const subs = new Map<string, { stop(): void }>();
  const subscribe = handle(sessionSubscribe, async (p) => {
    subs.get(p.sessionId)?.stop();
    const { sessionId } = p;
    let unsent = 0;
    let lastDelivered = p.afterSeq ?? 0;
    let progressAt = Date.now();
    const overflow = () => {
      void notify('session/didOverflow', { sessionId, lastDeliveredSeq: lastDelivered }).catch(() => {});
      return false;
    };
    const deliver = async (records: StoredRecord[]): Promise<boolean> => {
      if (unsent > MAX_UNSENT_RECORDS) return overflow();
      unsent += records.length;
      const last = (records[records.length - 1] as StoredRecord).seq;
      const written = notify('session/didAppend', { sessionId, records }).then(() => {
        unsent -= records.length;
        lastDelivered = Math.max(lastDelivered, last);
        progressAt = Date.now();
      }, () => undefined);
      if (records.some((r) => r.kind === 'turn' || r.kind === 'checkpoint' || r.kind === 'rewind')) {
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
    const watch = await store.watch(sessionId, p.afterSeq ?? 0, deliver, () => {
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
