import * as z from 'zod';

/*
 * Per-kind `error.data` definitions besides those in errors.ts. Each is open (a server may add
 * members; a client ignores those it does not know) and lists the members the server sends
 * today (src/backends, src/server/errors.ts, src/server/dispatch.ts); every one but `kind` is
 * optional because which appear depends on the cause (`reason`).
 */
const int = () => z.number().int().min(0);

export const SessionNotFoundErrorData = z
  .looseObject({
    kind: z.literal('SessionNotFound'),
    sessionId: z.string().optional(),
    reason: z.string().optional().meta({ description: 'noStore: there is no session store at the path' }),
  })
  .meta({ id: 'SessionNotFoundErrorData' });

export const InvalidSessionIdErrorData = z
  .looseObject({ kind: z.literal('InvalidSessionId') })
  .meta({ id: 'InvalidSessionIdErrorData' });

export const UnsafeStoreErrorData = z
  .looseObject({
    kind: z.literal('UnsafeStore'),
    sessionId: z.string().optional(),
    reason: z.string().optional().meta({ description: 'What is wrong, e.g. "has mode 644, expected 600", "is a symbolic link"' }),
    path: z.string().optional(),
    ref: z.string().optional().meta({ description: 'The blob concerned' }),
    stage: z.string().optional(),
  })
  .meta({ id: 'UnsafeStoreErrorData' });

export const KeyMismatchErrorData = z
  .looseObject({
    kind: z.literal('KeyMismatch'),
    reason: z.string().optional().meta({ description: 'wrongKey, keyRequired, notEncrypted, rekeyUnfinished or rekeyInProgress' }),
    sessionId: z.string().optional(),
  })
  .meta({ id: 'KeyMismatchErrorData' });

export const SessionLockedData = z
  .looseObject({
    kind: z.literal('SessionLocked'),
    sessionId: z.string().optional(),
    holder: z.looseObject({ pid: z.number().int().min(1).optional(), hostname: z.string().optional(), startedAt: z.string().optional() }).optional()
      .meta({ description: 'The writer holding the lease, when known' }),
    reason: z.string().optional().meta({ description: 'e.g. storeServed' }),
  })
  .meta({ id: 'SessionLockedErrorData' });

export const ConflictData = z
  .looseObject({
    kind: z.literal('Conflict'),
    reason: z.string().optional().meta({ description: 'e.g. exists, inTrash, expectedLastSeq, journalChanged, turnPending, idempotencyKeyReused' }),
    sessionId: z.string().optional(),
    expectedLastSeq: int().optional().meta({ description: 'The expectedLastSeq the request gave' }),
    lastSeq: int().optional().meta({ description: 'The session\'s lastSeq now (expectedLastSeq did not match it)' }),
    turnId: z.string().optional().meta({ description: 'reason turnPending: the active turn a rewind would go back into' }),
    turnFirstSeq: int().optional().meta({ description: 'reason turnPending: that turn\'s first seq' }),
    outcome: z.string().optional().meta({ description: 'e.g. notWritten' }),
    stage: z.string().optional(),
    firstSeq: int().optional().meta({ description: 'reason idempotencyKeyReused: the original append\'s seqs' }),
    generation: int().optional(),
    sqlstate: z.string().optional(),
  })
  .meta({ id: 'ConflictErrorData' });

export const CorruptData = z
  .looseObject({
    kind: z.literal('Corrupt'),
    reason: z.string().optional(),
    sessionId: z.string().optional(),
    line: z.number().int().min(1).optional().meta({ description: 'The damaged journal line' }),
    seq: int().optional(),
    key: z.string().optional().meta({ description: 'The damaged state value\'s key' }),
    ref: z.string().optional().meta({ description: 'The damaged or missing blob' }),
    generation: int().optional().meta({ description: 'The generation concerned (reason archiveMissing)' }),
  })
  .meta({ id: 'CorruptErrorData' });

/** `error.data` of -32603: `ref` matches the line the server wrote to its stderr. */
export const InternalErrorData = z
  .looseObject({ kind: z.literal('Internal'), ref: z.string() })
  .meta({ id: 'InternalKindData' });

/** `error.data` of -32800 (a request `$/cancelRequest` cancelled). */
export const RequestCancelledData = z
  .looseObject({ kind: z.literal('RequestCancelled') })
  .meta({ id: 'RequestCancelledErrorData' });

