import path from 'node:path';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { KernelLock } from '../../../src/backends/file/kernelLock.js';

/**
 * Takes and gives back a kernel lock over and over for `argv[3]` ms while the test sends the
 * signal `argv[4]` (SIGINT, SIGTSTP) to this process's whole process group, as a terminal's
 * Ctrl-C or Ctrl-Z does to its foreground group. This process handles it (as a command that
 * stops at its next safe point does); its lock helpers must never die or stop of it.
 * Prints "ok N" (N locks taken) or the first failure.
 */
const [dir, ms, signal] = [process.argv[2] as string, Number(process.argv[3]), process.argv[4] as NodeJS.Signals];
process.on(signal, () => {});
process.stdout.write(`ready ${process.pid}\n`);
const until = Date.now() + ms;
let i = 0;
for (; Date.now() < until; i++) {
  try {
    const lock = await KernelLock.tryAcquire(nodeFs, path.join(dir, `${i % 7}.flock`));
    if (lock === undefined) throw new Error('not taken');
    lock.release();
  } catch (err) {
    process.stdout.write(`failed at ${i}: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
process.stdout.write(`ok ${i}\n`);
