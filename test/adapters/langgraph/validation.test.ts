/**
 * LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation),
 * every case of it (and its opt-in getDeltaChannelHistory cases), against SidecarCheckpointSaver over the built binary, on the file store and
 * on the PostgreSQL store (a fresh schema per checkpointer; skipped with the reason printed when
 * there is no PostgreSQL, and never skipped under CI=true). The suite is written for Jest-style
 * globals; this project's vitest does not enable them, so they are provided here.
 * `npm run validate:langgraph` runs this file alone.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import { pgAvailability, releaseSharedCluster, sharedCluster } from '../../pg/pgServer.js';
import { initializerFor } from './initializer.js';

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

validate(initializerFor('file'));
// Opt-in in the suite (not part of validate(); LangGraph's own savers each run it): the base
// class's getDeltaChannelHistory walk over this saver's storage.
deltaChannelHistoryTests(initializerFor('file'));

const pgSkip = pgAvailability();
if (pgSkip) {
  it.skip(`the validation suite on the PostgreSQL store (${pgSkip})`, () => {});
} else {
  afterAll(() => releaseSharedCluster());
  const pg = initializerFor({ pgUrl: async () => (await sharedCluster()).url });
  validate(pg);
  deltaChannelHistoryTests(pg);
}
