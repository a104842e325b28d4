import { describe, expect, it } from 'vitest';
import { explain, makeStore, runCli } from './helpers.js';

/** Help texts, usage errors and failures of the subcommands: one line on stderr, exit 2 or 1. */

const COMMANDS = ['list', 'show', 'tail', 'verify', 'export', 'stats', 'ui'];

describe('help', () => {
  it('the top-level --help lists every subcommand next to serve', async () => {
    const r = await runCli(['--help']);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('session-sidecar [serve] [options]   serve the protocol on stdin/stdout');
    expect(r.stdout).toContain('--framing MODE');
    for (const c of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^ {2}${c} +\\S`, 'm'));
  });

  it.each(COMMANDS)('%s: --help, -h and `help <command>` print that subcommand\'s usage', async (c) => {
    for (const args of [[c, '--help'], [c, '-h'], ['help', c]]) {
      const r = await runCli(args);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: session-sidecar ${c}\\b`));
      expect(r.stdout).toContain('--store DIR');
      expect(r.stderr).toBe('');
    }
  });

  it('help for an unknown command', async () => {
    const r = await runCli(['help', 'frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("session-sidecar: help: unknown command 'frobnicate'\n");
  });
});

describe('errors', () => {
  it('usage errors: one line naming the subcommand, exit 2', async () => {
    const f = await makeStore();
    const cases: Array<[string[], string]> = [
      [['list', '--bogus'], "session-sidecar: list: unknown option '--bogus' (see 'session-sidecar list --help')"],
      [['show'], "session-sidecar: show: missing session id (see 'session-sidecar show --help')"],
      [['show', f.chat, 'extra'], "session-sidecar: show: unexpected argument 'extra' (see 'session-sidecar show --help')"],
      [['show', f.chat, '--json', '--raw'], "session-sidecar: show: --json and --raw exclude each other (see 'session-sidecar show --help')"],
      [['tail', f.chat, '-n', 'many'], "session-sidecar: tail: -n must be an integer >= 0 (see 'session-sidecar tail --help')"],
      [['tail', f.chat, '--store', f.root, '-n'], "session-sidecar: tail: option '-n, --lines <value>' needs a value (see 'session-sidecar tail --help')"],
      [['stats', '--store', f.root, '--workspace', '/tmp'], "session-sidecar: stats: --store and --workspace exclude each other (see 'session-sidecar stats --help')"],
      [['show', '.hidden'], 'session-sidecar: invalid session id: expected 1-128 characters of [A-Za-z0-9._-], no "..", not starting with "."'],
    ];
    for (const [args, line] of cases) {
      const r = await runCli([...args, ...(args.includes('--store') ? [] : ['--store', f.root])]);
      expect(r.code, `${args.join(' ')}: ${explain(r)}`).toBe(2);
      expect(r.stderr).toBe(`${line}\n`);
      expect(r.stdout).toBe('');
    }
  });

  it('failures: one line, exit 1', async () => {
    const f = await makeStore();
    const r = await runCli(['show', '01NOSUCHSESSION', '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('session-sidecar: session 01NOSUCHSESSION not found\n');
    const notStore = await runCli(['list', '--store', `${f.root}/sessions`]);
    expect(notStore.code).toBe(1);
    expect(notStore.stderr).toBe(`session-sidecar: ${f.root}/sessions is not a session store (it has no sessions/ directory)\n`);
  });

  it('serve keeps its own command line', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^session-sidecar: unknown command: frobnicate\n/);
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
