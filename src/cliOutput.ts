import fs from 'node:fs';

/**
 * Human output of CLI subcommands (help, version, listings). Never used while serving: then
 * stdout carries protocol frames only. Loops on short writes (a pipe may take part of a
 * buffer); EAGAIN on a non-blocking stdout is retried; EPIPE propagates to the caller.
 */
export function printOut(text: string, fd = 1): void {
  const buf = Buffer.from(text, 'utf8');
  for (let done = 0; done < buf.length; ) {
    try {
      done += fs.writeSync(fd, buf, done, buf.length - done);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // the reader is slow: wait a little
    }
  }
}
