import { defineConfig } from 'vitest/config';

/**
 * The test set of `npm run mutate:pg` (stryker.pg.config.json): the PostgreSQL backend's
 * in-process tests against each mutant of its guard files — the fence (fence.ts) and the append
 * statement and its refusals (append.ts). One throwaway cluster for the run (globalSetup).
 */
export default defineConfig({
  plugins: [
    {
      name: 'mutate-forks',
      configureVitest({ project }: { project: { config: { pool: string } } }) {
        project.config.pool = 'forks';
      },
    },
  ],
  test: {
    include: ['test/backends/postgres/*.test.ts'],
    globalSetup: ['test/pg/globalSetup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
