import { summaryOf } from './commands.js';
import { type Command, type CommandOptions, listAll, openStore, parseCommand, STORE_HELP, STORE_OPTIONS, UsageError } from './common.js';

const OPTIONS = { ...STORE_OPTIONS, show: { type: 'boolean' } } as const satisfies CommandOptions;
import { err, out } from './output.js';
import { pickSession } from './picker.js';
import { showCommand } from './show.js';

export const pickCommand: Command = {
  name: 'pick',
  summary: summaryOf('pick'),
  options: OPTIONS,
  usage: `Usage: session-sidecar pick [--show] [options]

Chooses a session interactively, most recently updated first: each row its title (or first
message), last update and cwd. Type to filter (case-insensitive: title, first and last message,
cwd); Up/Down or Ctrl-P/Ctrl-N move; Enter prints the chosen session's id on stdout (so
\`session-sidecar show $(session-sidecar pick)\` works); Esc or Ctrl-C quits with exit code 130
and prints nothing. The picker is drawn on stderr and needs a terminal there and on stdin
('session-sidecar list' lists the sessions anywhere). Reads only.

Options:
  --show                   show the chosen session (as 'show' does) instead of printing its id
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    // drawn on stderr, keys from stdin: stdout may be a pipe ($(session-sidecar pick))
    if (!process.stdin.isTTY || !process.stderr.isTTY) throw new UsageError("pick needs a terminal (stdin and stderr); 'session-sidecar list' lists the sessions", this.name);
    const store = await openStore(p.target);
    let sessions;
    try {
      sessions = await listAll(store);
    } finally {
      await store.closeAll();
    }
    if (sessions.length === 0) {
      err(`session-sidecar pick: no sessions in ${p.root}`);
      return 1;
    }
    const picked = await pickSession(sessions, process.stdin, process.stderr);
    if (picked === 'cancelled') return 130;
    if (p.values.show === true) return showCommand.run([picked.sessionId, ...argv.filter((a) => a !== '--show')]);
    out(`${picked.sessionId}\n`);
    return 0;
  },
};
