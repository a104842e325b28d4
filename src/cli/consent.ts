import { createInterface } from 'node:readline/promises';
import { err } from './output.js';

/**
 * Nothing destructive happens unasked. A command that moves, removes or rewrites sessions acts
 * only with `--yes`, or after a `y` typed at a terminal — stdin AND stdout both terminals, so
 * `prune | tail`, `yes | prune` and a cron job never count as asked. Otherwise it shows what it
 * would do and exits 1 naming `--yes`.
 */
export type Consent = 'given' | 'ask' | 'refused';

export function consentOf(values: Record<string, unknown>, tty = { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true }): Consent {
  if (values.yes === true) return 'given';
  return tty.stdin && tty.stdout ? 'ask' : 'refused';
}

/** Asks `question [y/N]` on the terminal (stderr); only y or yes goes ahead. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

/**
 * Whether to go ahead, after the dry run was shown: with --yes at once, at a terminal when the
 * user says so; off a terminal never (the reason, naming --yes, on stderr; the caller exits 1).
 */
export async function goAhead(consent: Consent, question: string, refusal: string): Promise<boolean> {
  if (consent === 'given') return true;
  if (consent === 'ask') {
    if (await confirm(question)) return true;
    err(`${refusal}\n`);
    return false;
  }
  err(`${refusal}: not a terminal; add --yes to go ahead\n`);
  return false;
}
