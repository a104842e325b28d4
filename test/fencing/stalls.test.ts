import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { runStall, type Stall, type StalledOp } from './stall.js';

/**
 * The short form of the stall suite (the long one is `npm run torture -- --only stall`): each of
 * the review's stall findings (issue 25, findings 1 and 2) as a scenario. A holder stalled past
 * the stale time inside an operation that has passed its checks — its pwrite, its fdatasync, the
 * state value's temp file, its rename, the compaction's copy or rename — is never taken over by a
 * process on this machine, and whatever either acknowledged is kept.
 */
const cases: Array<[StalledOp, Stall]> = [
  ['append', { kind: 'syscall', syscalls: ['pwrite64'] }], // finding 2: between the fence check and the pwrite
  ['stateSet', { kind: 'syscall', syscalls: ['rename', 'renameat', 'renameat2'] }], // finding 2: before the temp file replaces the value
  ['compact', { kind: 'syscall', syscalls: ['rename', 'renameat', 'renameat2'] }], // finding 1: a compaction that outlives the stale time
  ['append', { kind: 'sigstop' }],
];

describe('a stalled holder is never taken over on this machine (strace delays, SIGSTOP)', () => {
  for (const [op, stall] of cases) {
    const how = stall.kind === 'sigstop' ? 'SIGSTOP' : `${stall.syscalls[0]} delayed`;
    it(`${op}, ${how} past the stale time: the contender is refused throughout, nothing acknowledged is lost`, async () => {
      const run = await runStall(tempDir(), op, stall);
      expect(run.refused).toBeGreaterThan(3);
    }, 60_000);
  }
});
