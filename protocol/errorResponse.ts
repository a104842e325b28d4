import * as z from 'zod';
import {
  ConflictData, CorruptData, InternalErrorData, InvalidSessionIdErrorData, KeyMismatchErrorData, RequestCancelledData, SessionLockedData,
  SessionNotFoundErrorData, UnsafeStoreErrorData,
} from './errorData.js';
import {
  InvalidTurnTransitionErrorData, LeaseLostErrorData, NotWrittenErrorData, PayloadTooLargeErrorData, ReadOnlyErrorData, RolledBackErrorData,
  SecretRejectedErrorData, UnavailableErrorData, UncertainErrorData,
} from './errorDataWrites.js';
import { ErrorKindCode, InvalidParamsErrorData, JsonRpcErrorCode, OutOfRangeData, UnsupportedProtocolVersionData } from './errors.js';

/**
 * Every `error.data` the server sends, one named definition per `data.kind`, as a union
 * discriminated by `kind` — the kinds of ErrorKindCode plus InvalidParams (-32602), Internal
 * (-32603) and RequestCancelled (-32800). (-32700, -32600, -32601 and -32002 carry no data.)
 * test/protocol/errorSchema.test.ts holds this list equal to ErrorKindCode.
 */
export const ERROR_DATA = {
  InvalidParams: InvalidParamsErrorData,
  Internal: InternalErrorData,
  RequestCancelled: RequestCancelledData,
  SessionNotFound: SessionNotFoundErrorData,
  InvalidSessionId: InvalidSessionIdErrorData,
  Conflict: ConflictData,
  Corrupt: CorruptData,
  UnsafeStore: UnsafeStoreErrorData,
  NotWritten: NotWrittenErrorData,
  RolledBack: RolledBackErrorData,
  Uncertain: UncertainErrorData,
  ReadOnly: ReadOnlyErrorData,
  PayloadTooLarge: PayloadTooLargeErrorData,
  UnsupportedProtocolVersion: UnsupportedProtocolVersionData,
  SecretRejected: SecretRejectedErrorData,
  InvalidTurnTransition: InvalidTurnTransitionErrorData,
  SessionLocked: SessionLockedData,
  LeaseLost: LeaseLostErrorData,
  Unavailable: UnavailableErrorData,
  KeyMismatch: KeyMismatchErrorData,
  OutOfRange: OutOfRangeData,
} as const;

export type ErrorDataKind = keyof typeof ERROR_DATA;

/** The code each `data.kind` is sent with. */
export const ERROR_CODE: Readonly<Record<ErrorDataKind, number>> = {
  ...ErrorKindCode,
  InvalidParams: JsonRpcErrorCode.InvalidParams,
  Internal: JsonRpcErrorCode.InternalError,
  RequestCancelled: JsonRpcErrorCode.RequestCancelled,
};

const kinds = Object.keys(ERROR_DATA) as ErrorDataKind[];
const variants = Object.values(ERROR_DATA) as unknown as [z.ZodObject<{ kind: z.ZodLiteral<string> }>, ...Array<z.ZodObject<{ kind: z.ZodLiteral<string> }>>];

export const ErrorData = z
  .discriminatedUnion('kind', variants)
  .meta({
    id: 'ErrorData',
    description: 'error.data: data.kind names the error (the same as the code) and selects the definition',
    // OpenAPI-style annotation (JSON Schema ignores it; code generators use it to pick the variant type).
    discriminator: {
      propertyName: 'kind',
      mapping: Object.fromEntries(kinds.map((k) => [k, `#/$defs/${(ERROR_DATA[k].meta() as { id: string }).id}`])),
    },
  });

/** The JSON-RPC error object of every error response. */
export const ErrorResponse = z
  .looseObject({
    code: z.number().int(),
    message: z.string().meta({ description: 'For humans; may change: dispatch on code or data.kind' }),
    data: ErrorData.optional().meta({ description: 'Present on every error but -32700, -32600, -32601 and -32002' }),
  })
  .meta({ id: 'ErrorResponse', description: 'The JSON-RPC error object ({code, message, data?})' });

/** `$/cancelRequest` (LSP): cancel the request with this id if it has not started. */
export const CancelRequestParams = z
  .strictObject({ id: z.union([z.number().int(), z.string()]).meta({ description: 'The id of the request to cancel' }) })
  .meta({ id: 'CancelRequestParams' });
