/**
 * A JSON-RPC 2.0 connection to a sidecar over a pair of streams: frames out, frames in, one
 * pending entry per request id, notifications to their handlers. `Client` (generated) sends
 * through it as its RpcChannel; `tap` sees every message in both directions, as sent and as
 * parsed (a test harness validates them against schema.json).
 */
import type { Readable, Writable } from 'node:stream';
import type { CallOptions, RpcChannel } from './generated/methods.js';
import type { ErrorData } from './generated/types.js';
import { ConnectionError, SidecarError } from './errors.js';
import { type Framing, FrameReader, frame } from './framing.js';

export type Id = string | number;
export type Message = Record<string, unknown>;

/** A response as received: exactly one of `result` and `error`. */
export interface Response {
  id: Id | null;
  result?: unknown;
  error?: { code: number; message: string; data?: ErrorData };
}

export interface TransportOptions {
  framing: Framing;
  /** The server's stdout. */
  input: Readable;
  /** The server's stdin. */
  output: Writable;
  /**
   * Parses each frame's text. JSON.parse by default, which rounds integers beyond 2^53 and
   * drops a number's trailing zeros; a lossless parser (lossless-json's `parse`) keeps them.
   */
  parse?: (text: string) => unknown;
  /** Default timeout of every request, in ms (none by default). */
  timeoutMs?: number;
  /** Every message, `out` before it is written and `in` as parsed. */
  tap?: (direction: 'in' | 'out', message: Message) => void;
  /** The server wrote something that is not a frame or not JSON. */
  onMalformed?: (why: string) => void;
}

/** 7 and "7" are two ids (JSON-RPC 2.0). */
const key = (id: Id) => `${typeof id}:${id}`;

export class Transport implements RpcChannel {
  private nextId = 1;
  private closedWith: ConnectionError | undefined;
  private readonly pending = new Map<string, { resolve: (r: Response) => void; reject: (e: Error) => void }>();
  private readonly handlers = new Map<string, Set<(params: unknown) => void>>();
  private readonly reader: FrameReader;

  constructor(private readonly opts: TransportOptions) {
    this.reader = new FrameReader(opts.framing, (body) => this.onBody(body), (why) => opts.onMalformed?.(why));
    opts.input.on('data', (chunk: Buffer) => this.reader.push(chunk));
    opts.input.on('close', () => this.close('the server closed its output'));
    opts.input.on('end', () => this.close('the server closed its output'));
    opts.output.on('error', () => this.close('the server\'s input is closed'));
  }

  /** Whether the connection is closed, and why. */
  get closed(): ConnectionError | undefined {
    return this.closedWith;
  }

  /** Bytes of the server's output that are not (yet) a whole frame. */
  get partial(): number {
    return this.reader.pending;
  }

  frame(message: Message | string): Buffer {
    return frame(this.opts.framing, typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Bytes as they are (the tap does not see them). */
  writeRaw(bytes: Buffer | string): void {
    this.opts.output.write(bytes);
  }

  send(message: Message): void {
    this.opts.tap?.('out', message);
    this.writeRaw(this.frame(message));
  }

  /** The response to the request with this id, whatever it is. */
  response(id: Id, timeoutMs = this.opts.timeoutMs): Promise<Response> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.pending.delete(key(id));
        reject(new ConnectionError('timeout', `no answer to request ${JSON.stringify(id)} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => timer && clearTimeout(timer);
      this.pending.set(key(id), { resolve: (r) => (done(), resolve(r)), reject: (e) => (done(), reject(e)) });
    });
  }

  /** Sends a request and resolves with its response as received (an error response too). */
  exchange(method: string, params?: unknown, options: CallOptions & { id?: Id } = {}): Promise<Response> {
    const id = options.id ?? this.nextId++;
    const answer = this.response(id, options.timeoutMs ?? this.opts.timeoutMs);
    if (this.closedWith) return answer;
    const abort = () => this.notify('$/cancelRequest', { id });
    if (options.signal?.aborted) queueMicrotask(abort);
    else options.signal?.addEventListener('abort', abort, { once: true });
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
    return answer.finally(() => options.signal?.removeEventListener('abort', abort));
  }

  async request(method: string, params?: unknown, options?: CallOptions): Promise<unknown> {
    const r = await this.exchange(method, params, options);
    if (r.error) throw new SidecarError(r.error.code, r.error.message, r.error.data, method);
    return r.result;
  }

  notify(method: string, params?: unknown): void {
    if (this.closedWith) return;
    this.send({ jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) });
  }

  onNotification(method: string, handler: (params: unknown) => void): () => void {
    const set = this.handlers.get(method) ?? new Set();
    this.handlers.set(method, set.add(handler));
    return () => void set.delete(handler);
  }

  /** Every pending request rejects with ConnectionError `closed`; later ones reject at once. */
  close(why = 'the connection was closed'): void {
    if (this.closedWith) return;
    this.closedWith = new ConnectionError('closed', why);
    for (const p of this.pending.values()) p.reject(this.closedWith);
    this.pending.clear();
  }

  private onBody(body: string): void {
    let msg: Message;
    try {
      msg = (this.opts.parse ?? JSON.parse)(body) as Message;
    } catch {
      this.opts.onMalformed?.('a frame that is not JSON');
      return;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
      this.opts.onMalformed?.('a frame that is not a JSON-RPC object');
      return;
    }
    this.opts.tap?.('in', msg);
    if (typeof msg.method === 'string') {
      if (msg.id === undefined) for (const h of this.handlers.get(msg.method) ?? []) h(msg.params);
      return;
    }
    const id = msg.id;
    const p = typeof id === 'string' || typeof id === 'number' ? this.pending.get(key(id)) : undefined;
    if (!p) return;
    this.pending.delete(key(id as Id));
    p.resolve(msg as unknown as Response);
  }
}
