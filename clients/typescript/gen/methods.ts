/**
 * src/generated/methods.ts: the method table of meta.json as types and constants, and `Client`,
 * one member per method: a request helper per request (params object in, result out), a
 * sender per client notification, an `on…` subscription per server notification. A method
 * added to meta.json appears here on the next `generate`; the drift test fails until it does.
 */
import { doc, HEADER, handlerName, type Inputs, lit, memberName, type MethodEntry, refName } from './common.js';

const typeOfRef = (r: { $ref?: string; type?: string } | undefined): string =>
  r?.$ref ? `T.${refName(r.$ref)}` : r?.type === 'null' ? 'null' : 'unknown';

const union = (kinds: readonly string[]): string => (kinds.length === 0 ? 'never' : kinds.map(lit).join(' | '));

/** The doc comment of a method: its summary, then what meta.json says of it. */
function comment(m: MethodEntry, indent: string): string {
  const lines = [doc(m.summary)];
  if (m.errors) lines.push(`Errors: ${m.errors.map((e) => `${e.kind} (${e.code})`).join(', ') || 'none of its own'}; and any of AnyRequestErrorKind.`);
  lines.push(`Since protocol ${m.since}${m.capability ? `; capability \`${m.capability}\`` : ''}.`);
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`).join('\n')}\n${indent} */\n`;
}

function table(name: string, what: string, entries: readonly MethodEntry[], row: (m: MethodEntry) => string): string {
  return `/** ${what} */\nexport interface ${name} {\n${entries.map((m) => `${comment(m, '  ')}  ${lit(m.method)}: { ${row(m)} };\n`).join('')}}\n`;
}

function requestHelper(m: MethodEntry): string {
  const opt = m.params.optional ? '?' : '';
  const result = typeOfRef(m.result);
  return `${comment(m, '  ')}  ${memberName(m.method)}(params${opt}: ${typeOfRef(m.params)}, options?: CallOptions): Promise<${result}> {\n`
    + `    return this.channel.request(${lit(m.method)}, params, options) as Promise<${result}>;\n  }\n`;
}

function notificationSender(m: MethodEntry): string {
  const opt = m.params.optional ? '?' : '';
  return `${comment(m, '  ')}  ${memberName(m.method)}(params${opt}: ${typeOfRef(m.params)}): void {\n    this.channel.notify(${lit(m.method)}, params);\n  }\n`;
}

function notificationHandler(m: MethodEntry): string {
  const p = typeOfRef(m.params);
  return `${comment(m, '  ')}  ${handlerName(m.method)}(handler: (params: ${p}) => void): () => void {\n`
    + `    return this.channel.onNotification(${lit(m.method)}, handler as (params: unknown) => void);\n  }\n`;
}

export function renderMethods({ meta }: Inputs): string {
  const requests = meta.methods.filter((m) => m.kind === 'request');
  const fromClient = [...meta.methods, ...meta.baseProtocol].filter((m) => m.kind === 'notification' && m.direction === 'clientToServer');
  const fromServer = meta.methods.filter((m) => m.kind === 'notification' && m.direction === 'serverToClient');
  const codes = [...meta.errors.domain, ...meta.errors.anyRequest];
  const info = (m: MethodEntry) => `  ${lit(m.method)}: { since: ${m.since}, ${m.capability ? `capability: ${lit(m.capability)}, ` : ''}paramsOptional: ${Boolean(m.params.optional)}, errors: [${(m.errors ?? []).map((e) => lit(e.kind)).join(', ')}] },\n`;
  return [
    HEADER,
    '// The methods of protocol/meta.json: their params, results and errors as types, and `Client`.\n',
    "import type * as T from './types.js';\n",
    `/** The protocol version these helpers speak (initialize's \`protocolVersion\`). */\nexport const PROTOCOL_VERSION = ${meta.protocolVersion} as const;\n`,
    table('RequestTable', 'Every request: its params, its result and the error kinds of its own (meta.json `errors`).', requests,
      (m) => `params: ${typeOfRef(m.params)}; result: ${typeOfRef(m.result)}; errors: ${union((m.errors ?? []).map((e) => e.kind))}`),
    table('ClientNotificationTable', 'Every notification the client sends.', fromClient, (m) => `params: ${typeOfRef(m.params)}`),
    table('ServerNotificationTable', 'Every notification the server sends (after `session/subscribe`).', fromServer, (m) => `params: ${typeOfRef(m.params)}`),
    'export type RequestMethod = keyof RequestTable;',
    'export type ServerNotificationMethod = keyof ServerNotificationTable;',
    'export type ParamsOf<M extends RequestMethod> = RequestTable[M][\'params\'];',
    'export type ResultOf<M extends RequestMethod> = RequestTable[M][\'result\'];',
    `/** The kinds every request may answer with besides its own (meta.json \`errors.anyRequest\`). */\nexport type AnyRequestErrorKind = ${union(meta.errors.anyRequest.map((e) => e.kind))};`,
    `export const ANY_REQUEST_ERRORS: readonly AnyRequestErrorKind[] = [${meta.errors.anyRequest.map((e) => lit(e.kind)).join(', ')}];`,
    'export type ErrorKindOf<M extends RequestMethod> = RequestTable[M][\'errors\'] | AnyRequestErrorKind;',
    "/** Every `error.data.kind`. */\nexport type ErrorKind = T.ErrorData['kind'];",
    '/** The `error.data` a kind is sent with. */\nexport type ErrorDataOf<K extends ErrorKind> = Extract<T.ErrorData, { kind: K }>;\n',
    '/** What meta.json says of each request, at run time. */',
    'export interface RequestInfo { readonly since: number; readonly capability?: string; readonly paramsOptional: boolean; readonly errors: readonly ErrorKind[] }',
    `export const REQUESTS: { readonly [M in RequestMethod]: RequestInfo } = {\n${requests.map(info).join('')}};\n`,
    `/** The notifications the server sends. */\nexport const SERVER_NOTIFICATIONS: readonly ServerNotificationMethod[] = [${fromServer.map((m) => lit(m.method)).join(', ')}];\n`,
    `/** The JSON-RPC code each \`data.kind\` is sent with. */\nexport const ERROR_CODES: { readonly [K in ErrorKind]: number } = {\n${codes.map((e) => `  ${e.kind}: ${e.code},\n`).join('')}};\n`,
    `/** JSON-RPC's own codes (some answered without \`data\`). */\nexport const JSON_RPC_ERROR_CODES = {\n${Object.entries(meta.errors.jsonRpc).map(([k, v]) => `  ${k}: ${v},\n`).join('')}} as const;\n`,
    '/** Per call: an AbortSignal sends `$/cancelRequest`; a timeout rejects with ConnectionError `timeout`. */',
    'export interface CallOptions { signal?: AbortSignal; timeoutMs?: number }\n',
    '/** What `Client` sends through: a JSON-RPC connection (src/transport.ts is one). */',
    'export interface RpcChannel {',
    '  /** Resolves with the result; rejects with the error response (or a connection failure). */',
    '  request(method: string, params: unknown, options?: CallOptions): Promise<unknown>;',
    '  notify(method: string, params?: unknown): void;',
    '  /** Calls handler with the params of every notification of this method; returns the unsubscribe. */',
    '  onNotification(method: string, handler: (params: unknown) => void): () => void;',
    '}\n',
    '/** A typed helper for every method of protocol/meta.json. */',
    'export class Client {',
    '  constructor(readonly channel: RpcChannel) {}\n',
    ...requests.map(requestHelper),
    ...fromClient.map(notificationSender),
    ...fromServer.map(notificationHandler),
    '}\n',
  ].join('\n');
}
