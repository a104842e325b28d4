import { COMMANDS, loadCommand } from './commands.js';
import { filled, roffText, usageRoff } from './manRoff.js';
import { USAGE } from './serveUsage.js';

/**
 * man/session-sidecar.1, made from the help texts (`npm run man`, scripts/man.mjs): the
 * synopsis and serve's options from `session-sidecar --help`, then one subsection per command
 * of the registry with its `--help` as it is printed. The same help texts, version and date give
 * the same bytes: test/cli/man.test.ts regenerates it and compares with the checked-in page.
 */

const ENVIRONMENT: Array<[string, string]> = [
  ['SESSION_SIDECAR_STORE', 'The store when neither --store nor --workspace is given: a directory, or a postgres:// URL.'],
  ['SESSION_SIDECAR_ENCRYPTION_KEY_ENV', 'The name of the environment variable holding the base64 key of an encrypted store, when neither --encryption-key-env nor --encryption-key-file is given.'],
  ['SESSION_SIDECAR_ENCRYPTION_KEY_FILE', 'The path of the key file of an encrypted store (mode 0600, owned by you), likewise.'],
  ['PGPASSWORD, PGPASSFILE', 'The password of a PostgreSQL store, or the password file (default ~/.pgpass), as libpq reads them: the URL can then go without it.'],
  ['SESSION_SIDECAR_PG_START_WAIT_MS', 'How long serve waits for a PostgreSQL store that is down at start (default 30000).'],
  ['NO_COLOR', 'When set, no command colors its output (colors are only used on a terminal anyway).'],
];

const FILES: Array<[string, string]> = [
  ['<workspace>/.session-sidecar/', 'The default store: a directory, mode 0700, never committed (it holds a .gitignore of "*").'],
  ['<store>/sessions/<id>/journal.jsonl', 'A session\'s journal: one JSON record per line, each with its checksum, appended and fdatasync\'d before the append is answered.'],
  ['<store>/index/<id>.json', 'A derived summary of a journal (a cache, rebuilt from the journal).'],
  ['<store>/history/<id>/<generation>.jsonl', 'A journal as it was before a compaction.'],
  ['<store>/trash/<id>/', 'A deleted session, restorable until the trash is emptied.'],
  ['<store>/blobs/sha256/', 'Large strings, stored once per store and named by their sha256.'],
  ['<store>/locks/', 'Writer leases and kernel locks: one writer per session.'],
  ['<store>/encryption.json', 'The key check of an encrypted store.'],
];

/** The codes all commands share; each command's own are in its subsection (its --help, exitStatus.ts). */
const EXIT_STATUS: Array<[string, string]> = [
  ['0', 'Success: serve ended on shutdown/exit or end of input; a command did what it was asked (verify: no problem found).'],
  ['1', 'A failure: the store could not be opened or served, a session was refused or failed, verify found problems, or a change was not confirmed (no --yes off a terminal).'],
  ['2', 'A usage error: an unknown command or option, a missing or malformed argument. Nothing was changed.'],
  ['5', 'A --jq filter failed on the data (list, search, trash list), as jq exits.'],
  ['130', 'Stopped by Ctrl-C (SIGINT) at a safe point (long commands: what was done stays done, a rerun goes on), or nothing picked (pick).'],
];

const tagged = (entries: Array<[string, string]>, bold: boolean) =>
  entries.flatMap(([term, text]) => ['.TP', bold ? `.B ${roffText(term)}` : roffText(term), filled(text)]);

function serveOptions(): string[] {
  const block = USAGE.split('\n\n').find((b) => b.startsWith('Options (serve):')) ?? '';
  return usageRoff(block).filter((l, i) => !(i < 2 && (l === '.PP' || l.startsWith('Options'))));
}

/** The page; `date` (YYYY-MM-DD) is the day its text last changed (scripts/man.mjs keeps it while the text stays the same). */
export async function manPage(version: string, date: string): Promise<string> {
  const name = USAGE.split('\n')[0]?.split(' — ')[1] ?? '';
  const intro = USAGE.split('\n\n').find((b) => b.startsWith('A client spawns')) ?? '';
  const lines = [
    '.\\" Generated from the help texts by npm run man (scripts/man.mjs, src/cli/manPage.ts): do not edit.',
    `.TH SESSION\\-SIDECAR 1 ${date} "session\\-sidecar ${roffText(version)}" "User Commands"`,
    '.nh',
    '.SH NAME',
    `session\\-sidecar \\- ${roffText(name)}`,
    '.SH SYNOPSIS',
    '.B session\\-sidecar',
    '[\\fBserve\\fR] [\\fIoptions\\fR]',
    '.br',
    '.B session\\-sidecar',
    '\\fIcommand\\fR [\\fIargs\\fR]',
    '.br',
    '.B session\\-sidecar',
    '\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR',
    '.SH DESCRIPTION',
    filled('session-sidecar persists the sessions of AI agents durably and secret-safely. An agent (in any language) spawns it and talks JSON-RPC 2.0 over its stdin and stdout: with no command, or with serve, it serves the protocol on a store — a directory (the default) or a PostgreSQL database. An append is answered only once it is durable; a record holding a registered secret is refused.'),
    '.PP',
    filled(intro.replace(/\n/g, ' ')),
    '.PP',
    filled('The commands inspect or manage a store. The inspection commands are read-only and safe while a sidecar serves the store; prune, trash restore/empty, rekey and migrate write, and ask first (--yes off a terminal). Each takes --help.'),
    '.SH OPTIONS',
    roffText('The options of serve:'),
    ...serveOptions(),
    '.SH COMMANDS',
  ];
  for (const entry of COMMANDS) {
    const command = await loadCommand(entry);
    lines.push(`.SS ${roffText(command.name)}`, filled(`${command.summary.charAt(0).toUpperCase()}${command.summary.slice(1)}.`), ...usageRoff(command.usage));
  }
  lines.push(
    '.SH ENVIRONMENT', ...tagged(ENVIRONMENT, true),
    '.SH FILES', ...tagged(FILES, false),
    '.SH EXIT STATUS', ...tagged(EXIT_STATUS, false),
    '.SH SEE ALSO',
    filled('protocol/README.md (the protocol), protocol/STORAGE.md (the storage format and guarantees) and README.md in the package; session-sidecar completion bash|zsh|fish.'),
  );
  return `${lines.join('\n')}\n`;
}

/** The date of a page's .TH line. */
export function dateOf(page: string): string | undefined {
  return /^\.TH \S+ 1 (\d{4}-\d\d-\d\d) /m.exec(page)?.[1];
}
