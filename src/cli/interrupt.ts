/**
 * The SIGINT latch of a long command: Ctrl-C (or SIGTERM) sets it, and the work polls it at its
 * safe points (src/domain/work.ts: between sessions, never mid-write) and stops there; the
 * command then prints what was done and how to resume, and exits 130.
 *
 * Invariants:
 * - While installed, a signal never ends the process by itself: the latch's listener is on
 *   SIGINT and SIGTERM, so nothing (proper-lockfile's signal-exit included) exits in the middle
 *   of a write, and the work's finally blocks (leases and lock directories released) run.
 * - `check` yields to the event loop first (setImmediate: one poll phase, where a pending
 *   signal's listener runs), so synchronous work sees a signal at its next safe point.
 * - A second signal means "now": the process exits 130 at once, as a crash would (every step
 *   of the store is crash-safe; the same command run again finishes the job).
 */
export class InterruptLatch {
  requested = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.requested) {
      process.stderr.write(`\nsession-sidecar: ${signal} again: stopping at once (the store stays consistent; run the same command again to finish)\n`);
      process.exit(130);
    }
    this.requested = true;
    this.onFirst?.(signal);
  };

  private constructor(private readonly onFirst?: (signal: NodeJS.Signals) => void) {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** Installed until `dispose`; `onFirst` runs at the first signal (say "stopping..."). */
  static install(onFirst?: (signal: NodeJS.Signals) => void): InterruptLatch {
    return new InterruptLatch(onFirst);
  }

  /** At a safe point: whether the work must stop here (after letting a pending signal in). */
  readonly check = async (): Promise<boolean> => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return this.requested;
  };

  dispose(): void {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}
