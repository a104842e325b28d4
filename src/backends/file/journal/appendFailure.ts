import { AppendFailure } from '../../../durable/errors.js';
import { StoreError } from '../../../domain/errors.js';

/** A failed append as the protocol says it: nothing changed (NotWritten, RolledBack), or the outcome unknown (Uncertain). */
export function appendFailureError(err: unknown): unknown {
  if (!(err instanceof AppendFailure)) return err; // the final gate's own refusal, or unexpected: the caller decides
  const errno = err.errno ? { errno: err.errno } : {};
  const cause = err.errno ?? 'I/O error';
  switch (err.outcome) {
    case 'notWritten':
      return new StoreError('NotWritten', `append not written (${cause}); nothing changed`, errno);
    case 'rolledBack':
      return new StoreError('RolledBack', `append failed (${cause}) and was rolled back; nothing changed`, errno);
    case 'uncertain':
      return new StoreError('Uncertain', `append may or may not be durable (${cause}); the session is read-only in this process`, errno);
  }
}
