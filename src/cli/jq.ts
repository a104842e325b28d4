import { CliError, UsageError } from './common.js';
import { out, safeText } from './output.js';

/**
 * `--json` output, and `--jq EXPR` (gh's convention) on the listing commands: the same JSON
 * filtered by jq 1.8 itself — jq-wasm, jq compiled to WebAssembly (no native build, nothing
 * downloaded), loaded only when `--jq` is given. As gh and `jq -r` do, a string result prints
 * raw, anything else as JSON. `--jq` implies `--json` (with FIELDS or not, the filter sees
 * exactly what `--json` would print). jq reads the JSON text itself, so numbers reach it as
 * printed. On a terminal, control characters in the result are made visible (session text could
 * carry escape sequences); through a pipe the result is byte for byte what jq printed.
 *
 * Exit: a filter jq cannot compile is a usage error (2); a filter that fails on the data
 * (`.title | tonumber`, `error("x")`) exits 5, as jq does.
 */
export const JQ_OPTION = { jq: { type: 'string' } } as const;
export const JQ_HELP = `  --jq EXPR                filter the JSON output with jq EXPR (jq 1.8, built in; implies
                           --json; strings print raw, as gh and jq -r do)`;

export async function printJson(value: unknown, jq: string | undefined, command: string): Promise<void> {
  const text = JSON.stringify(value, null, 2);
  if (jq === undefined) return void out(`${text}\n`);
  if (jq.trim() === '') throw new UsageError('--jq needs an expression', command);
  const { raw } = await import('jq-wasm/inline');
  const r = await raw(text, jq, ['-r']);
  if (r.exitCode !== 0) {
    const message = r.stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '').map((l) => l.replace(/^jq: (error: )?/, ''));
    const first = safeText(message[0] ?? `jq exited ${r.exitCode}`);
    if (r.exitCode === 3) throw new UsageError(`--jq: ${first}`, command);
    throw new CliError(`--jq: ${first}`, 5);
  }
  if (r.stdout === '') return;
  const shown = process.stdout.isTTY ? safeText(r.stdout) : r.stdout;
  out(shown.endsWith('\n') ? shown : `${shown}\n`);
}
