import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';

/** What a simulated kill throws: the store that saw it is abandoned, as a SIGKILL would leave it. */
export class Killed extends Error {}

/** nodeFs whose `at`-th rename/fsync (counted while `armed`) "kills the process" instead of running. */
export function killingLayer(at: number): { layer: FsLayer; state: { armed: boolean; calls: number; killed: boolean } } {
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
  };
  return { layer, state };
}
