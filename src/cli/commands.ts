import { parseArgs } from 'node:util';
import type { Command } from './common.js';

/**
 * The inspection subcommands and `conformance`, next to `serve` (which src/cli.ts runs itself):
 * names and summaries here, each command's module loaded only when it runs — `serve` (every
 * agent's sidecar start) never loads them.
 */
export const COMMANDS = [
  { name: 'list', summary: 'the sessions of the store, most recently updated first', load: async () => (await import('./list.js')).listCommand },
  { name: 'show', summary: 'a session as a readable transcript (or its stored records: --json, --raw)', load: async () => (await import('./show.js')).showCommand },
  { name: 'search', summary: 'find text in the messages of the store\'s sessions (read-only)', load: async () => (await import('./search.js')).searchCommand },
  { name: 'pick', summary: 'choose a session interactively (type to filter); prints its id, or --show shows it', load: async () => (await import('./pick.js')).pickCommand },
  { name: 'tail', summary: 'the last records of a session; -f follows it live', load: async () => (await import('./tail.js')).tailCommand },
  { name: 'ui', summary: 'a read-only web viewer of the store on 127.0.0.1: prints its URL with a one-time token', load: async () => (await import('./ui/command.js')).uiCommand },
  { name: 'verify', summary: 'check journals, archives, index entries and file modes; exit 1 on any problem', load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'export', summary: 'a whole session (archived generations included) as JSON Lines or Markdown', load: async () => (await import('./export.js')).exportCommand },
  { name: 'stats', summary: 'sessions, records and bytes of the store; the largest sessions', load: async () => (await import('./stats.js')).statsCommand },
  { name: 'prune', summary: 'move the sessions not updated for a while to the trash (--older-than 30d); --dry-run on a terminal', load: async () => (await import('./prune.js')).pruneCommand },
  { name: 'trash', summary: 'the deleted sessions: list, restore, or empty (the only way bytes leave the store)', load: async () => (await import('./trash.js')).trashCommand },
  { name: 'backup', summary: 'a consistent, verified copy of a live directory store (--to DIR)', load: async () => (await import('./backup.js')).backupCommand },
  { name: 'reindex', summary: 'rebuild every index entry of a directory store from its journals', load: async () => (await import('./reindex.js')).reindexCommand },
  { name: 'repair', summary: 'rewrite a damaged session of its intact records, keeping the damaged journal as evidence (--yes)', load: async () => (await import('./repair.js')).repairCommand },
  { name: 'migrate', summary: 'copy every session of a store into another (directory <-> PostgreSQL), verified', load: async () => (await import('./migrate.js')).migrateCommand },
  { name: 'pg', summary: 'PostgreSQL store administration: migrate the schema as its owner before a rollout; status', load: async () => (await import('./pg.js')).pgCommand },
  { name: 'rekey', summary: 'change the encryption key of a store, directory or PostgreSQL (or encrypt or decrypt it), crash-safely', load: async () => (await import('./rekey.js')).rekeyCommand },
  { name: 'doctor', summary: 'check the configuration and the store (modes, dead leases, index, disk, encryption, PostgreSQL) and say what to do', load: async () => (await import('./doctor.js')).doctorCommand },
  { name: 'completion', summary: 'the completion script of bash, zsh or fish (commands, flags, session ids)', load: async () => (await import('./completion.js')).completionCommand },
  { name: 'conformance', summary: 'run the protocol conformance suite against a server command', load: async () => (await import('./conformance/index.js')).conformanceCommand },
] as const satisfies ReadonlyArray<{ name: string; summary: string; load: () => Promise<Command> }>;

export type CommandEntry = (typeof COMMANDS)[number];

/** A command's summary, for its own module (one text, shown by the top-level help and by the command). */
export function summaryOf(name: CommandEntry['name']): string {
  return (COMMANDS.find((c) => c.name === name) as CommandEntry).summary;
}

/** The command of an entry, its --help ending in its exit status (exitStatus.ts). */
export async function loadCommand(entry: CommandEntry): Promise<Command> {
  const { withExitStatus } = await import('./exitStatus.js');
  return withExitStatus(await entry.load());
}

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/**
 * The subcommand named by the first positional argument, and the arguments without it
 * (`session-sidecar --store DIR list` works as well as `session-sidecar list --store DIR`).
 * Undefined when the first positional is not a subcommand: then it is `serve`'s command line.
 */
export function splitCommand(argv: string[]): { command: CommandEntry | 'help'; rest: string[] } | undefined {
  let tokens;
  try {
    ({ tokens } = parseArgs({
      args: argv, strict: false, allowPositionals: true, tokens: true,
      options: {
        store: { type: 'string' }, 'store-env': { type: 'string' }, 'from-store-env': { type: 'string' }, 'to-store-env': { type: 'string' }, 'pg-listen-url': { type: 'string' }, 'pg-listen-url-env': { type: 'string' }, workspace: { type: 'string' }, framing: { type: 'string' }, 'max-message-bytes': { type: 'string' },
        'log-level': { type: 'string' }, 'lease-stale-ms': { type: 'string' }, 'pg-schema': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
        'from-pg-schema': { type: 'string' }, 'to-pg-schema': { type: 'string' },
        'encryption-key-env': { type: 'string' }, 'encryption-key-file': { type: 'string' },
        'from-env': { type: 'string' }, 'from-file': { type: 'string' }, 'to-env': { type: 'string' }, 'to-file': { type: 'string' },
        'from-key-env': { type: 'string' }, 'from-key-file': { type: 'string' }, 'to-key-env': { type: 'string' }, 'to-key-file': { type: 'string' },
      },
    }));
  } catch {
    return undefined;
  }
  const first = tokens.find((t) => t.kind === 'positional' || t.kind === 'option-terminator');
  if (!first || first.kind !== 'positional') return undefined;
  const command = first.value === 'help' ? 'help' : findCommand(first.value);
  if (!command) return undefined;
  return { command, rest: [...argv.slice(0, first.index), ...argv.slice(first.index + 1)] };
}

export function commandList(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
}
