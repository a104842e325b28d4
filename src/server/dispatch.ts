import type { CancellationToken } from 'vscode-jsonrpc/node';
import { ResponseError } from 'vscode-jsonrpc/node';
import type * as z from 'zod';
import type { MethodDescriptor } from '../../protocol/common.js';
import { JsonRpcErrorCode } from '../../protocol/errors.js';
import type { Logger } from '../log.js';
import type { RawJson } from '../framing/writers.js';
import { invalidParams, scrubError, toResponseError, zodIssues } from './errors.js';
import { isBarrier, SessionOrder } from './sessionOrder.js';

/** A request handler bound to its descriptor: params are parsed by the descriptor's schema before it runs. */
export interface RequestHandler {
  descriptor: MethodDescriptor;
  handle(params: never, token: CancellationToken): unknown;
}

/**
 * Binds a handler to its method's descriptor, as vscode-languageserver's `ProtocolRequestType<P, R>`
 * does: the params it receives are the output of the descriptor's params schema, and what it
 * returns must be assignable to the input of the descriptor's result schema — checked at compile
 * time, so a handler cannot answer a shape the protocol does not describe. (At run time, with
 * SESSION_SIDECAR_CHECK_RESULTS=1 — set by the test suites — every result is also parsed by its
 * schema before it is sent: see Dispatcher.)
 */
export function handle<S extends z.ZodType, R extends z.ZodType>(
  descriptor: MethodDescriptor<S, R>,
  fn: (params: z.output<S>, token: CancellationToken) => Answer<z.input<R>> | Promise<Answer<z.input<R>>>,
): RequestHandler {
  return { descriptor, handle: fn as RequestHandler['handle'] };
}

/** A result as a value, or as its JSON bytes already known (RawJson: spliced, never re-serialized). */
export type Answer<T> = T | RawJson<T>;

/** What the lifecycle allows right now: undefined, or the error to answer with. */
export type Gate = (method: string) => ResponseError<unknown> | undefined;

export const MAX_NESTING = 128;

/**
 * Test suites set SESSION_SIDECAR_CHECK_RESULTS=1 (vitest.config.ts): every result is then parsed
 * by its method's result schema before it is sent, and one that does not match is an internal
 * error, never a silently malformed answer. (The compile-time check is `handle`'s signature.)
 */
const CHECK_RESULTS = process.env.SESSION_SIDECAR_CHECK_RESULTS === '1';

function checkResult(descriptor: MethodDescriptor, result: unknown): void {
  if (!descriptor.result) return;
  const value = result !== null && typeof result === 'object' && 'toJSON' in result && typeof result.toJSON === 'function' ? result.toJSON() : result;
  const parsed = descriptor.result.safeParse(value);
  if (!parsed.success) {
    const where = zodIssues(parsed.error).map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`the result of ${descriptor.method} does not match its schema: ${where}`);
  }
}

/**
 * Routes requests by method: lifecycle gate, cancellation, params validation, then the
 * handler; every failure leaves through toResponseError. Counts requests so the server can
 * wait for all of them to be answered before it exits.
 */
export class Dispatcher {
  private readonly table = new Map<string, RequestHandler>();
  private inFlight = 0;
  /** Arrival order per session, opens and closes included (§3.6). */
  private readonly order = new SessionOrder();

  constructor(
    handlers: RequestHandler[],
    private readonly gate: Gate,
    private readonly log: Logger,
    /** Removes secrets from error text (also those the failed request itself carried). */
    private readonly scrub: (text: string, extra?: RequestSecrets) => string = (t) => t,
  ) {
    for (const h of handlers) this.table.set(h.descriptor.method, h);
  }

  async request(method: string, params: unknown, token: CancellationToken): Promise<unknown> {
    this.inFlight += 1;
    try {
      return await this.run(method, params, token);
    } catch (err) {
      const extra = requestSecrets(params);
      throw scrubError(toResponseError(err, this.log), (text) => this.scrub(text, extra));
    } finally {
      this.inFlight -= 1;
    }
  }

  private async run(method: string, params: unknown, token: CancellationToken): Promise<unknown> {
    const refused = this.gate(method);
    if (refused) throw refused;
    const handler = this.table.get(method);
    if (!handler) throw new ResponseError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${printable(method)}`);
    if (token.isCancellationRequested) throw cancelled();
    if (Array.isArray(params)) throw invalidParams([{ path: '', message: 'params must be an object, not an array' }]);
    const shape = shapeProblem(params, MAX_NESTING);
    if (shape) throw invalidParams([{ path: '', message: shape }]);
    const parsed = handler.descriptor.params.safeParse(params ?? {});
    if (!parsed.success) throw invalidParams(zodIssues(parsed.error));
    const sessionId = (parsed.data as { sessionId?: unknown } | undefined)?.sessionId;
    const result = typeof sessionId === 'string'
      ? await this.order.run(sessionId, isBarrier(method), () => this.invoke(handler, parsed.data, token))
      : await this.invoke(handler, parsed.data, token);
    if (CHECK_RESULTS) checkResult(handler.descriptor, result);
    return result;
  }

  private async invoke(handler: RequestHandler, params: unknown, token: CancellationToken): Promise<unknown> {
    // A request that waited behind an open of its session may have been cancelled meanwhile.
    if (token.isCancellationRequested) throw cancelled();
    return handler.handle(params as never, token);
  }

  /** True while a handler runs. */
  get busy(): boolean {
    return this.inFlight > 0;
  }
}

export interface RequestSecrets {
  values?: string[];
  env?: string[];
}

/** The secrets a request names (`secrets.values`, `secrets.env`, `llm.apiKeyEnv`), read defensively: params may be anything. */
function requestSecrets(params: unknown): RequestSecrets {
  const p = (params ?? {}) as { secrets?: { values?: unknown; env?: unknown }; llm?: { apiKeyEnv?: unknown } };
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const env = strings(p.secrets?.env);
  if (typeof p.llm?.apiKeyEnv === 'string') env.push(p.llm.apiKeyEnv);
  return { values: strings(p.secrets?.values), env };
}

export function cancelled(): ResponseError<unknown> {
  return new ResponseError(JsonRpcErrorCode.RequestCancelled, 'Request cancelled', { kind: 'RequestCancelled' });
}

function printable(method: string): string {
  return /^[\x20-\x7e]{1,100}$/.test(method) ? JSON.stringify(method) : '(unprintable method name)';
}

/**
 * What makes params unstorable as JSON objects in JavaScript: nesting deeper than `max` (checked
 * iteratively, so hostile nesting cannot overflow the stack) or a `__proto__` member, which
 * object copies would turn into a prototype and silently drop.
 */
export function shapeProblem(value: unknown, max: number): string | undefined {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return `params nest deeper than ${max} levels`;
    if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) return 'the member name __proto__ is not allowed';
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return undefined;
}
