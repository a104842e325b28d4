import { summaryOf } from '../commands.js';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { CliError, type Command, type CommandOptions, UsageError } from '../common.js';
import { out } from '../output.js';
import { type Outcome, parseExpected, runSuite } from './runner.js';
import { SCENARIOS } from './scenarios/index.js';
import type { Framing } from './wire.js';

const USAGE = `Usage: session-sidecar conformance [options] -- <server command> [args...]

Runs the protocol v1 conformance suite against a server: the command is started as a child
process over pipes (a fresh process and a fresh store per scenario, more where a scenario needs
them); every argument equal to {store} is replaced by a new empty temporary directory, and
SESSION_SIDECAR_STORE is set to it too; {store-id} inside an argument is replaced by a short
hex id of that store (a fresh name per store where the store is not a directory). Every
message in both directions is checked against the protocol schema. Examples:

  session-sidecar conformance -- node dist/src/cli.js serve --store {store}
  session-sidecar conformance -- node dist/src/cli.js serve --workspace {store} \\
      --store 'postgres:///db?host=/run/postgresql' --pg-schema s_{store-id}

Options:
  --framing MODE           lsp, ndjson or both (default both)
  --scenario NAME          run only this scenario (repeatable)
  --list                   list the scenarios and exit
  --expected-failures FILE ids (scenario or scenario:check), one a line, # comments: those
                           failures do not fail the run; a listed check that passes does
  --json FILE              write the structured results to FILE
  --timeout-ms N           how long to wait for any one answer (default 10000)
  -h, --help               this help
`;

/** Every option conformance accepts (its usage lists each). */
const OPTIONS = {
  framing: { type: 'string', default: 'both' }, scenario: { type: 'string', multiple: true }, list: { type: 'boolean' },
  'expected-failures': { type: 'string' }, json: { type: 'string' }, 'timeout-ms': { type: 'string', default: '10000' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies CommandOptions;

export const conformanceCommand: Command = {
  name: 'conformance',
  summary: summaryOf('conformance'),
  options: OPTIONS,
  usage: USAGE,
  async run(argv) {
    const dash = argv.indexOf('--');
    const own = dash === -1 ? argv : argv.slice(0, dash);
    const command = dash === -1 ? [] : argv.slice(dash + 1);
    let values;
    try {
      ({ values } = parseArgs({
        args: own, allowPositionals: false,
        options: OPTIONS,
      }));
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    if (values.help) return out(this.usage), 0;
    if (values.list) {
      const width = Math.max(...SCENARIOS.map((s) => s.name.length));
      out(SCENARIOS.map((s) => `${s.name.padEnd(width)}  ${s.summary}\n`).join(''));
      return 0;
    }
    const framings: Framing[] = values.framing === 'both' ? ['ndjson', 'lsp'] : values.framing === 'lsp' || values.framing === 'ndjson' ? [values.framing] : [];
    if (framings.length === 0) throw new UsageError('--framing must be lsp, ndjson or both');
    const timeoutMs = Number(values['timeout-ms']);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 100) throw new UsageError('--timeout-ms must be an integer >= 100');
    if (command.length === 0) throw new UsageError('give the server command after --');
    const wanted = values.scenario ?? [];
    const unknown = wanted.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length > 0) throw new UsageError(`no such scenario: ${unknown.join(', ')} (see --list)`);
    const scenarios = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name));
    let expected = new Set<string>();
    if (values['expected-failures'] !== undefined) {
      try {
        expected = parseExpected(fs.readFileSync(values['expected-failures'], 'utf8'));
      } catch (e) {
        throw new CliError(`cannot read the expected-failures file: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, 2);
      }
    }
    const style = lineStyle(process.stdout.isTTY === true);
    const summary = await runSuite(scenarios, framings, expected, {
      command, timeoutMs, known: new Set(SCENARIOS.map((s) => s.name)), print: (o) => out(`${style(o)}\n`),
    });
    const { passed, failed, skipped, expectedFailures } = summary;
    out(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}${expectedFailures > 0 ? ` (${expectedFailures} expected failures)` : ''}\n`);
    if (values.json !== undefined) {
      const report = `${JSON.stringify({ command, framings, passed, failed, skipped, expectedFailures, results: summary.results }, null, 2)}\n`;
      fs.writeFileSync(values.json, report); // safe: a report file the user names, never a file of a store
    }
    return failed === 0 ? 0 : 1;
  },
};

/** One line a check: colored on a terminal, plain words otherwise. */
function lineStyle(tty: boolean): (o: Outcome) => string {
  return (o) => {
    const word = o.expected ? 'XFAIL' : o.status === 'pass' ? 'PASS' : o.status === 'skip' ? 'SKIP' : 'FAIL';
    const color = !tty ? '' : word === 'PASS' ? '\x1b[32m' : word === 'FAIL' ? '\x1b[31m' : '\x1b[33m';
    const tag = tty ? `${color}${word.padEnd(5)}\x1b[0m` : word.padEnd(5);
    // One line a check whatever the message holds (it may quote the server's error text).
    const message = o.message?.replace(/[\x00-\x1f\x7f]/g, ' ');
    return `${tag} ${o.framing.padEnd(6)} ${o.scenario}:${o.check}${message ? ` — ${message}` : ''}`;
  };
}
