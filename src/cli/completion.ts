import { summaryOf } from './commands.js';
import { checkAction, type Command, type CommandOptions, listAll, openStore, parseCommand, STORE_HELP, STORE_OPTIONS, UsageError } from './common.js';
import { out } from './output.js';

/** Every option completion accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, trash: { type: 'boolean' } } as const satisfies CommandOptions;

export const completionCommand: Command = {
  name: 'completion',
  summary: summaryOf('completion'),
  options: OPTIONS,
  actions: { bash: [], zsh: [], fish: [], ids: ['trash'] },
  usage: `Usage: session-sidecar completion bash|zsh|fish
       session-sidecar completion ids [--trash] [options]

Prints the completion script of a shell on stdout: the commands, each command's flags and
actions, the values of flags that take words, directories or files, and session ids where a
command takes one. The script is made from the commands of this binary: print it again after
an upgrade.

  bash   session-sidecar completion bash > ~/.local/share/bash-completion/completions/session-sidecar
         (or add: source <(session-sidecar completion bash) to ~/.bashrc)
  zsh    session-sidecar completion zsh > "\${fpath[1]}/_session-sidecar", then restart zsh
         (or add: source <(session-sidecar completion zsh) to ~/.zshrc, after compinit)
  fish   session-sidecar completion fish > ~/.config/fish/completions/session-sidecar.fish

'ids' is what the scripts ask for session ids: the ids of the store's sessions, one a line
(with --trash: of the sessions in its trash), read-only; the store options of the line being
completed are passed on.

Options:
  --trash                  (ids) the ids of the sessions in the trash
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 1, max: 1, names: 'bash, zsh, fish or ids' });
    if (!p) return out(this.usage), 0;
    const action = p.positionals[0] as string;
    if (!(action in (this.actions ?? {}))) throw new UsageError(`unknown shell '${action}' (bash, zsh or fish)`, this.name);
    checkAction(this, action, p.values);
    if (action === 'ids') return ids(p.target, p.values.trash === true);
    const [{ completionSpec }, scripts] = await Promise.all([import('./completionSpec.js'), scriptsOf(action)]);
    out(scripts(await completionSpec()));
    return 0;
  },
};

async function scriptsOf(shell: string): Promise<(spec: import('./completionSpec.js').CompletionSpec) => string> {
  if (shell === 'bash') return (await import('./completionBash.js')).bashScript;
  if (shell === 'zsh') return (await import('./completionZsh.js')).zshScript;
  return (await import('./completionFish.js')).fishScript;
}

/** The session ids, one a line (the scripts send its stderr to /dev/null: a missing store completes nothing). */
async function ids(target: import('./storeTarget.js').StoreTarget, trash: boolean): Promise<number> {
  const store = await openStore(target);
  try {
    if (trash) {
      const { trashOf } = await import('../core/services/trash.js');
      out((await trashOf(store)).map((e) => `${e.sessionId}\n`).join(''));
    } else out((await listAll(store)).map((s) => `${s.sessionId}\n`).join(''));
  } finally {
    await store.closeAll();
  }
  return 0;
}
