import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

export { snapshotTree } from './fsSnapshot.js';

const made: string[] = [];

/** A fresh temporary directory, removed after the test. */
export function tempDir(prefix = 'sidecar-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});


/** How a child process ended and all it wrote. */
export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A child's stdout and stderr (piped) as they arrive so far, and its Run once it has closed. */
export function captureOutput(child: ChildProcess): { stdout: () => string; stderr: () => string; closed: Promise<Run> } {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const closed = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { stdout: () => stdout, stderr: () => stderr, closed };
}
