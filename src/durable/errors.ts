/** What became of a failed append: the only three answers a caller can act on. */
export type AppendOutcome = 'notWritten' | 'rolledBack' | 'uncertain';

/** A durable append failed; `outcome` says what is on disk. The cause's text is never exposed. */
export class AppendFailure extends Error {
  constructor(
    readonly outcome: AppendOutcome,
    readonly errno: string | undefined,
  ) {
    super(`append ${outcome}${errno ? ` (${errno})` : ''}`);
    this.name = 'AppendFailure';
  }
}

/** A path that is not what the store expects to find there (symlink, FIFO, wrong mode or owner). */
export class UnsafeFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`unsafe file: ${reason}`);
    this.name = 'UnsafeFileError';
  }
}

/** The errno code of a Node system error, without its message (which may quote paths or data). */
export function errnoOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
