import type { Command, CommandOptions } from './common.js';

/**
 * The flags a command's usage text lists, and those it accepts (its parseArgs options), as one
 * vocabulary: `--name` and `-x`. The help test (test/cli/helpFlags.test.ts) requires the two
 * sets to be equal; `completion` offers them and the man page prints the usage they come from.
 */

/** A flag of a usage text with whether the text gives it a value (`--older-than DURATION`). */
export interface Flag {
  flag: string;
  takesValue: boolean;
}

const LONG = /(?<![\w-])--([a-z][a-z0-9-]*)(?:[ =]([A-Z][A-Z_|.]*|[a-z]+(?:\|[a-z]+)+)\b)?/g;
const SHORT = /(?<![\w-])-([a-zA-Z])(?:,| |\]|\)|$)(?:\s?([A-Z]+)\b)?/gm;

/**
 * The lines of a usage text that list flags: all of it but the example command lines of other
 * programs (an indented line that does not start with this command, as conformance's examples
 * of a server's own command line) and their continuations.
 */
function listingLines(usage: string, name: string): string[] {
  const lines = usage.split('\n');
  const keep: string[] = [];
  let example = false;
  for (const line of lines) {
    const [, cmd, sub] = /^\s+(\S+)\s+(\S+)?/.exec(line) ?? [];
    if (example) {
      // the continuation of an example's line (it ended with a backslash)
      example = /\\$/.test(line);
      continue;
    }
    const otherCommand = cmd === 'session-sidecar' && sub !== undefined && /^[a-z][a-z-]*$/.test(sub) && sub !== name;
    if (cmd !== undefined && (/^(node|\.\/)/.test(cmd) || otherCommand)) {
      example = /\\$/.test(line);
      continue;
    }
    if (/^\s+session-sidecar \S+ -- /.test(line)) {
      // `session-sidecar conformance -- <server command...>`: flags after `--` are the server's
      keep.push(line.slice(0, line.indexOf(' -- ')));
      example = /\\$/.test(line);
      continue;
    }
    keep.push(line);
  }
  return keep;
}

/** Every flag a usage text lists (long ones anywhere in the text, short ones in the synopsis and option lines). */
export function helpFlags(usage: string, name: string): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  const add = (flag: string, value: string | undefined) => {
    const known = flags.get(flag);
    flags.set(flag, { flag, takesValue: (known?.takesValue ?? false) || value !== undefined });
  };
  for (const line of listingLines(usage, name)) {
    for (const m of line.matchAll(LONG)) add(`--${m[1]}`, m[2]);
    // an option line `  --pg-pooler transaction   text`: the word after the flag is its value
    const term = /^ {2}(--[a-z][a-z0-9-]*) ([a-z]\S*)(?: {2,}|$)/.exec(line);
    if (term) add(term[1] as string, term[2]);
    if (/^(Usage:|\s+session-sidecar |\s+-[a-zA-Z],? )/.test(line) || /^\s*\[?-[a-zA-Z]/.test(line)) {
      for (const m of line.matchAll(SHORT)) add(`-${m[1]}`, m[2]);
    }
  }
  return flags;
}

/** The flags of the synopsis lines of one action (`session-sidecar trash empty [...]`). */
export function actionFlags(usage: string, name: string, action: string): Set<string> {
  const prefix = `session-sidecar ${name} ${action}`;
  const lines = usage.split('\n\n')[0]?.split('\n') ?? [];
  const flags = new Set<string>();
  for (const line of lines.filter((l) => l.replace(/^Usage:/, '').trim().startsWith(prefix))) {
    for (const m of line.matchAll(LONG)) flags.add(`--${m[1]}`);
  }
  return flags;
}

/** The flags a parseArgs options object accepts, with whether each takes a value. */
export function optionFlags(options: CommandOptions): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const [name, o] of Object.entries(options)) {
    flags.set(`--${name}`, { flag: `--${name}`, takesValue: o.type === 'string' });
    if (o.short) flags.set(`-${o.short}`, { flag: `-${o.short}`, takesValue: o.type === 'string' });
  }
  return flags;
}

/** What a command accepts: its declared options, or (a command that declares none) what its usage lists. */
export function commandFlags(command: Command): Map<string, Flag> {
  return command.options ? optionFlags(command.options) : helpFlags(command.usage, command.name);
}
