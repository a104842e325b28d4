import { spawn } from 'node:child_process';
import { CLI } from './helpers.js';

/** A shell word: single-quoted. */
export const sh = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
/** `node dist/src/cli.js ARGS...` as a shell command line. */
export const cliLine = (args: string[]) => ['node', CLI, ...args].map(sh).join(' ');

/**
 * A shell command line run in a pseudo-terminal (util-linux `script -qfec LINE /dev/null`:
 * stdin, stdout and stderr of LINE are the terminal unless LINE redirects them). `keys` are
 * typed once `ready` shows in the terminal's output, one after another with a small pause;
 * resolves with everything the terminal showed and script's exit code (LINE's). No pager unless
 * opts.env sets PAGER (PAGER=cat).
 */
export function inPty(line: string, opts: { env?: NodeJS.ProcessEnv; ready?: string; keys?: string[] } = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', line, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', PAGER: 'cat', ...opts.env } });
    let output = '';
    let typing = false;
    const type = async () => {
      for (const k of opts.keys ?? []) {
        await new Promise((r) => setTimeout(r, 150));
        child.stdin.write(k);
      }
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      output += s;
      if (!typing && opts.ready !== undefined && output.includes(opts.ready)) {
        typing = true;
        void type();
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
