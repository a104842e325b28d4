/**
 * The requests handed to the connection and not yet answered, by id. Exit waits for it to
 * empty, so every request read is answered. A second request reusing the id of one still in
 * flight is refused before it reaches the connection (which would otherwise replace the
 * first one in its queue, silently, leaving it unanswered forever).
 */
export class RequestLedger {
  private readonly open = new Set<string>();
  private waiters: Array<() => void> = [];

  private static key(id: string | number): string {
    return `${typeof id}:${id}`;
  }

  /** False when a request with this id is already in flight. */
  admit(id: string | number): boolean {
    const key = RequestLedger.key(id);
    if (this.open.has(key)) return false;
    this.open.add(key);
    return true;
  }

  settle(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    this.open.delete(RequestLedger.key(id));
    if (this.open.size === 0) this.waiters.splice(0).forEach((w) => w());
  }

  get size(): number {
    return this.open.size;
  }

  drained(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
