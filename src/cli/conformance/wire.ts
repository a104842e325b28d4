import { type ChildProcess, spawn } from 'node:child_process';
import type { WireSchema } from './wireSchema.js';

export type Framing = 'lsp' | 'ndjson';
export type Id = string | number;
export type Json = Record<string, unknown>;

/** A response as received: exactly one of result and error (the wire schema checks that). */
export interface Answer {
  id: Id | null;
  result?: unknown;
  error?: { code: number; message: string; data?: Json };
}

export interface PeerOptions {
  command: string[];
  framing: Framing;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  schema: WireSchema;
}

/**
 * The server under test as a child process over pipes, spoken to byte by byte: it frames what
 * the scenario sends, parses every byte the server writes (a byte outside a frame is a
 * violation) and hands each message in either direction to the wire schema.
 */
export class Peer {
  readonly child: ChildProcess;
  /** Every message the server sent, in order. */
  readonly received: Json[] = [];
  stderr = '';
  private buf = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<string, { method: string; resolve: (a: Answer) => void }>();
  private readonly waiters: Array<() => void> = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(private readonly opts: PeerOptions) {
    const [cmd, ...args] = opts.command;
    // Its own process group: a kill reaches a server started through a shell or a proxy too.
    this.child = spawn(cmd as string, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env, detached: true });
    this.child.stdin!.on('error', () => {});
    this.child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr = (this.stderr + s).slice(-65536)));
    this.exited = new Promise((resolve) => {
      this.child.on('error', (e) => {
        this.opts.schema.violation(`cannot start the server: ${e.message}`);
        resolve({ code: null, signal: null });
      });
      this.child.on('close', (code, signal) => {
        for (const [, p] of this.pending) p.resolve({ id: null, error: { code: 0, message: 'the server exited without answering' } });
        this.pending.clear();
        resolve({ code, signal });
      });
    });
  }

  frame(msg: unknown): Buffer {
    const body = Buffer.from(typeof msg === 'string' ? msg : JSON.stringify(msg), 'utf8');
    return this.opts.framing === 'lsp'
      ? Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body])
      : Buffer.concat([body, Buffer.from('\n')]);
  }

  /** Bytes as they are: the wire schema does not see them (scenarios send malformed input on purpose). */
  writeRaw(bytes: Buffer | string): void {
    this.child.stdin!.write(bytes);
  }

  /** A request; `invalid` marks params sent wrong on purpose (not checked against the schema). */
  request(method: string, params?: unknown, opts: { id?: Id; invalid?: boolean } = {}): Promise<Answer> {
    const id = opts.id ?? this.nextId++;
    const msg: Json = { jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) };
    if (!opts.invalid) this.opts.schema.clientMessage(msg);
    const answer = this.expect(id, method);
    this.writeRaw(this.frame(msg));
    return answer;
  }

  /** The answer to a request sent with writeRaw under `id`. */
  expect(id: Id, method: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(key(id));
        reject(new Error(`no answer to ${method} (id ${JSON.stringify(id)}) within ${this.opts.timeoutMs} ms`));
      }, this.opts.timeoutMs);
      this.pending.set(key(id), { method, resolve: (a) => (clearTimeout(timer), resolve(a)) });
    });
  }

  /** The result of a request that must succeed. */
  async call<T = Json>(method: string, params?: unknown): Promise<T> {
    const a = await this.request(method, params);
    if (a.error) throw new Error(`${method} failed: ${a.error.code} ${a.error.message}`);
    return a.result as T;
  }

  notify(method: string, params?: unknown, opts: { invalid?: boolean } = {}): void {
    const msg: Json = { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) };
    if (!opts.invalid) this.opts.schema.clientMessage(msg);
    this.writeRaw(this.frame(msg));
  }

  async initialize(params: Json = {}): Promise<Json> {
    const r = await this.call('initialize', { protocolVersion: 1, clientInfo: { name: 'session-sidecar conformance' }, ...params });
    this.notify('initialized', {});
    return r;
  }

  /** shutdown, exit, and the exit code. */
  async shutdown(): Promise<number | null> {
    await this.call('shutdown');
    this.notify('exit');
    this.child.stdin!.end();
    return (await this.within(this.exited, 'exit')).code;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<unknown> {
    if (this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, signal);
      } catch {
        this.child.kill(signal);
      }
    }
    return this.exited;
  }

  /** Server notifications received so far with this method. */
  notifications(method: string): Json[] {
    return this.received.filter((m) => m.method === method && m.id === undefined);
  }

  /** Waits until `test` holds over the messages received (or the timeout). */
  async until(test: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + this.opts.timeoutMs;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  within<T>(p: Promise<T>, what: string): Promise<T> {
    return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), this.opts.timeoutMs).unref())]);
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const body = this.opts.framing === 'lsp' ? this.takeLsp() : this.takeLine();
      if (body === undefined) break;
      let msg: Json;
      try {
        msg = JSON.parse(body.toString('utf8')) as Json;
      } catch {
        this.opts.schema.violation('the server wrote a frame that is not JSON');
        continue;
      }
      this.onMessage(msg);
    }
    this.waiters.splice(0).forEach((w) => w());
  }

  private takeLine(): Buffer | undefined {
    const nl = this.buf.indexOf(0x0a);
    if (nl === -1) return undefined;
    const line = this.buf.subarray(0, nl);
    this.buf = this.buf.subarray(nl + 1);
    return line;
  }

  private takeLsp(): Buffer | undefined {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const m = /^Content-Length: *(\d+) *$/im.exec(this.buf.toString('ascii', 0, end));
    if (!m) {
      this.opts.schema.violation('the server wrote an LSP header without Content-Length');
      this.buf = Buffer.alloc(0);
      return undefined;
    }
    const start = end + 4;
    const len = Number(m[1]);
    if (this.buf.length < start + len) return undefined;
    const body = this.buf.subarray(start, start + len);
    this.buf = this.buf.subarray(start + len);
    return body;
  }

  private onMessage(msg: Json): void {
    this.received.push(msg);
    const isResponse = msg.method === undefined;
    const p = isResponse && (typeof msg.id === 'string' || typeof msg.id === 'number') ? this.pending.get(key(msg.id)) : undefined;
    this.opts.schema.serverMessage(msg, p?.method);
    if (p) {
      this.pending.delete(key(msg.id as Id));
      p.resolve(msg as unknown as Answer);
    }
  }

  /** Bytes the server wrote that are not (yet) a whole frame. */
  leftover(): number {
    return this.buf.length;
  }
}

/** 7 and "7" are two ids (JSON-RPC 2.0). */
const key = (id: Id) => `${typeof id}:${id}`;
