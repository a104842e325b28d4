import * as z from 'zod';
import { ERROR_CODE, ERROR_DATA, type ErrorDataKind, type MethodDescriptor, methods } from '../../../protocol/index.js';

/** Kinds any request may answer with; they are not in the methods' `errors` lists. */
const ANY_REQUEST = new Set<string>(['InvalidParams', 'Internal', 'RequestCancelled']);

/**
 * Checks every message in both directions against the protocol's schemas. They are the zod
 * schemas protocol/schema.json is generated from (test/protocol/generated.test.ts fails when
 * the two differ), so a message valid here is valid against schema.json, and the shipped
 * package needs no JSON Schema engine.
 */
export class WireSchema {
  readonly violations: string[] = [];
  private readonly table = new Map<string, MethodDescriptor>(methods.map((m) => [m.method, m]));

  violation(text: string): void {
    if (this.violations.length < 50) this.violations.push(text);
  }

  /** A message the suite sends (malformed ones on purpose are not given here). */
  clientMessage(msg: Record<string, unknown>): void {
    const method = String(msg.method);
    if (method.startsWith('$/')) return;
    const d = this.table.get(method);
    if (!d || d.direction !== 'clientToServer') return this.violation(`the suite sent ${method}, which the protocol does not define`);
    const kind = msg.id === undefined ? 'notification' : 'request';
    if (d.kind !== kind) this.violation(`${method} sent as a ${kind}`);
    this.check(d.params, msg.params, `${method} params (sent)`);
  }

  /** A message the server sent; `method` is that of the request it answers, when known. */
  serverMessage(msg: Record<string, unknown>, method: string | undefined): void {
    if (msg.jsonrpc !== '2.0') this.violation('a server message without "jsonrpc": "2.0"');
    if (msg.method !== undefined) return this.serverNotification(msg);
    const { id } = msg;
    if (id !== null && typeof id !== 'string' && typeof id !== 'number') return this.violation('a response whose id is not a string, a number or null');
    const hasResult = Object.hasOwn(msg, 'result');
    const hasError = Object.hasOwn(msg, 'error');
    if (hasResult === hasError) return this.violation(`the response to id ${JSON.stringify(id)} has ${hasResult ? 'both result and error' : 'neither result nor error'}`);
    if (hasError) return this.errorObject(msg.error, `the error answering id ${JSON.stringify(id)}${method ? ` (${method})` : ''}`, method);
    if (method === undefined) return this.violation(`a result for id ${JSON.stringify(id)}, which names no request in flight`);
    const d = this.table.get(method);
    if (d?.result) this.check(d.result, msg.result, `${method} result`);
  }

  private serverNotification(msg: Record<string, unknown>): void {
    const method = String(msg.method);
    if (msg.id !== undefined) return this.violation(`the server sent a request (${method}); protocol v1 has none`);
    const d = this.table.get(method);
    if (!d || d.direction !== 'serverToClient') return this.violation(`the server sent the notification ${method}, which the protocol does not define`);
    this.check(d.params, msg.params, `${method} params`);
  }

  /**
   * The error envelope: data.kind's definition (protocol/errorResponse.ts), the code that kind is
   * sent with, and — when the request is known — a kind its descriptor's `errors` list names.
   */
  private errorObject(error: unknown, where: string, method: string | undefined): void {
    const shape = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).safeParse(error);
    if (!shape.success) return this.violation(`${where}: not {code: integer, message: string, data?}`);
    const { code, data } = shape.data;
    if (data === undefined) {
      if (code >= -31099 && code <= -31000 || code === -32602) this.violation(`${where}: code ${code} without data`);
      return;
    }
    const kind = (data as { kind?: unknown } | null)?.kind;
    if (typeof kind !== 'string' || !Object.hasOwn(ERROR_DATA, kind)) return this.violation(`${where}: data.kind ${JSON.stringify(kind)} is not an error kind the protocol defines`);
    const k = kind as ErrorDataKind;
    this.check(ERROR_DATA[k], data, `${where}: ${k} data`);
    if (code !== ERROR_CODE[k]) this.violation(`${where}: kind ${k} with code ${code} (the protocol gives ${ERROR_CODE[k]})`);
    const d = method === undefined ? undefined : this.table.get(method);
    if (d?.errors && !ANY_REQUEST.has(k) && !d.errors.includes(k as never)) {
      this.violation(`${where}: ${method} answered ${k}, which its errors list (meta.json) does not name`);
    }
  }

  private check(schema: z.ZodType, value: unknown, where: string): void {
    const r = schema.safeParse(value);
    if (r.success) return;
    const issue = r.error.issues[0];
    this.violation(`${where}: ${issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : 'invalid'}`);
  }
}
