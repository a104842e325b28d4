import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { SidecarClient } from '../../dist/src/client/index.js';
import { ErrorKindCode } from '../../protocol/errors.js';
import { parseFrames } from '../conformance/frames.js';
import { sidecarCommand } from './binary.js';
import { fail, TortureFailure } from './model.js';

/**
 * Scenario 5 — hostile input. fast-check generates processes' worth of frames (thousands per
 * process) and sends them to the built binary: random bytes, JSON-ish noise, invalid UTF-8,
 * truncated frames, LSP header variants, oversized messages, nesting past the limit, wrong
 * envelopes, wrong params types and unknown members, unknown methods, requests before
 * initialize, client-side responses, notifications, batches — and valid requests in between.
 *
 * Invariants (protocol README sections 2 and 6): stdout holds complete frames only; every
 * response is well-formed JSON-RPC (exactly one of result/error, an integer code, a domain
 * error's data.kind naming its code); every request with a usable id is answered exactly once,
 * with the code the frame calls for; frames without a usable id are answered with id null,
 * exactly as many times as such frames were sent; the process keeps serving (a request after
 * the noise is answered, and shutdown + exit end it with code 0); the store's bytes never
 * change (no frame here may write). The faults that §2.5 makes fatal (LSP header faults, an
 * oversized message whose id is not in its first 4 KiB) are sent last, in their own
 * processes: the process then writes a diagnostic, answers what it had read and exits 1.
 */

export interface FuzzOptions {
  seed: number;
  /** Frames in all (default 10 000). */
  frames: number;
  /** Frames per process (default 1000). */
  perProcess?: number;
  /** Processes that end with a fatal or terminal frame (default 12). */
  terminal?: number;
  /** A snapshot of a directory's files and bytes (test/helpers.ts snapshotTree). */
  snapshot: (dir: string) => Record<string, string>;
  tmp?: string;
  progress?: (line: string) => void;
}

export interface FuzzStats {
  processes: number;
  frames: number;
  /** Responses checked (each one well-formed, each id answered as expected). */
  responses: number;
  nullIdErrors: number;
  byKind: Record<string, number>;
  terminal: Record<string, number>;
}

const MAX_MESSAGE = 65536;
type Framing = 'ndjson' | 'lsp';

// ---------------------------------------------------------------------------------------------
// Frame specs (what fast-check generates) and their rendering

type Id = string | number;

type Spec =
  | { k: 'junk'; bytes: Uint8Array }
  | { k: 'jsonish'; text: string }
  | { k: 'badUtf8'; bad: number[]; at: number }
  | { k: 'truncated'; cut: number }
  | { k: 'blank'; variant: number }
  | { k: 'unknownMethod'; method: string; params: unknown }
  | { k: 'badParams'; method: string; member: string; value: unknown }
  | { k: 'wrongType'; method: string; member: string; value: unknown }
  | { k: 'paramsNotObject'; method: string; params: unknown }
  | { k: 'paramsArray'; method: string; params: unknown[] }
  | { k: 'badSessionId'; method: string; id: string }
  | { k: 'missingSession'; method: string }
  | { k: 'validRead'; method: string; n: number }
  | { k: 'writeNotOpen'; method: string }
  | { k: 'deep'; depth: number }
  | { k: 'deepElsewhere'; depth: number; where: number }
  | { k: 'protoKey'; method: string }
  | { k: 'oversized'; size: number }
  | { k: 'noRecords' }
  | { k: 'envelope'; variant: number }
  | { k: 'oddId'; variant: number }
  | { k: 'batch'; items: unknown[] }
  | { k: 'notObject'; value: unknown }
  | { k: 'notification'; method: string; params: unknown }
  | { k: 'response'; error: boolean; value: unknown }
  | { k: 'cancel'; target: number }
  | { k: 'secondInit' };

/** What the server must do with a frame. */
interface Expect {
  /** A tracked request id and the codes it may be answered with ('result' for a success). */
  id?: Id;
  codes?: Array<number | 'result'>;
  /** A tracked id that must never be answered (a client-side response). */
  silentId?: Id;
  /** Error responses with id null this frame causes. */
  nullErrors: number;
}

interface Rendered extends Expect { bytes: Buffer; label: string }

interface Ctx {
  framing: Framing;
  initialized: boolean;
  nextId: () => Id;
  /** A session that exists (never open for writing in the fuzzed process). */
  session: string;
  /** A well-formed id of no session. */
  missing: string;
  lspHeader: number;
}

const KNOWN = [
  'session/create', 'session/open', 'session/append', 'session/read', 'session/list', 'session/close', 'session/context',
  'session/compact', 'session/history', 'session/fork', 'session/delete', 'session/restore', 'session/subscribe',
  'session/unsubscribe', 'turn/start', 'turn/setPhase', 'turn/fail', 'turn/resume', 'turn/finish', 'turn/get',
];
const READS = ['session/read', 'session/list', 'session/history', 'turn/get', 'session/context', 'session/open'];
const WRITES_ON_SESSION = ['session/append', 'turn/start', 'turn/setPhase', 'turn/fail', 'turn/resume', 'turn/finish', 'session/compact'];
const ON_SESSION = [...WRITES_ON_SESSION, 'session/read', 'session/history', 'turn/get', 'session/context', 'session/open', 'session/close'];

/** Valid params of `method` on session `sid` (which exists or not). */
function template(method: string, sid: string, n = 1): Record<string, unknown> {
  const rec = { kind: 'event', type: 't.fuzz', payload: { n } };
  switch (method) {
    case 'session/create': return { title: 'fuzz' };
    case 'session/open': return { sessionId: sid, mode: 'read' };
    case 'session/append': return { sessionId: sid, records: [rec] };
    case 'session/read': return { sessionId: sid, afterSeq: n % 7, limit: 1 + (n % 50), ...(n % 3 === 0 ? { kinds: ['event', 'message'] } : {}) };
    case 'session/list': return n % 2 ? { limit: 1 + (n % 20) } : {};
    case 'session/compact': return { sessionId: sid, summary: 'fuzz', throughSeq: 1 };
    case 'session/fork': return { sessionId: sid };
    case 'session/delete': return { sessionId: sid };
    case 'session/subscribe': return { sessionId: sid };
    case 'turn/start': return { sessionId: sid, kind: 'user' };
    case 'turn/setPhase': return { sessionId: sid, turnId: 'T', phase: 'providerStream' };
    case 'turn/fail': return { sessionId: sid, turnId: 'T', error: 'e' };
    case 'turn/resume': return { sessionId: sid, turnId: 'T' };
    case 'turn/finish': return { sessionId: sid, turnId: 'T', outcome: 'completed' };
    default: return { sessionId: sid }; // read, history, close, context, restore, unsubscribe, get
  }
}

function body(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

const LSP_HEADERS = [
  (n: number) => `Content-Length: ${n}\r\n\r\n`,
  (n: number) => `content-length:${n}\r\n\r\n`,
  (n: number) => `Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: ${n}\r\n\r\n`,
  (n: number) => `CONTENT-LENGTH:   ${n}  \r\nX-Fuzz: yes\r\n\r\n`,
  (n: number) => `Content-Length: 000${n}\r\n\r\n`,
];

function frame(ctx: Ctx, payload: Buffer): Buffer {
  if (ctx.framing === 'lsp') return Buffer.concat([Buffer.from((LSP_HEADERS[ctx.lspHeader % LSP_HEADERS.length] as (n: number) => string)(payload.length), 'latin1'), payload]);
  return Buffer.concat([payload, Buffer.from(ctx.lspHeader % 4 === 1 ? '\r\n' : '\n')]);
}

/** Null-id errors an NDJSON chunk of noise causes: one per line holding anything but blanks. */
function ndjsonLines(bytes: Uint8Array): number {
  let n = 0;
  let content = false;
  for (const b of [...bytes, 0x0a]) {
    if (b === 0x0a) {
      if (content) n += 1;
      content = false;
    } else if (b !== 0x20 && b !== 0x09 && b !== 0x0d) {
      content = true;
    }
  }
  return n;
}

const isTrackedRequest = (ctx: Ctx, codes: Array<number | 'result'>): Array<number | 'result'> => (ctx.initialized ? codes : [-32002]);

/** `depth` levels of alternating arrays and objects, as text (JSON.stringify would overflow the stack). */
function deepText(depth: number): string {
  let open = '';
  let close = '';
  for (let i = depth - 1; i >= 0; i--) {
    open += i % 2 ? '{"a":' : '[';
    close = (i % 2 ? '}' : ']') + close;
  }
  return `${open}${depth % 2 ? '"leaf"' : '1'}${close}`;
}

function render(spec: Spec, ctx: Ctx): Rendered {
  const req = (method: string, params: unknown, codes: Array<number | 'result'>, extra: Record<string, unknown> = {}): Rendered => {
    const id = ctx.nextId();
    const msg = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }), ...extra };
    return { bytes: frame(ctx, body(msg)), id, codes: isTrackedRequest(ctx, codes), nullErrors: 0, label: `${spec.k} ${method}` };
  };
  switch (spec.k) {
    case 'junk': {
      const bytes = Buffer.from(spec.bytes);
      if (ctx.framing === 'lsp') return { bytes: frame(ctx, bytes), nullErrors: 1, label: 'junk' };
      return { bytes: Buffer.concat([bytes, Buffer.from('\n')]), nullErrors: ndjsonLines(bytes), label: 'junk' };
    }
    case 'jsonish': {
      const bytes = Buffer.from(spec.text, 'utf8');
      return { bytes: frame(ctx, bytes), nullErrors: ctx.framing === 'lsp' ? 1 : ndjsonLines(bytes), label: 'jsonish' };
    }
    case 'badUtf8': {
      const text = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 'utf8', method: 'session/list', params: { cursor: 'abcdefgh' } }));
      const at = 50 + (spec.at % 8); // inside the cursor string
      const bytes = Buffer.concat([text.subarray(0, at), Buffer.from(spec.bad), text.subarray(at)]);
      return { bytes: frame(ctx, bytes), nullErrors: 1, label: 'badUtf8' };
    }
    case 'truncated': {
      const text = body({ jsonrpc: '2.0', id: 'cut', method: 'session/read', params: template('session/read', ctx.session) });
      const cut = 1 + Math.floor(spec.cut * (text.length - 2));
      return { bytes: frame(ctx, text.subarray(0, cut)), nullErrors: 1, label: 'truncated' };
    }
    case 'blank':
      if (ctx.framing === 'lsp') return { bytes: frame(ctx, Buffer.alloc(0)), nullErrors: 1, label: 'empty LSP body' };
      return { bytes: Buffer.from(['\n', '  \n', '\t\r\n', ' \r\n\n'][spec.variant % 4] as string), nullErrors: 0, label: 'blank lines' };
    case 'unknownMethod':
      return req(spec.method, spec.params === undefined || (typeof spec.params === 'object' && spec.params !== null && !Array.isArray(spec.params)) ? spec.params : undefined, [-32601]);
    case 'badParams': {
      const params = { ...template(spec.method, ctx.session), [spec.member]: spec.value };
      return req(spec.method, params, [-32602]);
    }
    case 'wrongType': {
      const params = { ...template(spec.method, ctx.session), [spec.member]: spec.value };
      // a substituted value can happen to be valid: then a read succeeds and a write is refused (not
      // open here); a valid integer beyond the state (session/read generation 1 of a session never
      // compacted, say) is OutOfRange
      return req(spec.method, params, [-32602, -31001, -31002, -31009, -31018, 'result']);
    }
    case 'paramsNotObject': {
      const id = ctx.nextId();
      // `"params": null` means absent for methods whose params may be left out (2.4): session/list
      // then lists; create would write (this fuzzer keeps the store unchanged), so it gets a 5.
      const nullMeansAbsent = spec.params === null && (spec.method === 'session/create' || spec.method === 'session/open' || spec.method === 'session/list');
      const params = nullMeansAbsent && spec.method !== 'session/list' ? 5 : spec.params;
      const msg = { jsonrpc: '2.0', id, method: spec.method, params };
      const codes: Array<number | 'result'> = nullMeansAbsent && spec.method === 'session/list' ? ['result'] : [-32600];
      return { bytes: frame(ctx, body(msg)), id, codes, nullErrors: 0, label: 'params not an object' };
    }
    case 'paramsArray':
      return req(spec.method, spec.params, [-32602]);
    case 'badSessionId':
      return req(spec.method, { ...template(spec.method, ctx.session), sessionId: spec.id }, [-31002, -32602]);
    case 'missingSession': {
      const method = spec.method;
      return req(method, { ...template(method, ctx.missing), ...(method === 'session/open' ? { mode: 'write' } : {}) }, [-31001, -31009]);
    }
    case 'validRead':
      return req(spec.method, template(spec.method, ctx.session, spec.n), ['result']);
    case 'writeNotOpen':
      return req(spec.method, template(spec.method, ctx.session), [-31009]);
    case 'deep': {
      const id = ctx.nextId();
      // params (1) > records (2) > record (3) > payload (4…): nested past 128 levels is refused
      const nestedLevels = 3 + spec.depth;
      const text = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"session/append","params":{"sessionId":${JSON.stringify(ctx.session)},"records":[{"kind":"event","type":"t.deep","payload":${deepText(spec.depth)}}]}}`;
      return { bytes: frame(ctx, Buffer.from(text)), id, codes: isTrackedRequest(ctx, [nestedLevels > 128 ? -32602 : -31009]), nullErrors: 0, label: `nesting ${spec.depth} deep` };
    }
    case 'deepElsewhere': {
      const nest = deepText(spec.depth);
      const id = ctx.nextId();
      switch (spec.where % 4) {
        case 0: // a top-level member the server does not read
          return { bytes: frame(ctx, Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"session/list","params":{},"zz":${nest}}`)), id, codes: isTrackedRequest(ctx, ['result']), nullErrors: 0, label: `nesting ${spec.depth} deep outside params` };
        case 1: // params of an unknown method
          return { bytes: frame(ctx, Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"zz/deep","params":{"a":${nest}}}`)), id, codes: isTrackedRequest(ctx, [-32601]), nullErrors: 0, label: `nesting ${spec.depth} deep in an unknown method's params` };
        case 2: // a notification's params
          return { bytes: frame(ctx, Buffer.from(`{"jsonrpc":"2.0","method":"zz/deep","params":{"a":${nest}}}`)), nullErrors: 0, label: `nesting ${spec.depth} deep in a notification` };
        default: { // a client-side response's result
          const rid = `resp-${String(id)}`;
          return { bytes: frame(ctx, Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(rid)},"result":${nest}}`)), silentId: rid, nullErrors: 0, label: `nesting ${spec.depth} deep in a response` };
        }
      }
    }
    case 'protoKey': {
      const id = ctx.nextId();
      const text = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(spec.method)},"params":{"sessionId":${JSON.stringify(ctx.session)},"__proto__":{"x":1}}}`;
      return { bytes: frame(ctx, Buffer.from(text)), id, codes: isTrackedRequest(ctx, [-32602]), nullErrors: 0, label: '__proto__ member' };
    }
    case 'oversized': {
      const id = ctx.nextId();
      const msg = { jsonrpc: '2.0', id, method: 'session/append', params: { sessionId: ctx.session, records: [{ kind: 'event', type: 't.big', payload: 'x'.repeat(spec.size) }] } };
      return { bytes: frame(ctx, body(msg)), id, codes: [ErrorKindCode.PayloadTooLarge], nullErrors: 0, label: 'oversized message' };
    }
    case 'noRecords':
      return req('session/append', { sessionId: ctx.session, records: [] }, [-32602]);
    case 'envelope': {
      const id = ctx.nextId();
      const variants: Array<[Record<string, unknown>, Array<number | 'result'>]> = [
        [{ id, method: 'session/list' }, [-32600]], // no jsonrpc
        [{ jsonrpc: '1.0', id, method: 'session/list' }, [-32600]],
        [{ jsonrpc: 2, id, method: 'session/list' }, [-32600]],
        [{ jsonrpc: '2.0', id, method: 7 }, [-32600]],
        [{ jsonrpc: '2.0', id }, [-32600]], // neither request nor response
        [{ jsonrpc: '2.0', id, method: 'session/list', params: {}, extra: [[[[1]]]] }, isTrackedRequest(ctx, ['result'])],
      ];
      const [msg, codes] = variants[spec.variant % variants.length] as [Record<string, unknown>, Array<number | 'result'>];
      return { bytes: frame(ctx, body(msg)), id, codes, nullErrors: 0, label: `envelope ${spec.variant % variants.length}` };
    }
    case 'oddId': {
      // ids that are no usable id: answered with id null
      const bad = [{ o: 1 }, [1], true, null, '1e400'][spec.variant % 5];
      const text = bad === '1e400'
        ? '{"jsonrpc":"2.0","id":1e400,"method":"session/list"}'
        : JSON.stringify({ jsonrpc: '2.0', id: bad, method: 'session/list' });
      return { bytes: frame(ctx, Buffer.from(text)), nullErrors: 1, label: 'unusable id' };
    }
    case 'batch':
      return { bytes: frame(ctx, body(spec.items)), nullErrors: 1, label: 'batch' };
    case 'notObject':
      return { bytes: frame(ctx, body(spec.value)), nullErrors: 1, label: 'not an object' };
    case 'notification': {
      // A notification is never answered, even when malformed (params no object, a cancellation
      // naming no request id): JSON-RPC 2.0; the server logs it to stderr instead.
      const msg = { jsonrpc: '2.0', method: spec.method, ...(spec.params === undefined ? {} : { params: spec.params }) };
      return { bytes: frame(ctx, body(msg)), nullErrors: 0, label: `notification ${spec.method}` };
    }
    case 'response': {
      const id = `resp-${String(ctx.nextId())}`;
      const msg = spec.error ? { jsonrpc: '2.0', id, error: { code: -1, message: 'x', data: spec.value } } : { jsonrpc: '2.0', id, result: spec.value };
      return { bytes: frame(ctx, body(msg)), silentId: id, nullErrors: 0, label: 'client response' };
    }
    case 'cancel':
      return { bytes: frame(ctx, body({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: spec.target } })), nullErrors: 0, label: 'cancel' };
    case 'secondInit':
      return req('initialize', { protocolVersion: 1 }, ctx.initialized ? [-32600] : ['result']);
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const JSONISH = [...'{}[]":,0123456789.-+eE truefalsn\\/\t\r'];
const word = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz/$_.-é中😀'), minLength: 1, maxLength: 20 });
const unknownMethod = fc.oneof(
  word.map((w) => `session/zz${w}`),
  word.map((w) => `zz/${w}`),
  word.map((w) => `_acme/${w}`),
  word.map((w) => `$/zz${w}`),
  fc.constantFrom('', ' ', 'SESSION/LIST', 'session/list ', 'session//list', 'turn/', '/', 'zz\u0000x'),
);
const anyValue = fc.jsonValue({ maxDepth: 3 });
// never 'write' (a session/open whose mode became "write" would take the lease and write)
const wrongValue = fc.constantFrom<unknown>(5, -1, 1.5, 0, 1e300, '', 'x', true, false, null, [], {}, ['a'], { a: 1 }, '01M8K1WKJ0VTPTCMTSTY8EW4CN', 'rw', 10_001);
const badIds = fc.constantFrom('', '..', '../x', '.hidden', 'a/b', 'a b', 'x'.repeat(129), 'é', 'a\u0000b', 'A..B');

export const specArb: fc.Arbitrary<Spec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant('junk' as const), bytes: fc.uint8Array({ maxLength: 200 }) }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('jsonish' as const), text: fc.string({ unit: fc.constantFrom(...JSONISH), maxLength: 80 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('badUtf8' as const), bad: fc.constantFrom<number[]>([0xff], [0xfe, 0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xe2, 0x28, 0xa1], [0xf8, 0x88, 0x80, 0x80, 0x80]), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('truncated' as const), cut: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('blank' as const), variant: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('unknownMethod' as const), method: unknownMethod, params: fc.option(anyValue, { nil: undefined }) }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('badParams' as const), method: fc.constantFrom(...KNOWN), member: word.map((w) => `zz${w}`), value: anyValue }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('wrongType' as const), method: fc.constantFrom(...ON_SESSION, 'session/list'), member: fc.constantFrom('sessionId', 'records', 'afterSeq', 'limit', 'kinds', 'mode', 'kind', 'turnId', 'phase', 'outcome', 'throughSeq', 'summary', 'generation', 'cursor'), value: wrongValue }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('paramsNotObject' as const), method: fc.constantFrom(...KNOWN), params: fc.constantFrom<unknown>(5, 'x', true, null, 0) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('paramsArray' as const), method: fc.constantFrom(...KNOWN), params: fc.array(anyValue, { maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('badSessionId' as const), method: fc.constantFrom(...ON_SESSION), id: badIds }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('missingSession' as const), method: fc.constantFrom(...ON_SESSION, 'session/delete', 'session/restore', 'session/fork') }) },
  { weight: 6, arbitrary: fc.record({ k: fc.constant('validRead' as const), method: fc.constantFrom(...READS), n: fc.nat({ max: 1000 }) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('writeNotOpen' as const), method: fc.constantFrom(...WRITES_ON_SESSION) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('deep' as const), depth: fc.oneof(fc.integer({ min: 100, max: 140 }), fc.integer({ min: 1, max: 9000 })) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('deepElsewhere' as const), depth: fc.integer({ min: 1000, max: 12_000 }), where: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('protoKey' as const), method: fc.constantFrom(...ON_SESSION) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('oversized' as const), size: fc.integer({ min: MAX_MESSAGE, max: 4 * MAX_MESSAGE }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('noRecords' as const) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('envelope' as const), variant: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('oddId' as const), variant: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('batch' as const), items: fc.array(fc.constantFrom<unknown>({ jsonrpc: '2.0', id: 1, method: 'session/list' }, 1, 'x', null), { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('notObject' as const), value: fc.constantFrom<unknown>(42, 'str', null, true, -1.5) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('notification' as const), method: fc.oneof(unknownMethod, fc.constantFrom('initialized', '$/setTrace', '$/cancelRequest', 'session/list', 'session/append')), params: fc.option(fc.oneof(anyValue, fc.constantFrom<unknown>(5, 'x')), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('notification' as const), method: fc.constant('$/cancelRequest'), params: fc.constantFrom<unknown>(undefined, {}, [], { id: null }, { id: true }, { id: {} }, { id: [1] }, 5, 'x') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('response' as const), error: fc.boolean(), value: anyValue }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cancel' as const), target: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('secondInit' as const) }) },
);

/** What may be sent before `initialize`: requests (answered -32002), notifications, noise. */
const preInitArb: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ k: fc.constant('validRead' as const), method: fc.constantFrom(...READS), n: fc.nat({ max: 1000 }) }),
  fc.record({ k: fc.constant('writeNotOpen' as const), method: fc.constantFrom(...WRITES_ON_SESSION) }),
  fc.record({ k: fc.constant('unknownMethod' as const), method: unknownMethod, params: fc.constant(undefined) }),
  fc.record({ k: fc.constant('badParams' as const), method: fc.constantFrom(...KNOWN), member: word.map((w) => `zz${w}`), value: anyValue }),
  fc.record({ k: fc.constant('notification' as const), method: unknownMethod, params: fc.constant(undefined) }),
);

interface ProcessSpec {
  framing: Framing;
  auto: boolean;
  lspHeader: number;
  preInit: Spec[];
  badInit: unknown[];
  frames: Spec[];
  chunk: number;
}

function processArb(frames: number): fc.Arbitrary<ProcessSpec> {
  return fc.record({
    framing: fc.constantFrom<Framing>('ndjson', 'lsp'),
    auto: fc.boolean(),
    lspHeader: fc.nat(),
    preInit: fc.array(preInitArb, { maxLength: 6 }),
    badInit: fc.array(fc.constantFrom<unknown>(2, 0, '1', null, -1), { maxLength: 2 }),
    frames: fc.array(specArb, { minLength: frames, maxLength: frames }),
    chunk: fc.constantFrom(0, 0, 1, 7, 512, 4096),
  });
}

// ---------------------------------------------------------------------------------------------
// Running a process and checking its output

const DOMAIN_KIND = new Map<number, string>(Object.entries(ErrorKindCode).map(([k, v]) => [v, k]));

/** A response must be well-formed; returns its id. */
function checkWellFormed(f: Record<string, unknown>): { id: Id | null; code?: number } | undefined {
  if (typeof f.method === 'string') {
    if ('id' in f) fail(`the server sent a request: ${JSON.stringify(f).slice(0, 200)}`);
    return undefined; // a notification (session/didAppend after a subscribe)
  }
  const keys = Object.keys(f).sort().join(',');
  if (keys !== 'error,id,jsonrpc' && keys !== 'id,jsonrpc,result') fail(`a malformed response: ${JSON.stringify(f).slice(0, 300)}`);
  const id = f.id as Id | null;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number') fail(`a response with id ${JSON.stringify(id)}`);
  if (!('error' in f)) return { id };
  const e = f.error as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof e !== 'object' || e === null || !Number.isInteger(e.code) || typeof e.message !== 'string') fail(`a malformed error: ${JSON.stringify(f).slice(0, 300)}`);
  const code = e.code as number;
  const data = e.data as { kind?: unknown } | undefined;
  const kind = DOMAIN_KIND.get(code);
  if (kind !== undefined && data?.kind !== kind) fail(`error ${code} with data.kind ${JSON.stringify(data?.kind)}, expected ${kind}`);
  if (code === -32602 && (data?.kind !== 'InvalidParams' || !Array.isArray((data as { issues?: unknown }).issues))) fail(`-32602 without InvalidParams issues: ${JSON.stringify(f).slice(0, 300)}`);
  return { id, code };
}

/** Writes `bytes`; with `chunk`, the first 512 pieces of that size (frames split anywhere), then the rest at once. */
async function writeAll(c: SidecarClient, bytes: Buffer, chunk: number): Promise<void> {
  const stdin = c.child.stdin!;
  const pieces: Buffer[] = [];
  const split = chunk === 0 ? 0 : Math.min(bytes.length, chunk * 512);
  for (let at = 0; at < split; at += chunk) pieces.push(bytes.subarray(at, Math.min(at + chunk, split)));
  if (split < bytes.length) pieces.push(bytes.subarray(split));
  for (let i = 0; i < pieces.length; i++) {
    if (c.child.exitCode !== null || c.child.signalCode !== null) return;
    if (!stdin.write(pieces[i] as Buffer)) await Promise.race([new Promise((r) => stdin.once('drain', r)), c.exited]);
    else if (i % 16 === 15) await new Promise((r) => setTimeout(r, 0)); // let the server read partial frames
  }
}

interface Outcome { answers: Map<string, Array<number | 'result'>>; nullErrors: number; responses: number; code: number | null; stderr: string }

async function runProcess(args: string[], store: string, framing: Framing, bytes: Buffer, chunk: number, end: 'shutdown' | 'eof'): Promise<Outcome> {
  const c = new SidecarClient({ ...sidecarCommand(args), store, framing, keepStdout: true });
  try {
    await writeAll(c, bytes, chunk);
    if (end === 'shutdown' && c.child.exitCode === null) {
      const shutdownId = 'fuzz-shutdown';
      const tail = Buffer.concat([
        framed(framing, { jsonrpc: '2.0', id: shutdownId, method: 'shutdown' }),
        framed(framing, { jsonrpc: '2.0', method: 'exit' }),
      ]);
      await writeAll(c, tail, 0);
    }
    c.child.stdin!.end();
    const timeout = setTimeout(() => c.child.kill('SIGKILL'), 60_000);
    const { code, signal } = await c.exited;
    clearTimeout(timeout);
    if (signal) fail(`the sidecar died of ${signal} (or hung): ${c.stderr.slice(-800)}`);
    const out = Buffer.concat(c.stdout);
    let frames: Array<Record<string, unknown>>;
    try {
      frames = parseFrames(out, framing);
    } catch (err) {
      return fail(`stdout is not clean ${framing} frames: ${(err as Error).message}`);
    }
    const answers = new Map<string, Array<number | 'result'>>();
    let nullErrors = 0;
    let responses = 0;
    for (const f of frames) {
      const r = checkWellFormed(f);
      if (!r) continue;
      responses += 1;
      if (r.id === null) {
        if (r.code === undefined) fail('a result with id null');
        nullErrors += 1;
        continue;
      }
      const key = JSON.stringify(r.id);
      answers.set(key, [...(answers.get(key) ?? []), r.code ?? 'result']);
    }
    return { answers, nullErrors, responses, code, stderr: c.stderr };
  } finally {
    if (c.child.exitCode === null && c.child.signalCode === null) await c.kill('SIGKILL');
  }
}

function framed(framing: Framing, msg: unknown): Buffer {
  const b = body(msg);
  return framing === 'lsp' ? Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]) : Buffer.concat([b, Buffer.from('\n')]);
}

/** Checks every tracked expectation against what was answered. */
function checkAnswers(out: Outcome, rendered: Rendered[], opts: { exactNull: boolean; shutdown?: boolean }): void {
  const seen = new Set<string>();
  for (const r of rendered) {
    if (r.silentId !== undefined) {
      if (out.answers.has(JSON.stringify(r.silentId))) fail(`a client-side response (${r.label}) was answered`);
      continue;
    }
    if (r.id === undefined) continue;
    const key = JSON.stringify(r.id);
    if (seen.has(key)) fail(`test bug: id ${key} used twice`);
    seen.add(key);
    const got = out.answers.get(key);
    if (!got) fail(`frame "${r.label}" (id ${key}) was never answered`);
    if (got.length !== 1) fail(`frame "${r.label}" (id ${key}) was answered ${got.length} times: ${got.join(', ')}`);
    if (!(r.codes ?? []).includes(got[0] as number | 'result')) fail(`frame "${r.label}" (id ${key}) answered ${got[0]}, expected ${(r.codes ?? []).join(' or ')}`);
  }
  if (opts.shutdown && JSON.stringify(out.answers.get('"fuzz-shutdown"')) !== '["result"]') fail(`shutdown was answered ${JSON.stringify(out.answers.get('"fuzz-shutdown"'))}`);
  for (const key of out.answers.keys()) {
    if (!seen.has(key) && key !== '"fuzz-shutdown"' && key !== '"fuzz-init"' && !key.startsWith('"fuzz-badinit')) fail(`an answer for id ${key}, which no tracked frame sent`);
  }
  const expectedNull = rendered.reduce((n, r) => n + r.nullErrors, 0);
  if (opts.exactNull ? out.nullErrors !== expectedNull : out.nullErrors < expectedNull) {
    fail(`${out.nullErrors} errors with id null, expected ${opts.exactNull ? '' : 'at least '}${expectedNull}`);
  }
}

function renderProcess(p: ProcessSpec, session: string, missing: string, idBase: { n: number }): { bytes: Buffer; rendered: Rendered[]; ping: Id } {
  const ctx: Ctx = {
    framing: p.framing, initialized: false, session, missing, lspHeader: p.lspHeader,
    nextId: () => (idBase.n++ % 3 === 0 ? 1e12 + idBase.n : `f${idBase.n}`),
  };
  const rendered: Rendered[] = [];
  for (const s of p.preInit) rendered.push(render(s, ctx));
  p.badInit.forEach((v, i) => {
    const id = `fuzz-badinit-${i}`;
    rendered.push({
      bytes: framed(p.framing, { jsonrpc: '2.0', id, method: 'initialize', params: v === null ? {} : { protocolVersion: v } }),
      id, codes: [-32602, ErrorKindCode.UnsupportedProtocolVersion], nullErrors: 0, label: `initialize with protocolVersion ${JSON.stringify(v)}`,
    });
  });
  rendered.push({ bytes: framed(p.framing, { jsonrpc: '2.0', id: 'fuzz-init', method: 'initialize', params: { protocolVersion: 1 } }), id: 'fuzz-init', codes: ['result'], nullErrors: 0, label: 'initialize' });
  ctx.initialized = true;
  for (const s of p.frames) rendered.push(render(s, ctx));
  const ping = ctx.nextId();
  rendered.push({ bytes: framed(p.framing, { jsonrpc: '2.0', id: ping, method: 'session/list', params: {} }), id: ping, codes: ['result'], nullErrors: 0, label: 'the request after the noise' });
  return { bytes: Buffer.concat(rendered.map((r) => r.bytes)), rendered, ping };
}

// ---------------------------------------------------------------------------------------------
// Terminal frames: the faults protocol README 2.5 makes fatal, and other ends of a stream

type Terminal = { name: string; framing: Framing; bytes: (id: Id) => Buffer; exit: Array<0 | 1>; answers?: { codes: Array<number | 'result'> } };

const TERMINALS: Terminal[] = [
  { name: 'LSP negative Content-Length', framing: 'lsp', bytes: () => Buffer.from('Content-Length: -5\r\n\r\n{}'), exit: [1] },
  { name: 'LSP missing Content-Length', framing: 'lsp', bytes: () => Buffer.from('Content-Type: application/json\r\n\r\n{}'), exit: [1] },
  { name: 'LSP non-numeric Content-Length', framing: 'lsp', bytes: () => Buffer.from('Content-Length: 12a\r\n\r\n{"a":1}'), exit: [1] },
  { name: 'LSP 16-digit Content-Length', framing: 'lsp', bytes: () => Buffer.from('Content-Length: 1234567890123456\r\n\r\n'), exit: [1] },
  { name: 'LSP header never ends', framing: 'lsp', bytes: () => Buffer.from(`Content-Length: 5\r\nX: ${'h'.repeat(9000)}`), exit: [1] },
  {
    name: 'oversized, id after 4 KiB (lsp)', framing: 'lsp', exit: [1],
    bytes: () => framed('lsp', { jsonrpc: '2.0', method: 'session/list', params: { cursor: 'c'.repeat(MAX_MESSAGE * 2) }, id: 'late' }),
  },
  {
    name: 'oversized, id after 4 KiB (ndjson)', framing: 'ndjson', exit: [1],
    bytes: () => framed('ndjson', { jsonrpc: '2.0', method: 'session/list', params: { cursor: 'c'.repeat(MAX_MESSAGE * 2) }, id: 'late' }),
  },
  {
    // Answered PayloadTooLarge, then the input ends before its 99999999999999 bytes: truncated (§2.5).
    name: 'LSP huge Content-Length, id visible', framing: 'lsp', exit: [1], answers: { codes: [ErrorKindCode.PayloadTooLarge] },
    bytes: (id) => Buffer.concat([Buffer.from('Content-Length: 99999999999999\r\n\r\n'), Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"session/list","params":{"cursor":"${'c'.repeat(5000)}`)]),
  },
  {
    name: 'LSP Content-Length larger than the body', framing: 'lsp', exit: [0, 1],
    bytes: () => { const b = body({ jsonrpc: '2.0', id: 'x', method: 'session/list' }); return Buffer.concat([Buffer.from(`Content-Length: ${b.length + 9}\r\n\r\n`), b, framed('lsp', { jsonrpc: '2.0', method: 'zz' })]); },
  },
  {
    name: 'LSP Content-Length smaller than the body', framing: 'lsp', exit: [0, 1],
    bytes: () => { const b = body({ jsonrpc: '2.0', id: 'y', method: 'session/list' }); return Buffer.concat([Buffer.from(`Content-Length: ${b.length - 9}\r\n\r\n`), b, framed('lsp', { jsonrpc: '2.0', method: 'zz' })]); },
  },
  // §2.5: the input ending inside a frame is a fatal framing fault (exit 1, stderr diagnostic).
  { name: 'LSP body cut by EOF', framing: 'lsp', exit: [1], bytes: () => Buffer.from('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0","id":"z","met') },
  { name: 'NDJSON line cut by EOF', framing: 'ndjson', exit: [1], bytes: () => Buffer.from('{"jsonrpc":"2.0","id":"z","met') },
  // A whole JSON text as the last line, without its newline, is a complete frame: served.
  { name: 'NDJSON last line without its newline', framing: 'ndjson', exit: [0], answers: { codes: ['result'] }, bytes: (id) => Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"session/list"}`) },
];

// ---------------------------------------------------------------------------------------------

/** A store with one session (records, a turn, a compaction), made by the binary and shut down. */
async function makeStore(tmp: string): Promise<{ store: string; session: string }> {
  const store = fs.mkdtempSync(path.join(tmp, 'torture-fuzz-'));
  const c = await SidecarClient.start({ ...sidecarCommand(), store });
  const { sessionId } = await c.create({ title: 'fuzz target' });
  for (let i = 0; i < 5; i++) await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: `m${i}` } }] });
  await c.request('session/compact', { sessionId, summary: 'early', throughSeq: 2 });
  const { turnId } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
  await c.request('turn/finish', { sessionId, turnId, outcome: 'completed' });
  await c.shutdown();
  return { store, session: sessionId };
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzStats> {
  const stats: FuzzStats = { processes: 0, frames: 0, responses: 0, nullIdErrors: 0, byKind: {}, terminal: {} };
  const { store, session } = await makeStore(opts.tmp ?? os.tmpdir());
  const missing = '01ZZZZZZZZZZZZZZZZZZZZZZZZ';
  const before = opts.snapshot(store);
  const unchanged = (what: string) => {
    const after = opts.snapshot(store);
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]);
    if (changed.length > 0) fail(`${what} changed the store: ${changed.join(', ')}`);
  };
  const perProcess = opts.perProcess ?? 1000;
  const fuzzOne = async (p: ProcessSpec) => {
    const { bytes, rendered } = renderProcess(p, session, missing, idBase);
    const args = ['--max-message-bytes', String(MAX_MESSAGE), ...(p.auto ? [] : ['--framing', p.framing])];
    const out = await runProcess(args, store, p.framing, bytes, p.chunk, 'shutdown');
    if (out.code !== 0) fail(`the sidecar exited ${out.code} after the noise (expected 0 after shutdown + exit): ${out.stderr.slice(0, 1500)}`);
    checkAnswers(out, rendered, { exactNull: true, shutdown: true });
    unchanged('the noise');
    stats.processes += 1;
    stats.frames += rendered.length;
    stats.responses += out.responses;
    stats.nullIdErrors += out.nullErrors;
    for (const s of p.frames) stats.byKind[s.k] = (stats.byKind[s.k] ?? 0) + 1;
    opts.progress?.(`fuzz: process ${stats.processes}/${processes}: ${stats.frames} frames`);
  };
  const processes = Math.max(1, Math.ceil(opts.frames / perProcess));
  const idBase = { n: 1 };
  let why: string | undefined;
  try {
    await fc.assert(
      fc.asyncProperty(processArb(perProcess), async (p) => {
        try {
          await fuzzOne(p);
        } catch (err) {
          why ??= `${(err as Error).message} (${p.framing}${p.auto ? ', auto-detected' : ''}, chunks of ${p.chunk || 'any'} bytes)`;
          throw err;
        }
      }),
      { numRuns: processes, seed: opts.seed | 0, endOnFailure: true },
    ).catch((err: unknown) => {
      throw new TortureFailure(why ?? (err as Error).message.slice(0, 3000));
    });

    // The fatal and terminal frames, each ending its own process (after a little valid traffic).
    const terminals = opts.terminal ?? TERMINALS.length;
    for (let i = 0; i < terminals; i++) {
      const t = TERMINALS[i % TERMINALS.length] as Terminal;
      const [noise] = fc.sample(fc.array(specArb, { minLength: 20, maxLength: 40 }), { seed: opts.seed + i, numRuns: 1 });
      const ctx: Ctx = {
        framing: t.framing, initialized: true, session, missing, lspHeader: 0,
        nextId: () => `t${idBase.n++}`,
      };
      const init: Rendered = { bytes: framed(t.framing, { jsonrpc: '2.0', id: 'fuzz-init', method: 'initialize', params: { protocolVersion: 1 } }), id: 'fuzz-init', codes: ['result'], nullErrors: 0, label: 'initialize' };
      const rendered = [init, ...(noise ?? []).map((s) => render(s, ctx))];
      const lastId = ctx.nextId();
      const tail = t.bytes(lastId);
      const out = await runProcess(['--max-message-bytes', String(MAX_MESSAGE)], store, t.framing, Buffer.concat([...rendered.map((r) => r.bytes), tail]), 0, 'eof');
      const where = `terminal frame "${t.name}"`;
      if (!t.exit.includes(out.code as 0 | 1)) fail(`${where}: exit code ${out.code}, expected ${t.exit.join(' or ')}: ${out.stderr.slice(-400)}`);
      if (out.code === 1 && !out.stderr.includes('closing the connection')) fail(`${where}: exit 1 without the diagnostic on stderr: ${out.stderr.slice(-400)}`);
      if (t.answers) rendered.push({ bytes: Buffer.alloc(0), id: lastId, codes: t.answers.codes, nullErrors: 0, label: t.name });
      // the frame cut by EOF or swallowed by a wrong length is never answered; what came before always is
      const strayOk = t.exit.length > 1;
      try {
        checkAnswers(out, rendered, { exactNull: !strayOk });
      } catch (err) {
        if (!(strayOk && /no tracked frame sent|errors with id null/.test((err as Error).message))) throw err;
      }
      unchanged(where);
      stats.terminal[t.name] = (stats.terminal[t.name] ?? 0) + 1;
      stats.processes += 1;
      stats.frames += rendered.length + 1;
      stats.responses += out.responses;
    }
  } catch (err) {
    const msg = (err as Error).message;
    throw new TortureFailure(`${msg.length > 4000 ? `${msg.slice(0, 4000)}…` : msg}\n  fuzz torture: seed ${opts.seed}; store kept at ${store}`);
  }
  fs.rmSync(store, { recursive: true, force: true });
  return stats;
}
