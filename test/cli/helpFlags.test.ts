import { describe, expect, it } from 'vitest';
import { commandList, COMMANDS, loadCommand } from '../../src/cli/commands.js';
import { type Command, STORE_OPTIONS } from '../../src/cli/common.js';
import { actionFlags, helpFlags, optionFlags } from '../../src/cli/helpFlags.js';
import { SERVE_OPTIONS, USAGE } from '../../src/cli/serveUsage.js';
import { tempDir } from '../helpers.js';
import { explain, runCli } from './helpers.js';

/**
 * "Each subcommand's --help lists only options it accepts" (README, Command line): for every
 * command of the registry — those added later too — the flags its usage lists and the options
 * its parseArgs call is given are one set, with the same arity; an action (trash list|restore|
 * empty, pg migrate|status) takes the flags its synopsis line lists and refuses the others.
 */
const commands: Command[] = await Promise.all(COMMANDS.map((c) => loadCommand(c)));
const storeFlags = new Set(Object.keys(STORE_OPTIONS));

describe('every command --help lists exactly the options it accepts', () => {
  it.each(commands.map((c) => [c.name, c] as const))('%s', (_name, command) => {
    expect(command.options, `${command.name} declares its options (Command.options)`).toBeDefined();
    const listed = helpFlags(command.usage, command.name);
    const accepted = optionFlags(command.options ?? {});
    expect([...listed.keys()].filter((f) => !accepted.has(f)), 'listed in --help but not accepted').toEqual([]);
    expect([...accepted.keys()].filter((f) => !listed.has(f)), 'accepted but not in --help').toEqual([]);
    for (const [flag, { takesValue }] of listed) {
      expect(takesValue, `${command.name} ${flag}: --help ${takesValue ? 'gives it a value' : 'gives it no value'}`).toBe(accepted.get(flag)?.takesValue);
    }
    for (const [action, own] of Object.entries(command.actions ?? {})) {
      const synopsis = actionFlags(command.usage, command.name, action);
      const head = command.usage.split('\n\n')[0] as string;
      expect(head, `the synopsis names '${command.name} ${action}'`).toMatch(new RegExp(`session-sidecar ${command.name} (\\S+\\|)?${action}(\\||\\s|$)`));
      expect([...synopsis].filter((f) => !own.includes(f.slice(2)) && !storeFlags.has(f.slice(2))), `${action}: in its synopsis but refused`).toEqual([]);
      expect(own.filter((f) => !synopsis.has(`--${f}`)), `${action}: taken but not in its synopsis`).toEqual([]);
    }
  });

  it('serve: session-sidecar --help lists exactly the options parseServe takes', () => {
    const listed = helpFlags(USAGE.replace(commandList(), ''), 'serve'); // the commands' summaries name their own flags
    const accepted = optionFlags(SERVE_OPTIONS);
    expect([...listed.keys()].filter((f) => !accepted.has(f)), 'listed in --help but not accepted').toEqual([]);
    expect([...accepted.keys()].filter((f) => !listed.has(f)), 'accepted but not in --help').toEqual([]);
    for (const [flag, { takesValue }] of listed) expect(takesValue, flag).toBe(accepted.get(flag)?.takesValue);
  });

  it('the help parser sees a flag the text lists and the options do not (the check can fail)', () => {
    const listed = helpFlags('Usage: session-sidecar x [--json]\n\nOptions:\n  --json    as JSON\n  --bogus N   not accepted\n  -q        quiet', 'x');
    expect([...listed.keys()].sort()).toEqual(['--bogus', '--json', '-q']);
    expect(listed.get('--bogus')?.takesValue).toBe(true);
    expect(listed.get('--json')?.takesValue).toBe(false);
  });
});

describe('the built binary parses every flag its --help lists', () => {
  it.each(commands.map((c) => [c.name, c] as const))('%s', async (_name, command) => {
    const args: string[] = [];
    for (const { flag, takesValue } of helpFlags(command.usage, command.name).values()) {
      if (flag === '--help' || flag === '-h') continue;
      if (!takesValue) args.push(flag);
      else if (flag.startsWith('--')) args.push(`${flag}=x`);
      else args.push(flag, 'x');
    }
    // strict parsing comes before --help: an unknown flag, or a value given to a boolean, is a usage error
    const r = await runCli([command.name, ...args, '--help']);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toBe(command.usage);
  }, 60_000);

  it.each(commands.flatMap((c) => Object.entries(c.actions ?? {}).flatMap(([action, own]) => Object.entries(c.options ?? {})
    .filter(([name]) => !own.includes(name) && !storeFlags.has(name))
    .map(([name, o]) => [`${c.name} ${action} --${name}`, c.name, action, o.type === 'string' ? `--${name}=x` : `--${name}`] as const))))(
    '%s is refused', async (_label, name, action, flag) => {
      const store = tempDir('sidecar-help-');
      const r = await runCli([name, action, flag, ...(name === 'pg' ? ['--store', 'postgres://nobody@127.0.0.1:1/none'] : ['--store', store])]);
      expect(r.code, explain(r)).toBe(2);
      expect(r.stderr).toContain(`${flag.replace(/=x$/, '')} does not go with '${name} ${action}'`);
    }, 60_000);
});
