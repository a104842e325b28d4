import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';

/** What a simulated kill throws: the store that saw it is abandoned, as a SIGKILL would leave it. */
export class Killed extends Error {}

/**
 * nodeFs whose `at`-th rename/fsync (counted while `armed`) "kills the process" instead of running;
 * with `writes`, write calls count too (a kill before a write leaves the file as it was).
 */
export function killingLayer(at: number, opts: { writes?: boolean } = {}): { layer: FsLayer; state: { armed: boolean; calls: number; killed: boolean } } {
  const state = { armed: false, calls: 0, killed: false };
  const maybeKill = () => {
    if (!state.armed) return;
    state.calls += 1;
    if (state.calls === at) {
      state.killed = true;
      state.armed = false;
      throw new Killed(`killed at call ${at}`);
    }
  };
  const layer: FsLayer = {
    ...nodeFs,
    renameSync: (from, to) => { maybeKill(); nodeFs.renameSync(from, to); },
    fsyncSync: (fd) => { maybeKill(); nodeFs.fsyncSync(fd); },
    ...(opts.writes ? { writeSync: (fd: number, buf: Buffer, offset: number, length: number, position: number) => { maybeKill(); return nodeFs.writeSync(fd, buf, offset, length, position); } } : {}),
  };
  return { layer, state };
}
