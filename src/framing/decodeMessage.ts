import { isAscii, isUtf8, transcode } from 'node:buffer';
import type { Message } from 'vscode-jsonrpc';
import { JsonRpcErrorCode } from '../../protocol/errors.js';
import { methods } from '../../protocol/index.js';
import { ExactNumber, parseExact } from '../domain/exactJson.js';

/**
 * A message that cannot be dispatched, answered with an error response (id null when unknown),
 * unless it is a notification: JSON-RPC 2.0 never answers one, even a malformed one (clients
 * such as Neovim's treat an `id: null` answer as a broken server), so it is only logged.
 */
export interface FrameProblem {
  id: string | number | null;
  code: number;
  message: string;
  data?: Record<string, unknown>;
  /** The message was a notification (a `method` and no `id`): log it, never answer. */
  notification?: boolean;
}

/**
 * Whether a method's params may be left out (meta.json's `params.optional`): for it `"params":
 * null` means absent. Emacs jsonrpc.el sends `(jsonrpc-request conn :shutdown nil)` as
 * `"params":null`. Asked only when a message carries `"params": null`, and remembered: trying a
 * schema compiles its parser, which for every method at start-up was a third of the cold start.
 */
const nullMeansAbsent = new Map<string, boolean>();
function paramsOptional(method: string): boolean {
  let known = nullMeansAbsent.get(method);
  if (known === undefined) {
    const m = methods.find((d) => d.method === method);
    known = m !== undefined && (m.params.safeParse(undefined).success || m.params.safeParse({}).success);
    nullMeansAbsent.set(method, known);
  }
  return known;
}

export type Decoded = { message: Message } | { problem: FrameProblem };

/**
 * A frame's bytes as text; undefined when they are not valid UTF-8. Validation is simdutf's
 * (isUtf8); ASCII is decoded as is, other text through UTF-16 (ICU's transcode, then a copy):
 * five times faster than TextDecoder for text of three-byte characters, which for a frame of
 * megabytes is time every other request waits.
 */
function utf8Text(bytes: Uint8Array): string | undefined {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(buf)) return buf.toString('latin1');
  if (!isUtf8(buf)) return undefined;
  const text = buf.length < 4096 ? buf.toString('utf8') : transcode(buf, 'utf8', 'utf16le').toString('utf16le');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a byte order mark is dropped, as TextDecoder drops it
}

function problem(code: number, message: string, id: string | number | null = null): Decoded {
  return { problem: { id, code, message } };
}

/**
 * Decodes one frame body. Error messages describe the frame, never quote its content.
 * `exact` (the server's): a number whose text would not survive JSON.parse is kept as an
 * ExactNumber (domain/exactJson.ts); without it (a client of the server) plain JSON.parse, so
 * what a client reads is ordinary JavaScript values.
 */
export function decodeMessage(bytes: Uint8Array, exact = true): Decoded {
  const text = utf8Text(bytes);
  if (text === undefined) return problem(JsonRpcErrorCode.ParseError, 'Parse error: the message is not valid UTF-8');
  let value: unknown;
  try {
    value = exact ? parseExact(text) : JSON.parse(text);
  } catch {
    return problem(JsonRpcErrorCode.ParseError, 'Parse error: the message is not valid JSON');
  }
  if (Array.isArray(value)) return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: batches are not supported');
  if (value === null || typeof value !== 'object') {
    return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: a message must be a JSON object');
  }
  return checkShape(value as Record<string, unknown>);
}

function isRequestId(id: unknown): boolean {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

function checkShape(m: Record<string, unknown>): Decoded {
  const d = classify(m);
  // A notification is never answered: its problem is only logged (see FrameProblem).
  if ('problem' in d && Object.hasOwn(m, 'method') && !Object.hasOwn(m, 'id')) d.problem.notification = true;
  return d;
}

function classify(m: Record<string, unknown>): Decoded {
  // A request id is the JSON-RPC layer's, matched by value: an id token that does not round-trip is its JS number, as before.
  if (m.id instanceof ExactNumber) m.id = m.id.valueOf();
  const hasId = Object.hasOwn(m, 'id');
  const idOk = isRequestId(m.id);
  const id = idOk ? (m.id as string | number) : null;
  if (m.jsonrpc !== '2.0') return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: "jsonrpc" must be "2.0"', id);
  if (Object.hasOwn(m, 'method')) {
    if (typeof m.method !== 'string') return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: "method" must be a string', id);
    if (hasId && !idOk) return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: "id" must be a string or a number');
    if (m.params === null && paramsOptional(m.method)) delete m.params;
    if (m.params !== undefined && (m.params === null || typeof m.params !== 'object')) {
      return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: "params" must be an object', id);
    }
    // vscode-jsonrpc assumes a cancellation names a request: one that does not must never reach it.
    if (m.method === '$/cancelRequest' && !hasId && !isRequestId((m.params as { id?: unknown } | undefined)?.id)) {
      const issue = { path: 'id', message: 'must be the id of a request: a string or a number' };
      return { problem: { id: null, code: JsonRpcErrorCode.InvalidParams, message: `Invalid params: id: ${issue.message}`, data: { kind: 'InvalidParams', issues: [issue] } } };
    }
    return { message: m as unknown as Message };
  }
  if (hasId && (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'))) return { message: m as unknown as Message };
  return problem(JsonRpcErrorCode.InvalidRequest, 'Invalid request: neither a request, a notification nor a response', id);
}
