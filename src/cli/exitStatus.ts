import type { Command } from './common.js';

/**
 * Each command's exit codes, one table: appended to its --help (and so to the man page, which
 * prints every --help) as an "Exit status:" section. A command without a row here is a test
 * failure (test/cli/exitStatus.test.ts), so a new command documents its codes.
 *
 * Shared meanings: 0 done; 1 a failure (the store or a session could not be read or written, or
 * a change was not confirmed); 2 a usage error (nothing was changed); 130 stopped by Ctrl-C
 * (SIGINT) at a safe point, what was done is kept and a rerun goes on.
 */
const USAGE = '2    a usage error: unknown option, missing or malformed argument (nothing changed)';
const FAILED = '1    the store or session could not be opened or read';
const NO_YES = '1    nothing done: not confirmed (off a terminal it needs --yes), or a failure';
const STOPPED = '130  stopped by Ctrl-C at a safe point: what was done stays done, a rerun goes on';

export const EXIT_STATUS: Readonly<Record<string, readonly string[]>> = {
  list: ['0    listed (also when no session matches)', FAILED, '2    a usage error (nothing changed); also a --jq filter that does not compile', '5    the --jq filter failed on the data (as jq exits)'],
  show: ['0    shown', '1    no such session, or it is damaged (show --salvage reads what is intact), or the store could not be read', USAGE],
  search: ['0    searched (also when nothing matched; with more hits than --limit a note on stderr)', FAILED, '2    a usage error (nothing changed); also a --jq filter that does not compile', '5    the --jq filter failed on the data (as jq exits)'],
  pick: ['0    a session chosen: its id printed (or shown, with --show)', '1    the store holds no session, or could not be read', '2    a usage error, or no terminal to pick on', '130  nothing chosen (Esc or Ctrl-C)'],
  tail: ['0    printed; with -f, ended by Ctrl-C, SIGTERM or SIGHUP, or the session was deleted', '1    no such session, or it could no longer be read while followed', USAGE],
  ui: ['0    stopped by Ctrl-C or SIGTERM', '1    the store could not be opened or the viewer failed', '2    a usage error, or the port is in use or not allowed'],
  verify: ['0    no problem found (warnings allowed, unless --strict)', '1    a problem found (with --strict, a warning too), or no store', USAGE, STOPPED],
  export: ['0    exported', '1    no such session, or it is damaged (export --salvage writes what is intact), or the store could not be read', USAGE, STOPPED],
  stats: ['0    counted', FAILED, USAGE],
  prune: ['0    moved to the trash (or, with --dry-run, listed; also when nothing is old enough)', NO_YES, USAGE, STOPPED],
  trash: ['0    listed, restored or emptied (or, with --dry-run, listed)', NO_YES, '2    a usage error (nothing changed); also a --jq filter that does not compile', '5    the --jq filter of trash list failed on the data', STOPPED],
  migrate: ['0    every session copied and verified in the target', '1    a session could not be copied, the copy did not verify, or the target holds sessions and --yes was not given', USAGE, STOPPED],
  pg: ['0    migrate: the schema is current afterwards; status: this binary can serve the schema', '1    the database could not be reached or migrated, or (status) this binary cannot serve it', USAGE],
  rekey: ['0    every session is under the new key (or, with --decrypt, in the clear)', NO_YES, '2    a usage error (nothing changed); also no --to-env/--to-file without --decrypt', STOPPED],
  completion: ['0    the script printed', USAGE],
  conformance: ['0    every check passed (expected failures aside)', '1    a check failed (or an expected failure passed), or the server could not be started', USAGE],
  backup: ['0    the copy is made and verifies clean', '1    the copy could not be made or does not verify (no DIR is left behind), or DIR is not empty', USAGE, STOPPED],
  reindex: ['0    every index entry rebuilt (sessions held by a running sidecar skipped, and named)', '1    a session could not be read (named; the others are rebuilt), or no store', USAGE, STOPPED],
  doctor: ['0    nothing needs doing', '1    a finding needs action (each says what to do)', USAGE],
  repair: ['0    repaired (or nothing to repair)', '1    not confirmed (off a terminal it needs --yes), the session is held by a running sidecar, or the repair failed (nothing changed)', USAGE],
};

/** The "Exit status:" section of `command`'s --help. */
export function exitStatusText(name: string): string {
  const rows = EXIT_STATUS[name];
  return rows ? `\nExit status:\n${rows.map((r) => `  ${r}`).join('\n')}\n` : '';
}

/** The command with its --help ending in its exit status (`this.usage` in its run is this text). */
export function withExitStatus(command: Command): Command {
  if (command.usage.includes('\nExit status:\n')) return command;
  return { ...command, usage: `${command.usage.replace(/\n*$/, '\n')}${exitStatusText(command.name)}`, run: command.run };
}
