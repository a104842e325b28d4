/**
 * How a long piece of work (a rekey, a prune, a migrate, a verify...) tells its progress and
 * learns that it should stop, without knowing who listens: the command line draws a progress
 * line from it (src/cli/progress.ts) and polls a SIGINT latch through it (src/cli/interrupt.ts).
 *
 * Invariant: `shouldStop` is called only at a safe point — between sessions (or pages, or
 * files), never with a file half-written or a transaction open — so stopping there leaves the
 * store as a finished step would, and the same command run again goes on from there.
 */
export interface Work {
  /** A phase begins, with `total` items to do ("sessions", "values"). Counts start again at 0. */
  phase?(label: string, total: number, unit?: string): void;
  /** `n` more items of the current phase done. */
  step?(n?: number): void;
  /** At a safe point: true when the work must stop here. It yields to the event loop (a signal is seen). */
  shouldStop?(): Promise<boolean>;
}

/** Thrown by work that stopped at a safe point because `shouldStop` said so; its finally blocks have run. */
export class WorkInterrupted extends Error {
  constructor(readonly what = 'interrupted') {
    super(what);
    this.name = 'WorkInterrupted';
  }
}
