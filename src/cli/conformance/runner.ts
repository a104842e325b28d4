import type { CheckResult, RunOptions, Scenario } from './context.js';
import { ScenarioContext } from './context.js';
import type { Framing } from './wire.js';

/** A result after the expected-failures file was applied. */
export interface Outcome extends CheckResult {
  /** Listed as an expected failure, and it failed: not counted as a failure. */
  expected?: boolean;
  /** Listed as an expected failure, but it passed: counted as a failure (the file went stale). */
  stale?: boolean;
}

export interface Summary {
  results: Outcome[];
  passed: number;
  failed: number;
  skipped: number;
  expectedFailures: number;
}

/**
 * Parses an expected-failures file: one id a line (`scenario` or `scenario:check`), `#` comments.
 */
export function parseExpected(text: string): Set<string> {
  return new Set(text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l.length > 0));
}

/**
 * Runs the scenarios in each framing, one after another. A listed check that fails is an
 * expected failure; a listed check that passes fails the run (the file must not go stale), as
 * does a listed scenario none of whose checks failed, or an id naming no scenario.
 */
export async function runSuite(
  scenarios: readonly Scenario[],
  framings: readonly Framing[],
  expected: ReadonlySet<string>,
  opts: Omit<RunOptions, 'report'> & { print: (o: Outcome) => void; known: ReadonlySet<string> },
): Promise<Summary> {
  const results: Outcome[] = [];
  const add = (r: Outcome) => {
    results.push(r);
    opts.print(r);
  };
  const report = (r: CheckResult) => {
    const listed = expected.has(r.scenario) || expected.has(`${r.scenario}:${r.check}`);
    if (!listed || r.status === 'skip') return add(r);
    if (r.status === 'fail') return add({ ...r, expected: true });
    if (expected.has(`${r.scenario}:${r.check}`)) return add({ ...r, status: 'fail', stale: true, message: 'listed as an expected failure, but it passes: remove it from the file' });
    add(r);
  };
  for (const framing of framings) {
    for (const scenario of scenarios) {
      const t = new ScenarioContext(scenario, framing, { command: opts.command, timeoutMs: opts.timeoutMs, report, ...(opts.peer ? { peer: opts.peer } : {}) });
      try {
        await scenario.run(t);
      } catch (e) {
        t.record('scenario', 'fail', `the scenario stopped: ${(e as Error).message ?? String(e)}`);
      }
      await t.finish();
      if (expected.has(scenario.name) && !results.some((r) => r.scenario === scenario.name && r.framing === framing && r.expected)) {
        add({ scenario: scenario.name, check: 'expected-failures', framing, status: 'fail', message: 'the scenario is listed as an expected failure, but all its checks pass' });
      }
    }
  }
  for (const id of expected) {
    const name = id.split(':')[0] as string;
    if (!opts.known.has(name)) {
      add({ scenario: name, check: 'expected-failures', framing: framings[0] as Framing, status: 'fail', message: `the expected-failures file names ${id}: no such scenario` });
    }
  }
  return {
    results,
    passed: results.filter((r) => r.status === 'pass').length,
    failed: results.filter((r) => r.status === 'fail' && !r.expected).length,
    skipped: results.filter((r) => r.status === 'skip').length,
    expectedFailures: results.filter((r) => r.expected).length,
  };
}
