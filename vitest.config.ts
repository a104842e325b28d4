import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Provides a run directory for the shared throwaway PostgreSQL cluster (started lazily by
    // the first PostgreSQL test file, stopped here at the end of the run).
    globalSetup: ['test/pg/globalSetup.ts'],
    // Every sidecar a test starts (they inherit the environment) checks each result against its
    // method's result schema before sending it (src/server/dispatch.ts).
    env: { SESSION_SIDECAR_CHECK_RESULTS: '1' },
  },
});
