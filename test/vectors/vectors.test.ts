import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REQUESTS } from '../../clients/typescript/src/index.js';
import { runScenario, type Step, VECTORS } from './record.js';
import { SCENARIOS } from './scenarios.js';

/**
 * protocol/vectors.json, the language-neutral test vectors every client replays (the Python,
 * Go and Rust clients' own test suites read the same file): here the generated TypeScript
 * client replays each scenario against the built server in both framings and must get exactly
 * the answers the file holds, modulo the documented normalization (normalize.ts). A change of
 * the server's answers fails here until `npx tsx test/vectors/record.ts` is run and the diff
 * reviewed.
 */
const file = JSON.parse(fs.readFileSync(VECTORS, 'utf8')) as { protocolVersion: number; scenarios: Record<string, Step[]> };

describe('protocol/vectors.json', () => {
  it('holds every scenario of test/vectors/scenarios.ts, each request as written', () => {
    expect(Object.keys(file.scenarios)).toEqual(Object.keys(SCENARIOS));
    for (const [name, requests] of Object.entries(SCENARIOS)) {
      expect(file.scenarios[name]!.slice(1).map(({ method, params }) => ({ method, params })), name).toEqual(JSON.parse(JSON.stringify(requests)));
    }
  });

  it('exercises every request but the three whose answers name this machine\'s paths or need a stored blob', () => {
    const used = new Set(Object.values(file.scenarios).flatMap((steps) => steps.map((s) => s.method)));
    expect(Object.keys(REQUESTS).filter((m) => !used.has(m)).sort()).toEqual(['blob/get', 'tool/allocateScratch']);
  });

  describe.each(['ndjson', 'lsp'] as const)('replayed through the generated TypeScript client over %s', (framing) => {
    it.each(Object.keys(SCENARIOS))('%s: every answer is the one the file holds', async (name) => {
      const steps = await runScenario(SCENARIOS[name]!, framing);
      expect(steps).toEqual(file.scenarios[name]);
    }, 60_000);
  });
});
