/**
 * The store's error kinds. The server maps each to the protocol's error code of the same
 * name; a message never quotes record content or a caller's input beyond a validated id.
 */
export type StoreErrorKind =
  | 'SessionNotFound'
  | 'InvalidSessionId'
  | 'Conflict'
  | 'Corrupt'
  | 'UnsafeStore'
  | 'NotWritten'
  | 'RolledBack'
  | 'Uncertain'
  | 'ReadOnly'
  | 'PayloadTooLarge'
  | 'SecretRejected'
  | 'InvalidTurnTransition'
  | 'SessionLocked'
  | 'LeaseLost'
  /**
   * The encryption key given does not open the store, or none was given for an encrypted store,
   * or one was given for a plaintext store (encryption at rest). details: {reason}. Never Corrupt.
   */
  | 'KeyMismatch'
  /**
   * The store's database cannot be reached or went away (PostgreSQL backend). details:
   * {reason, retryable, retryAfterMs, outcome: 'notWritten' | 'unknown'}; with 'unknown' the
   * session is fail-stopped in this process as after Uncertain.
   */
  | 'Unavailable'
  /**
   * A well-formed argument outside the session's current range. details: {path, min, max}
   * (inclusive); the server answers OutOfRange (-31018).
   */
  | 'OutOfRange'
  /** A caller's argument is malformed (details.path names it); the server answers -32602. */
  | 'InvalidArgument';

export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
