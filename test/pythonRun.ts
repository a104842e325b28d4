import { spawn, spawnSync } from 'node:child_process';

/** Helpers of the tests that run Python against the built sidecar (test/clients, test/examples). */

/** Whether `python3` on PATH is 3.11 or newer. */
export function hasPython311(): boolean {
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 11))'], { encoding: 'utf8' });
  return !r.error && r.status === 0 && r.stdout.trim() === 'True';
}

export interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Runs a command to its end with unbuffered UTF-8 Python output, collecting stdout and stderr. */
export function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The run's output, for an assertion message when it failed. */
export const explain = (r: Run) => `exit ${r.code} (signal ${r.signal})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
