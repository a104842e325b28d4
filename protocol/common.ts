import * as z from 'zod';
import type { ErrorKind } from './errors.js';

/** Extension point on every params and result object (as ACP does): opaque to the server. */
export const Meta = z.record(z.string(), z.unknown()).optional();

/**
 * A params object: unknown members are refused (a typo must not be silently ignored);
 * `_meta` is always accepted.
 */
export function paramsObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject({ ...shape, _meta: Meta });
}

/** A result object: clients must ignore members they do not know (forward compatibility). */
export function resultObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.object({ ...shape, _meta: Meta });
}

export const EmptyParams = paramsObject({}).meta({ id: 'EmptyParams' });
export const EmptyResult = resultObject({}).meta({ id: 'EmptyResult' });

/**
 * A session id: `[A-Za-z0-9._-]`, 1..128 characters, no `..`, not starting with `.`.
 * The format is checked by the store (kind `InvalidSessionId`), not by the params schema,
 * so a malformed id gets the specific error.
 */
export const SessionId = z
  .string()
  .meta({ description: 'Session id: [A-Za-z0-9._-]{1,128}, no "..", not starting with "."' });

/** A client's name for one request, so that a retry is recognised (§6.3): 1..128 printable ASCII characters. */
export const IdempotencyKey = z.string().min(1).max(128).regex(/^[\x20-\x7e]+$/);

export const Seq = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A count or a size (records, bytes, limits, generations): never negative, exact in a double. */
export const Count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const Timestamp = z.string().meta({ description: 'RFC 3339 UTC with milliseconds' });

/** Method descriptor: what meta.json is generated from. */
export interface MethodDescriptor<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  method: string;
  kind: 'request' | 'notification';
  direction: 'clientToServer' | 'serverToClient';
  params: P;
  result?: R;
  since: number;
  capability?: string;
  /**
   * The domain error kinds a request may answer with (protocol/methodErrors.ts); -32602,
   * -32603 and -32800 are possible for every request and not listed. Requests only.
   */
  errors?: readonly ErrorKind[];
  summary: string;
}

/** Declares a method, keeping its schemas' types for the handler that serves it. */
export function defineMethod<P extends z.ZodType, R extends z.ZodType>(d: MethodDescriptor<P, R>): MethodDescriptor<P, R> {
  return d;
}
