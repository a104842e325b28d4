/**
 * Arrival order per session on one connection (§3.6), an open included.
 *
 * Most requests to a session are ordered by the core as they start (appends enter the session's
 * commit queue synchronously, reads wait for the appends before them), so they start at once, in
 * arrival order, and overlap. Requests that change whether the session is open here —
 * `session/open`, `session/close`, `session/create` naming its `sessionId` — do not finish
 * synchronously (a lease is taken or given back, the journal loaded), so they are *barriers*: a
 * barrier starts only once every earlier request naming that session has been answered, and every
 * later request naming that session starts only once the barrier has been answered. Without this
 * an append pipelined after an open finds the session not yet registered (`ReadOnly`, `notOpen`),
 * and an open pipelined after a close races the lease release (`SessionLocked`).
 *
 * Requests naming other sessions, or none, never wait here. Waiting requests start in arrival
 * order: the queue is a FIFO, and a non-barrier never overtakes a waiting barrier.
 */

interface Waiting {
  barrier: boolean;
  start: () => void;
}

interface Lane {
  running: number;
  barrierRunning: boolean;
  queue: Waiting[];
}

/** Methods that make a session open or closed in this connection: barriers for their session. */
const BARRIERS = new Set(['session/open', 'session/close', 'session/create']);

export function isBarrier(method: string): boolean {
  return BARRIERS.has(method);
}

export class SessionOrder {
  private readonly lanes = new Map<string, Lane>();

  /**
   * Runs `fn` in arrival order among the requests naming `sessionId`. `fn` is called synchronously
   * when nothing is ahead of it (so the core still sees requests in arrival order), else once the
   * requests ahead allow it.
   */
  run<T>(sessionId: string, barrier: boolean, fn: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(sessionId);
    if (!lane) {
      lane = { running: 0, barrierRunning: false, queue: [] };
      this.lanes.set(sessionId, lane);
    }
    const l = lane;
    const go = (): Promise<T> => {
      l.running += 1;
      if (barrier) l.barrierRunning = true;
      let p: Promise<T>;
      try {
        p = fn();
      } catch (err) {
        p = Promise.reject(err);
      }
      return p.finally(() => this.finished(sessionId, l, barrier));
    };
    if (l.queue.length === 0 && !l.barrierRunning && (!barrier || l.running === 0)) return go();
    return new Promise<T>((resolve, reject) => {
      l.queue.push({ barrier, start: () => go().then(resolve, reject) });
    });
  }

  private finished(sessionId: string, lane: Lane, barrier: boolean): void {
    lane.running -= 1;
    if (barrier) lane.barrierRunning = false;
    // Start what may start now, in arrival order: every non-barrier up to the next barrier, or
    // that barrier when nothing is running any more.
    while (lane.queue.length > 0 && !lane.barrierRunning) {
      const head = lane.queue[0] as Waiting;
      if (head.barrier && lane.running > 0) break;
      lane.queue.shift();
      head.start();
    }
    if (lane.running === 0 && lane.queue.length === 0) this.lanes.delete(sessionId);
  }
}
