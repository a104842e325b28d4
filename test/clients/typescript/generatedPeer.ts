import { type Answer, type Id, type Json, type Peer, PeerBase, type PeerOptions } from '../../../src/cli/conformance/wire.js';
import { memberName } from '../../../clients/typescript/gen/common.js';
import { ConnectionError, REQUESTS, SidecarError, type SidecarClient, spawnClient } from '../../../clients/typescript/src/index.js';

/**
 * The conformance suite's view of a server (a `Peer`) spoken to through the generated
 * TypeScript client: every request meta.json names goes through the `Client` helper of that
 * name (`session/append` → `client.sessionAppend(params)`), every notification through its
 * sender; only what no helper can send — a method the protocol does not have, a chosen id,
 * bytes — goes through the client's transport. The transport's tap feeds every message, both
 * directions, to the suite's wire-schema check.
 */
export class GeneratedPeer extends PeerBase implements Peer {
  /** The methods sent through a generated helper, over every peer of the run. */
  static readonly viaHelper = new Set<string>();
  /** The methods sent through the bare transport. */
  static readonly viaTransport = new Set<string>();
  readonly client: SidecarClient;
  readonly received: Json[] = [];
  /** Requests by id (as the transport sent them), for the wire check of their answers. */
  private readonly methods = new Map<string, string>();
  private lastSent: Json | undefined;
  private unchecked = false;

  constructor(opts: PeerOptions) {
    super(opts);
    this.client = spawnClient({
      command: opts.command, framing: opts.framing, env: opts.env,
      tap: (direction, message) => (direction === 'out' ? this.sent(message) : this.arrived(message)),
      onMalformed: (why) => opts.schema.violation(`the server wrote ${why}`),
    });
    this.client.child.on('error', (e) => opts.schema.violation(`cannot start the server: ${e.message}`));
  }

  get child() {
    return this.client.child;
  }

  get stderr(): string {
    return this.client.stderr;
  }

  get exited() {
    return this.client.exited;
  }

  frame(msg: unknown): Buffer {
    return this.client.transport.frame(msg as Json | string);
  }

  writeRaw(bytes: Buffer | string): void {
    this.client.transport.writeRaw(bytes);
  }

  leftover(): number {
    return this.client.transport.partial;
  }

  request(method: string, params?: unknown, opts: { id?: Id; invalid?: boolean } = {}): Promise<Answer> {
    const helper = method in REQUESTS && opts.id === undefined ? memberName(method) : undefined;
    const send = helper
      ? () => (this.client as unknown as Record<string, (p: unknown, o: unknown) => Promise<unknown>>)[helper]!.call(this.client, params, { timeoutMs: this.opts.timeoutMs })
      : () => this.client.transport.exchange(method, params, { timeoutMs: this.opts.timeoutMs, ...(opts.id !== undefined ? { id: opts.id } : {}) }).then(thrown);
    (helper ? GeneratedPeer.viaHelper : GeneratedPeer.viaTransport).add(method);
    this.unchecked = opts.invalid === true;
    let outcome: Promise<unknown>;
    try {
      outcome = send();
    } finally {
      this.unchecked = false;
    }
    const id = (this.lastSent?.id ?? null) as Id | null;
    return outcome.then((result) => ({ id, result }), (e: unknown) => answerOf(id, method, e));
  }

  expect(id: Id, method: string): Promise<Answer> {
    this.methods.set(key(id), method);
    return this.client.transport.response(id, this.opts.timeoutMs).then((r) => r as Answer, (e: unknown) => answerOf(id, method, e));
  }

  notify(method: string, params?: unknown, opts: { invalid?: boolean } = {}): void {
    this.unchecked = opts.invalid === true;
    try {
      if (method === 'initialized') this.client.initialized(params as never);
      else if (method === 'exit') this.client.exit(params as never);
      else if (method === '$/cancelRequest') this.client.cancelRequest(params as never);
      else this.client.transport.notify(method, params);
    } finally {
      this.unchecked = false;
    }
  }

  private sent(message: Json): void {
    this.lastSent = message;
    if (message.id !== undefined && typeof message.method === 'string') this.methods.set(key(message.id as Id), message.method);
    if (!this.unchecked) this.opts.schema.clientMessage(message);
  }

  private arrived(message: Json): void {
    this.received.push(message);
    const id = message.id;
    const method = message.method === undefined && (typeof id === 'string' || typeof id === 'number') ? this.methods.get(key(id)) : undefined;
    if (method !== undefined) this.methods.delete(key(id as Id));
    this.opts.schema.serverMessage(message, method);
    this.wake();
  }
}

const key = (id: Id) => `${typeof id}:${id}`;

/** A raw exchange's error response, thrown as the helpers throw it. */
function thrown(r: { result?: unknown; error?: { code: number; message: string; data?: unknown } }): unknown {
  if (r.error) throw new SidecarError(r.error.code, r.error.message, r.error.data as never);
  return r.result;
}

/** What a scenario expects of an answer that is an error, from what the client threw. */
function answerOf(id: Id | null, method: string, e: unknown): Answer {
  if (e instanceof SidecarError) return { id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data as Json } : {}) } };
  if (e instanceof ConnectionError && e.reason === 'closed') return { id: null, error: { code: 0, message: 'the server exited without answering' } };
  if (e instanceof ConnectionError) throw new Error(`no answer to ${method} (id ${JSON.stringify(id)}): ${e.message}`);
  throw e;
}

export const generatedPeer = (opts: PeerOptions): Peer => new GeneratedPeer(opts);
