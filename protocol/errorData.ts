import * as z from 'zod';

/*
 * Per-kind `error.data` definitions besides those in errors.ts. Each is open (a server may add
 * members; a client ignores those it does not know) and lists the members the server sends
 * today (src/backends, src/server/errors.ts, src/server/dispatch.ts); every one but `kind` is
 * optional because which appear depends on the cause (`reason`).
 */
const int = () => z.number().int().min(0);

export const SessionLockedData = z
  .looseObject({
    kind: z.literal('SessionLocked'),
    sessionId: z.string().optional(),
    holder: z.looseObject({ pid: z.number().int().min(1).optional(), hostname: z.string().optional() }).optional()
      .meta({ description: 'The writer holding the lease, when known' }),
    reason: z.string().optional().meta({ description: 'e.g. openHere, storeServed' }),
  })
  .meta({ id: 'SessionLockedErrorData' });

export const ConflictData = z
  .looseObject({
    kind: z.literal('Conflict'),
    reason: z.string().optional().meta({ description: 'e.g. exists, inTrash, expectedLastSeq, journalChanged' }),
    sessionId: z.string().optional(),
    lastSeq: int().optional().meta({ description: 'reason expectedLastSeq: the session\'s lastSeq now' }),
    outcome: z.string().optional().meta({ description: 'e.g. notWritten' }),
    stage: z.string().optional(),
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

/**
 * The JSON-RPC error object of every error response. `data` is always present on errors this
 * server sends and `data.kind` names the kind; kinds without a definition of their own match
 * DomainErrorData.
 */
export const ErrorResponse = z
  .looseObject({
    code: z.number().int(),
    message: z.string(),
    // Not a union over the per-kind definitions: the Rust codegen refuses an undiscriminated
    // anyOf of refs (and DomainErrorData overlaps every kind), so `data` names its kind only.
    data: z.looseObject({ kind: z.string() }).optional()
      .meta({ description: 'data.kind selects the definition: InvalidParamsErrorData, OutOfRangeData, UnsupportedProtocolVersionData, SessionLockedErrorData, ConflictErrorData, CorruptErrorData, InternalKindData, RequestCancelledErrorData, else DomainErrorData' }),
  })
  .meta({ id: 'ErrorResponse', description: 'The JSON-RPC error object ({code, message, data?})' });
