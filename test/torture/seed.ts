import { newSeed } from './rng.js';

/** The seed of a torture test: TORTURE_SEED when set (to replay a failure), else a fresh one. */
export function testSeed(): number {
  const fromEnv = process.env.TORTURE_SEED;
  return fromEnv ? Number(fromEnv) >>> 0 : newSeed();
}
