import fs from 'node:fs';
import { StoreError } from '../../../domain/errors.js';
import { checkSessionId } from '../../../domain/ids.js';

/** Helpers shared by the checks of src/backends/file/verify/. */

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
/** How every file is opened for verification: read-only, never through a symbolic link, never blocking on a FIFO. */
export const READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** An error's kind and code, never its message (it could quote paths or content). */
export function describe(err: unknown): string {
  if (err instanceof StoreError) return err.message;
  const code = (err as { code?: string }).code;
  return code ? `${(err as Error).name ?? 'Error'} ${code}` : ((err as Error).name ?? 'error');
}

export function reasonOf(err: unknown): string {
  if (err instanceof StoreError) return err.message;
  return `unreadable (${describe(err)})`;
}

export function generationOf(cp: Record<string, unknown>): number {
  const g = Number(cp.generation);
  return Number.isSafeInteger(g) && g >= 0 ? g : 0;
}

export function isSessionId(name: string): boolean {
  try {
    checkSessionId(name);
    return true;
  } catch {
    return false;
  }
}

export function octal(mode: number): string {
  return mode.toString(8).padStart(3, '0');
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Lets signals and timers run during a long verification. */
export function breathe(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
