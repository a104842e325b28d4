import * as z from 'zod';

/** JSON-RPC 2.0 and LSP codes the server answers with. */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestCancelled: -32800,
} as const;

/**
 * Domain error kinds, each with its own code. Codes live in -31099..-31000, outside the
 * ranges JSON-RPC (-32768..-32000) and LSP (-32899..-32800) reserve. A code, once published,
 * never changes meaning.
 */
export const ErrorKindCode = {
  SessionNotFound: -31001,
  InvalidSessionId: -31002,
  Conflict: -31003,
  Corrupt: -31004,
  UnsafeStore: -31005,
  NotWritten: -31006,
  RolledBack: -31007,
  Uncertain: -31008,
  ReadOnly: -31009,
  PayloadTooLarge: -31010,
  UnsupportedProtocolVersion: -31011,
  SecretRejected: -31012,
  InvalidTurnTransition: -31013,
  SessionLocked: -31014,
  LeaseLost: -31015,
  /** The store's database cannot be reached or went away (PostgreSQL backend); retry advice in data. */
  Unavailable: -31016,
  /** The store's encryption key is wrong, missing, or given for a plaintext store (encryption at rest). */
  KeyMismatch: -31017,
  /**
   * A well-formed value outside the session's current range (a rewind's toSeq, a compaction's
   * throughSeq): data.path names the param, data.min..data.max the values it may take now.
   * -32602 stays for the shape of params.
   */
  OutOfRange: -31018,
} as const;

export type ErrorKind = keyof typeof ErrorKindCode;
export const ErrorKinds = Object.keys(ErrorKindCode) as [ErrorKind, ...ErrorKind[]];

/** `error.data` of -32602: where the params failed validation, never the offending values. */
export const InvalidParamsErrorData = z
  .object({
    kind: z.literal('InvalidParams'),
    issues: z.array(z.object({ path: z.string(), message: z.string() })),
    /** session/compact through a seq a kept rewind goes back before: that rewind's seq and its toSeq. */
    rewindSeq: z.number().int().min(0).optional(),
    toSeq: z.number().int().min(0).optional(),
  })
  .meta({ id: 'InvalidParamsErrorData' });

/** `error.data` of OutOfRange (-31018): the param (§6.2 path grammar) and the inclusive range it may take now. */
export const OutOfRangeData = z
  .object({
    kind: z.literal('OutOfRange'),
    path: z.string(),
    min: z.number().int().min(0),
    max: z.number().int().min(0),
  })
  .meta({ id: 'OutOfRangeData' });

export const UnsupportedProtocolVersionData = z
  .object({
    kind: z.literal('UnsupportedProtocolVersion'),
    supported: z.array(z.number().int().min(1)).meta({ description: 'Every protocol version this server speaks: retry initialize with one of them' }),
    requested: z.unknown().optional().meta({ description: 'The protocolVersion sent, when one was' }),
    offered: z.array(z.number().int()).optional().meta({ description: 'The protocolVersions sent, when they were' }),
  })
  .meta({ id: 'UnsupportedProtocolVersionData' });
