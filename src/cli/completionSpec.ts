import { COMMANDS, loadCommand } from './commands.js';
import { type Command, STORE_OPTIONS } from './common.js';
import { commandFlags, optionFlags } from './helpFlags.js';
import { SERVE_OPTIONS, USAGE } from './serveUsage.js';

/**
 * What the shell completions offer, derived from the command registry when the script is
 * printed: every command (its summary), its flags (commandFlags: its declared options, as its
 * --help lists them), its actions, and what a flag's value or a positional is — a directory, a
 * file, one of some words, or a session id (asked of `session-sidecar completion ids`). Nothing
 * here names a command: a command added to COMMANDS is completed as it is.
 */

/** How a value is completed. */
export type ValueKind = { kind: 'dir' } | { kind: 'file' } | { kind: 'words'; words: string[] } | { kind: 'session' } | { kind: 'trashed' } | { kind: 'none' };

export interface FlagSpec {
  flag: string;
  /** undefined: a switch, no value. */
  value?: ValueKind;
}

export interface CommandSpec {
  name: string;
  summary: string;
  flags: FlagSpec[];
  actions: string[];
  /** What its positionals are (after the action, for a command of actions). */
  positional: ValueKind;
  /** Per action, what its positionals are (`trash restore ID...`: trashed sessions). */
  actionPositional: Record<string, ValueKind>;
}

export interface CompletionSpec {
  program: string;
  commands: CommandSpec[];
  /** `session-sidecar [serve] --...`: serve's options (SERVE_OPTIONS, as its --help lists them). */
  serveFlags: FlagSpec[];
  /** The flags whose value names the store: passed on to `completion ids`. */
  storeFlags: string[];
}

/** The placeholder the usage gives a flag's value (`--store DIR|URL` → "DIR|URL"), its first alternatives form when several. */
function placeholders(usage: string, flag: string): string[] {
  const re = new RegExp(`(?<![\\w-])${flag.replace(/-/g, '\\-')}[ =]([A-Za-z][A-Za-z_|.-]*)`, 'g');
  return Array.from(usage.matchAll(re), (m) => m[1] as string);
}

/** A value's kind from its placeholders: words (`updated|created|size`), a session id, a directory or a file. */
export function valueKind(names: string[]): ValueKind {
  const words = names.find((n) => /^[a-z]+(\|[a-z]+)+$/.test(n));
  if (words) return { kind: 'words', words: words.split('|') };
  if (names.some((n) => /^(ID|SESSION)$/.test(n))) return { kind: 'session' };
  if (names.some((n) => /(^|\|)DIR(\||$)/.test(n))) return { kind: 'dir' };
  if (names.some((n) => /(^|\|)(FILE|PATH)(\||$)/.test(n))) return { kind: 'file' };
  return { kind: 'none' };
}

function flagsOf(command: Pick<Command, 'usage' | 'name'>, accepted: Iterable<{ flag: string; takesValue: boolean }>): FlagSpec[] {
  return [...accepted].map(({ flag, takesValue }) => (takesValue ? { flag, value: valueKind(placeholders(command.usage, flag)) } : { flag }))
    .sort((a, b) => a.flag.localeCompare(b.flag));
}

/** The first lines of a usage (its synopsis, up to the first blank line). */
const synopsis = (usage: string) => usage.split('\n\n')[0] ?? '';

function specOf(command: Command): CommandSpec {
  const head = synopsis(command.usage);
  const actions = Object.keys(command.actions ?? {});
  const actionPositional: Record<string, ValueKind> = {};
  for (const a of actions) {
    const line = head.split('\n').find((l) => l.includes(`session-sidecar ${command.name} ${a}`)) ?? '';
    actionPositional[a] = /\s(ID|SESSION)(\.\.\.)?(\s|$)/.test(line.replace(/--\S+ (ID|SESSION)/g, '')) ? { kind: 'trashed' } : { kind: 'none' };
  }
  return {
    name: command.name,
    summary: command.summary,
    flags: flagsOf(command, commandFlags(command).values()),
    actions,
    positional: /<session-id>/.test(head) ? { kind: 'session' } : { kind: 'none' },
    actionPositional,
  };
}

/** The completion spec of every command in the registry (each command's module loaded). */
export async function completionSpec(): Promise<CompletionSpec> {
  const commands = await Promise.all(COMMANDS.map(async (c) => specOf(await loadCommand(c))));
  const serve = { name: 'serve', usage: USAGE };
  return {
    program: 'session-sidecar',
    commands,
    serveFlags: flagsOf(serve, optionFlags(SERVE_OPTIONS).values()),
    storeFlags: Object.entries(STORE_OPTIONS).filter(([, o]) => o.type === 'string').map(([name]) => `--${name}`),
  };
}
