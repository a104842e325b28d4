import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { routeOut } from './output.js';

/**
 * The pager of show, export, list and search: when stdout is a terminal, their output goes
 * through `$PAGER` (default `less -FRX`: it exits at once when the text fits the screen, keeps
 * colors, leaves the text on the screen). Never through a pipe, never with --no-pager, PAGER
 * empty or `cat`, or (by default) when less is not installed. The pager starts at the first
 * output (an error before any leaves nothing to page) and the command waits for it before
 * exiting (endOut, output.ts); quitting it early ends the command quietly with exit code 0 (the
 * EPIPE path of out()).
 */
export const PAGER_OPTIONS = { 'no-pager': { type: 'boolean' } } as const;

export const PAGER_HELP = `  --no-pager               never page (default on a terminal: through $PAGER, or less -FRX)`;

/** The pager's shell command for this environment, or undefined for none. */
export function pagerCommand(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.PAGER;
  if (given !== undefined) return given.trim() === '' || given.trim() === 'cat' ? undefined : given;
  return onPath('less', env.PATH) ? 'less -FRX' : undefined;
}

function onPath(name: string, pathVar: string | undefined): boolean {
  return (pathVar ?? '').split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Arms the pager for this command's output, unless --no-pager or stdout is not a terminal. */
export function usePager(values: Record<string, unknown>): void {
  if (values['no-pager'] === true || !process.stdout.isTTY) return;
  const command = pagerCommand();
  if (command === undefined) return;
  let pager: { child: ChildProcess; fd: number; exited: Promise<void> } | undefined;
  routeOut({
    fd() {
      pager ??= start(command);
      return pager?.fd ?? 1;
    },
    async end() {
      if (!pager) return;
      pager.child.stdin?.destroy(); // EOF: the pager shows the rest, then waits for the user
      const ignore = () => {}; // Ctrl-C meant for the pager (less) must not end us before it
      process.on('SIGINT', ignore);
      try {
        await pager.exited;
      } finally {
        process.removeListener('SIGINT', ignore);
      }
    },
  });
}

/** The pager, its stdin a pipe whose descriptor out() writes to synchronously (as to stdout). */
function start(command: string): { child: ChildProcess; fd: number; exited: Promise<void> } | undefined {
  const child = spawn(command, { shell: true, stdio: ['pipe', 'inherit', 'inherit'] });
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => resolve());
    child.on('error', () => resolve());
  });
  child.stdin?.on('error', () => {}); // a pager that quit early: out() sees EPIPE and ends quietly
  const fd = (child.stdin as unknown as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    child.kill();
    return undefined; // no descriptor to write to: the output goes to stdout as without a pager
  }
  return { child, fd, exited };
}
