import { randomBytes } from 'node:crypto';
import { ResponseError } from 'vscode-jsonrpc/node';
import * as z from 'zod';
import { ErrorKindCode, JsonRpcErrorCode } from '../../protocol/errors.js';
import { UnsafeFileError } from '../durable/errors.js';
import { type Logger, safeDescribe } from '../log.js';
import { StoreError } from '../domain/errors.js';

/**
 * The one place where errors become wire errors. vscode-jsonrpc would forward a thrown
 * Error's message verbatim, so every handler's failure passes through here: store errors keep
 * their (safe) message and kind; anything unexpected becomes -32603 with a reference, and its
 * description (name, errno, stack frames — no message) goes to stderr.
 */
export function toResponseError(err: unknown, log: Logger): ResponseError<unknown> {
  if (err instanceof ResponseError) return err;
  if (err instanceof StoreError) {
    if (err.kind === 'InvalidArgument') {
      // Only integer details beside path reach the wire (e.g. rewindSeq/toSeq of a compaction a
      // kept rewind forbids): never a caller's value.
      const { path, ...rest } = err.details;
      const extra = Object.fromEntries(Object.entries(rest).filter(([, v]) => Number.isSafeInteger(v)));
      return invalidParams([{ path: String(path ?? ''), message: err.message }], extra);
    }
    return new ResponseError(ErrorKindCode[err.kind], err.message, { ...err.details, kind: err.kind });
  }
  if (err instanceof z.ZodError) return invalidParams(zodIssues(err));
  if (err instanceof UnsafeFileError) {
    // A store path that is a symlink, a FIFO, not ours or open to others, met where the store
    // maps nothing more specific: refused before anything was written through it.
    return new ResponseError(ErrorKindCode.UnsafeStore, `store refused: a store path ${err.reason}`, { kind: 'UnsafeStore', reason: err.reason });
  }
  const ref = randomBytes(4).toString('hex');
  log.error(`internal error ${ref}: ${safeDescribe(err)}`);
  return new ResponseError(JsonRpcErrorCode.InternalError, `internal error (reference ${ref}; see the server's stderr)`, {
    kind: 'Internal', ref,
  });
}

/** The error with every registered secret and well-known credential removed from its message and data. */
export function scrubError(err: ResponseError<unknown>, scrub: (text: string) => string): ResponseError<unknown> {
  const message = scrub(err.message);
  let data = err.data;
  if (data !== undefined) {
    const text = JSON.stringify(data);
    const clean = scrub(text);
    if (clean !== text) {
      try {
        data = JSON.parse(clean) as unknown;
      } catch {
        data = { kind: (err.data as { kind?: unknown }).kind };
      }
    }
  }
  return message === err.message && data === err.data ? err : new ResponseError(err.code, message, data);
}

export interface ParamIssue {
  path: string;
  message: string;
}

export function invalidParams(issues: ParamIssue[], extra: Record<string, unknown> = {}): ResponseError<unknown> {
  const first = issues[0];
  const where = first ? `${first.path || 'params'}: ${first.message}` : 'invalid params';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ResponseError(JsonRpcErrorCode.InvalidParams, `Invalid params: ${where}${more}`, { ...extra, kind: 'InvalidParams', issues });
}

const SAFE_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]{0,39}$/;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * The one path grammar of error data (protocol/README.md §6.1): member names after `.`, array
 * indexes as `[i]`, other member names as `["name"]` — `records[0].message.role`, the form
 * SecretRejected and redactions use too. A name a client invented is shown only when it looks
 * like an identifier.
 */
function pathOf(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (IDENT.test(String(seg))) out += out ? `.${String(seg)}` : String(seg);
    else out += SAFE_KEY.test(String(seg)) ? `[${JSON.stringify(String(seg))}]` : '["(unprintable name)"]';
  }
  return out;
}

/** Zod issues as paths and messages; member names a client invented are named only when they look like identifiers. */
export function zodIssues(err: z.ZodError): ParamIssue[] {
  return err.issues.slice(0, 20).map((issue) => {
    const path = pathOf(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => (SAFE_KEY.test(k) ? k : '(unprintable name)'));
      return { path, message: `unrecognized member${keys.length > 1 ? 's' : ''}: ${keys.join(', ')}` };
    }
    if (issue.code === 'invalid_union' && issue.path[issue.path.length - 1] !== 'kind' && 'discriminator' in issue) {
      return { path: path ? `${path}.${String(issue.discriminator)}` : String(issue.discriminator), message: 'unknown or missing discriminator value' };
    }
    if (issue.code === 'invalid_type' && issue.expected === 'nonoptional') return { path, message: 'required' };
    return { path, message: issue.message };
  });
}
