import { parseArgs } from 'node:util';
import type { Command } from './common.js';
import { conformanceCommand } from './conformance/index.js';
import { exportCommand } from './export.js';
import { listCommand } from './list.js';
import { migrateCommand } from './migrate.js';
import { showCommand } from './show.js';
import { statsCommand } from './stats.js';
import { tailCommand } from './tail.js';
import { verifyCommand } from './verify.js';

/** The inspection subcommands and `conformance`, next to `serve` (which src/cli.ts runs itself). */
export const COMMANDS: readonly Command[] = [listCommand, showCommand, tailCommand, verifyCommand, exportCommand, statsCommand, migrateCommand, conformanceCommand];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/**
 * The subcommand named by the first positional argument, and the arguments without it
 * (`session-sidecar --store DIR list` works as well as `session-sidecar list --store DIR`).
 * Undefined when the first positional is not a subcommand: then it is `serve`'s command line.
 */
export function splitCommand(argv: string[]): { command: Command | 'help'; rest: string[] } | undefined {
  let tokens;
  try {
    ({ tokens } = parseArgs({
      args: argv, strict: false, allowPositionals: true, tokens: true,
      options: {
        store: { type: 'string' }, workspace: { type: 'string' }, framing: { type: 'string' }, 'max-message-bytes': { type: 'string' },
        'log-level': { type: 'string' }, 'lease-stale-ms': { type: 'string' }, 'pg-schema': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
        'from-pg-schema': { type: 'string' }, 'to-pg-schema': { type: 'string' },
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
