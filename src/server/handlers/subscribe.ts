import { sessionSubscribe, sessionUnsubscribe } from '../../../protocol/index.js';
import type { SessionStore, StoredRecord } from '../../store/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** Records sent but not yet written to the client, per subscription, before it is dropped. */
export const MAX_UNSENT_RECORDS = 10_000;

export type Notify = (method: string, params: unknown) => Promise<void>;

/**
 * session/subscribe and session/unsubscribe: one subscription per session per connection.
 * A slow client cannot make memory grow without bound: when too many records are still
 * unwritten, the subscription ends with session/didOverflow {lastDeliveredSeq}, from which the
 * client resubscribes.
 */
export function subscriptionHandlers(store: SessionStore, notify: Notify): { handlers: RequestHandler[]; stopAll(): void } {
  const subs = new Map<string, { stop(): void }>();
  const subscribe = handle(sessionSubscribe, async (p) => {
    subs.get(p.sessionId)?.stop();
    const { sessionId } = p;
    let unsent = 0;
    let lastDelivered = p.afterSeq ?? 0;
    const deliver = (records: StoredRecord[]): boolean => {
      if (unsent > MAX_UNSENT_RECORDS) {
        void notify('session/didOverflow', { sessionId, lastDeliveredSeq: lastDelivered }).catch(() => {});
        return false;
      }
      unsent += records.length;
      const last = (records[records.length - 1] as StoredRecord).seq;
      notify('session/didAppend', { sessionId, records }).then(() => {
        unsent -= records.length;
        lastDelivered = Math.max(lastDelivered, last);
      }, () => undefined);
      if (records.some((r) => r.kind === 'turn' || r.kind === 'checkpoint')) {
        void store.getTurn(sessionId).then((turn) => notify('turn/didChange', { sessionId, turn })).catch(() => {});
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
