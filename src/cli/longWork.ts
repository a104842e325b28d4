import { type Work, WorkInterrupted } from '../domain/work.js';
import { InterruptLatch } from './interrupt.js';
import { ProgressLine } from './progress.js';

/**
 * A long command's machinery in one: its progress line (progress.ts) and its SIGINT latch
 * (interrupt.ts), handed to the work as its `Work` hooks. Use:
 *
 *   return longWork('prune', 'run the same command again to move the rest', async (job) => {
 *     const r = await doIt(..., job.work);   // polls job.work.shouldStop at safe points
 *     job.progress.finish(`moved ${r.moved} session(s)`);
 *     return 0;
 *   });
 *
 * When the work stopped for a signal (it threw WorkInterrupted, or returned with the latch
 * set), the summary says what was done and how to resume, and the exit code is 130.
 */
export interface Job {
  progress: ProgressLine;
  latch: InterruptLatch;
  work: Work;
  /** Whether a signal asked to stop (the body may return early on it). */
  readonly interrupted: boolean;
}

export async function longWork(command: string, resume: string, body: (job: Job) => Promise<number>): Promise<number> {
  const progress = new ProgressLine(command);
  const latch = InterruptLatch.install(() => progress.above(() => process.stderr.write(`session-sidecar ${command}: stopping at the next safe point (Ctrl-C again stops at once)\n`)));
  const job: Job = { progress, latch, work: progress.work(latch.check), get interrupted() { return latch.requested; } };
  try {
    let code: number;
    try {
      code = await body(job);
    } catch (err) {
      if (!(err instanceof WorkInterrupted)) throw err;
      code = 130;
    }
    if (!latch.requested) return code;
    const what = !progress.label ? 'before any work' : `while ${progress.label}: ${progress.total > 0 ? `${progress.done} of ${progress.total} ${progress.unit} done` : `${progress.done} ${progress.unit}`}`;
    progress.finish(`interrupted ${what}`, resume);
    return 130;
  } finally {
    progress.clear();
    latch.dispose();
  }
}
