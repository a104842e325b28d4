import { ANY_REQUEST_ERRORS, type ErrorDataOf, type ErrorKind, type ErrorKindOf, REQUESTS, type RequestMethod } from './generated/methods.js';
import type { ErrorData } from './generated/types.js';

/**
 * An error response of the server: `code`, `message` (for humans: dispatch on `code` or
 * `kind`), and `data` as the schema defines it for `data.kind` (absent only on -32700, -32600,
 * -32601 and -32002, which carry none).
 */
export class SidecarError extends Error {
  override readonly name = 'SidecarError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: ErrorData,
    readonly method?: string,
  ) {
    super(message);
  }

  /** `data.kind`, when the error has data. */
  get kind(): ErrorKind | undefined {
    return this.data?.kind;
  }

  /** Narrows `data` to the definition of `kind`: `if (e.is('Uncertain')) e.data.lastSeq …`. */
  is<K extends ErrorKind>(kind: K): this is SidecarError & { data: ErrorDataOf<K> } {
    return this.data?.kind === kind;
  }
}

/** The error is one `method` may answer with, by its meta.json list (narrowed for a switch on `data.kind`). */
export function isErrorOf<M extends RequestMethod>(method: M, e: unknown): e is SidecarError & { data: ErrorDataOf<ErrorKindOf<M>> } {
  if (!(e instanceof SidecarError) || e.data === undefined) return false;
  const kind = e.data.kind;
  return REQUESTS[method].errors.includes(kind) || (ANY_REQUEST_ERRORS as readonly ErrorKind[]).includes(kind);
}

/**
 * No answer will come: the connection `closed` (the server exited or its pipe broke) before the
 * answer, or the call's `timeout` passed. After `closed` of a write, whether it was written is
 * unknown: reopen and read, or retry with the same `idempotencyKey` (protocol §6.3).
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(readonly reason: 'closed' | 'timeout', message: string) {
    super(message);
  }
}
