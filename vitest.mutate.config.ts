import { defineConfig } from 'vitest/config';

/**
 * The test set `npm run mutate` (stryker.config.json) runs against each mutant of the guard
 * modules: the in-process tests of the durable layer, the store (journal writer, reader,
 * recovery, leases, file safety), the final secret gate, and the short simulated torture
 * scenarios (power loss, EIO), which drive the same store over a recording/faulting fs layer.
 * Not here: test/conformance, test/cli and the binary torture scenarios (kill, enospc, fuzz,
 * knownBugs' client parts) — they drive dist/src/cli.js, which Stryker's sandbox does not
 * rebuild per mutant, so they could not see a mutant and would only cost time. Left out for
 * time (2 shared cores; each surviving mutant runs every test that covers it): the long
 * randomized ones — powerLoss (20 s), runtime/blobs (32 s), compaction, lineage. (The first
 * run at c7d6457 also left out five files that failed on main then; they pass again and are in.)
 */
export default defineConfig({
  plugins: [
    {
      // Stryker's vitest runner asks for the threads pool; tests that set process.umask need a
      // process of their own (workers may not set it), so the resolved config is put back to forks.
      name: 'mutate-forks',
      configureVitest({ project }: { project: { config: { pool: string } } }) {
        project.config.pool = 'forks';
      },
    },
  ],
  test: {
    include: [
      'test/durable/**/*.test.ts',
      'test/engine/commitQueue.test.ts',
      'test/backends/file/appendFaults.test.ts',
      'test/backends/file/compactionCrash.test.ts',
      'test/backends/file/lineageCrash.test.ts',
      'test/backends/file/openLifecycle.test.ts',
      'test/backends/file/unsafePaths.test.ts',
      'test/backends/file/corruption.test.ts',
      'test/backends/file/create.test.ts',
      'test/backends/file/inPlaceAppend.test.ts',
      'test/backends/file/index.test.ts',
      'test/backends/file/indexTrust.test.ts',
      'test/backends/file/journal.test.ts',
      'test/backends/file/leases.test.ts',
      'test/backends/file/kernelLock.test.ts',
      'test/backends/file/backup.test.ts',
      'test/backends/file/backupPowerLoss.test.ts',
      'test/backends/file/repair.test.ts',
      'test/backends/file/repairPowerLoss.test.ts',
      'test/backends/file/compactionFence.test.ts',
      'test/core/gate.test.ts',
      'test/backends/memory/memoryBackend.test.ts',
      'test/storeContract/secrets.test.ts',
      'test/backends/file/modes.test.ts',
      'test/backends/file/readOnly.test.ts',
      'test/backends/file/readerIndex.test.ts',
      'test/backends/file/recovery.test.ts',
      'test/backends/file/refusals.test.ts',
      'test/backends/file/runtime/state.test.ts',
      'test/domain/secrets/*.test.ts',
      'test/torture/eio.test.ts',
    ],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
