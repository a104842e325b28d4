import type { ErrorKind } from './errors.js';

/*
 * The domain errors each method may answer with (meta.json's `errors`, METHODS.md). Every
 * request may also answer -32602 InvalidParams, -32603 Internal and -32800 RequestCancelled;
 * those are not repeated. The conformance suite's wire check fails a server that answers a
 * method with a kind its list does not name, so a list that is too short fails a test.
 * Composed from the causes below, so each method's list says why a kind is in it.
 */

/**
 * What ANY request may answer, whatever its own list says: params of the wrong shape, a server
 * bug, a `$/cancelRequest` that arrived before the request started (meta.json's
 * `errors.anyRequest`; the method reference repeats them under every request).
 */
export const ANY_REQUEST_ERRORS = ['InvalidParams', 'Internal', 'RequestCancelled'] as const;

/** Any method that touches the store: PostgreSQL unreachable, an unsafe file, the wrong key. */
export const STORE_ERRORS = ['Unavailable', 'UnsafeStore', 'KeyMismatch'] as const satisfies readonly ErrorKind[];
/** A method that names a session. */
export const SESSION_ERRORS = ['SessionNotFound', 'InvalidSessionId'] as const satisfies readonly ErrorKind[];
/** A method that reads stored records or values (checksums verified). */
export const READ_ERRORS = ['Corrupt'] as const satisfies readonly ErrorKind[];
/** A method that writes to a session open for writing in this process (§6.3 outcomes, fencing). */
export const WRITE_ERRORS = ['ReadOnly', 'LeaseLost', 'Conflict', 'NotWritten', 'RolledBack', 'Uncertain'] as const satisfies readonly ErrorKind[];
/** A method that stores client content: the secret gate and the size limits. */
export const CONTENT_ERRORS = ['SecretRejected', 'PayloadTooLarge'] as const satisfies readonly ErrorKind[];

/** A method's list, duplicates removed, in ErrorKindCode order of first mention. */
export function errorsOf(...groups: ReadonlyArray<readonly ErrorKind[]>): readonly ErrorKind[] {
  return [...new Set(groups.flat())];
}
