import { describe, expect, it } from 'vitest';
import { runSuite } from '../../../src/cli/conformance/runner.js';
import { SCENARIOS } from '../../../src/cli/conformance/scenarios/index.js';
import { CLI } from '../../conformance/harness.js';
import { REQUESTS } from '../../../clients/typescript/src/index.js';
import { GeneratedPeer, generatedPeer } from './generatedPeer.js';

/**
 * The generated TypeScript client (clients/typescript) passes the conformance suite: every
 * scenario but `framing` (which is about bytes no client library sends) runs with each request
 * sent through the generated helper of its method, against the built binary, in both framings.
 */
const SERVER = ['node', CLI, 'serve', '--store', '{store}'];
const scenarios = SCENARIOS.filter((s) => s.name !== 'framing');

describe('the generated TypeScript client', () => {
  it.each(['ndjson', 'lsp'] as const)('passes the conformance scenarios over %s', async (framing) => {
    const summary = await runSuite(scenarios, [framing], new Set(), {
      command: SERVER, timeoutMs: 30_000, known: new Set(SCENARIOS.map((s) => s.name)), print: () => {}, peer: generatedPeer,
    });
    const failed = summary.results.filter((r) => r.status === 'fail').map((r) => `${r.scenario}:${r.check}: ${r.message ?? ''}`);
    expect(failed).toEqual([]);
    // every scenario ran to its wire-schema check
    for (const s of scenarios) expect(summary.results).toContainEqual(expect.objectContaining({ scenario: s.name, check: 'wire-schema', status: 'pass' }));
    expect(summary.passed).toBeGreaterThan(100);
    // every request of meta.json went through its generated helper; only what the protocol
    // does not have went around it
    expect([...GeneratedPeer.viaHelper].sort()).toEqual(Object.keys(REQUESTS).sort());
    expect([...GeneratedPeer.viaTransport].filter((m) => m in REQUESTS)).toEqual(['session/append']); // with an id of the scenario's choosing
  }, 600_000);
});
