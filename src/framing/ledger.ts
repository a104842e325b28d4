/**
 * The requests handed to the connection and not yet answered, by id. Exit waits for it to
 * empty, so every request read is answered. A second request reusing the id of one still in
 * flight is refused before it reaches the connection (which would otherwise replace the
 * first one in its queue, silently, leaving it unanswered forever).
 */
export class RequestLedger {
  private readonly open = new Map<string, number>();
  private waiters: Array<() => void> = [];
  /** Bytes of the requests in flight: the reader stops reading input above a budget. */
  bytes = 0;
  /** Called after every settle (the reader may resume). */
  onSettle: () => void = () => {};

  /** As the connection keys its queue; ids arrive mapped by wireIds.ts, so 7 and "7" differ here. */
  private static key(id: string | number): string {
    return String(id);
  }

  /** False when a request with this id is already in flight. */
  admit(id: string | number, bytes: number): boolean {
    const key = RequestLedger.key(id);
    if (this.open.has(key)) return false;
    this.open.set(key, bytes);
    this.bytes += bytes;
    return true;
  }

  settle(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const key = RequestLedger.key(id);
    this.bytes -= this.open.get(key) ?? 0;
    this.open.delete(key);
    if (this.open.size === 0) this.waiters.splice(0).forEach((w) => w());
    this.onSettle();
  }

  get size(): number {
    return this.open.size;
  }

  drained(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
