import { describe, expect, it } from 'vitest';
import { cwdStore } from './findKit.js';
import { explain, runCli } from './helpers.js';
import { cliLine, inPty } from './pty.js';

/**
 * `pick` (issue 31, finding 7) in a real pseudo-terminal: keys typed into it, the chosen id
 * read from stdout through a command substitution (the picker draws on stderr).
 */
const READY = 'pick a session';
const DOWN = '\u001b[B';
const UP = '\u001b[A';
/** Runs pick with stdout captured by $(...), then prints what it got and its exit code. */
const captured = (args: string[]) => `id=$(${cliLine(['pick', ...args])}); rc=$?; echo "CHOSEN=[$id] rc=$rc"`;

describe('pick', () => {
  it('typing filters, Down moves, Enter prints the chosen id on stdout (exit 0)', async () => {
    const { root, ids } = await cwdStore();
    // "proj" matches the two sessions of .../proj (by cwd and messages), newest first: old (updated last), then hereNew
    const r = await inPty(captured(['--store', root]), { ready: READY, keys: ['P', 'r', 'O', 'j', DOWN, '\r'] });
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`CHOSEN=[${ids.hereNew}] rc=0`);
    const first = await inPty(captured(['--store', root]), { ready: READY, keys: ['\u000e', '\u000e', '\u0010', '\r'] }); // Ctrl-N twice, Ctrl-P: the second row
    expect(first.output).toContain(`CHOSEN=[${ids.other}] rc=0`);
    const filtered = await inPty(captured(['--store', root]), { ready: READY, keys: ['e', 'l', 's', 'e', UP, '\r'] });
    expect(filtered.output).toContain(`CHOSEN=[${ids.other}] rc=0`);
  });

  it('Esc and Ctrl-C: exit 130, nothing on stdout', async () => {
    const { root } = await cwdStore();
    const esc = await inPty(captured(['--store', root]), { ready: READY, keys: ['x', '\u001b'] });
    expect(esc.output).toContain('CHOSEN=[] rc=130');
    const ctrlC = await inPty(captured(['--store', root]), { ready: READY, keys: ['\u0003'] });
    expect(ctrlC.output).toContain('CHOSEN=[] rc=130');
  });

  it('--show shows the chosen session', async () => {
    const { root, ids } = await cwdStore();
    const r = await inPty(cliLine(['pick', '--show', '--store', root]), { ready: READY, keys: ['o', 't', 'h', 'e', 'r', '\r'] });
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`Elsewhere  ${ids.other}`);
    expect(r.output).toContain('in other');
  });

  it('off a terminal: a usage error naming list (exit 2), nothing on stdout', async () => {
    const { root } = await cwdStore();
    const r = await runCli(['pick', '--store', root]);
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain("'session-sidecar list'");
    expect(r.stdout).toBe('');
    const help = await runCli(['pick', '--help']);
    expect(help.stdout).toContain('--show');
  });
});
