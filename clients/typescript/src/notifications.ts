/**
 * Server notifications as an async iterator with a bounded buffer. A reader slower than the
 * server loses the OLDEST buffered notifications first, never blocks the connection, and is
 * told: `dropped` counts them. For `session/didAppend` a gap is harmless — the records are in
 * the store: read from the last `seq` you handled (the server itself sends
 * `session/didOverflow` when its own buffer for a subscription overflows).
 */
import type { Client, ServerNotificationMethod, ServerNotificationTable } from './generated/methods.js';

export type Notification = { [M in ServerNotificationMethod]: { method: M; params: ServerNotificationTable[M]['params'] } }[ServerNotificationMethod];

export class NotificationStream implements AsyncIterableIterator<Notification> {
  /** Notifications dropped because the buffer was full. */
  dropped = 0;
  private readonly buffer: Notification[] = [];
  private readonly waiting: Array<(r: IteratorResult<Notification>) => void> = [];
  private readonly stops: Array<() => void>;
  private done = false;

  constructor(client: Client, private readonly capacity = 1024, methods: readonly ServerNotificationMethod[] = ['session/didAppend', 'session/didOverflow', 'turn/didChange']) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.stops = methods.map((method) => client.channel.onNotification(method, (params) => this.push({ method, params } as Notification)));
  }

  private push(n: Notification): void {
    if (this.done) return;
    const reader = this.waiting.shift();
    if (reader) return reader({ value: n, done: false });
    if (this.buffer.length === this.capacity) {
      this.buffer.shift();
      this.dropped += 1;
    }
    this.buffer.push(n);
  }

  next(): Promise<IteratorResult<Notification>> {
    const n = this.buffer.shift();
    if (n) return Promise.resolve({ value: n, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Stops listening; buffered notifications are discarded. */
  return(): Promise<IteratorResult<Notification>> {
    this.done = true;
    this.buffer.length = 0;
    this.stops.forEach((stop) => stop());
    this.waiting.splice(0).forEach((w) => w({ value: undefined, done: true }));
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
