import { type ChildProcess, spawn } from 'node:child_process';
import { type Answer, type Id, type Json, type Peer, PeerBase, type PeerOptions } from './peer.js';

export { type Answer, type Framing, type Id, type Json, type Peer, PeerBase, type PeerFactory, type PeerOptions } from './peer.js';

/**
 * The server under test as a child process over pipes, spoken to byte by byte: it frames what
 * the scenario sends, parses every byte the server writes (a byte outside a frame is a
 * violation) and hands each message in either direction to the wire schema.
 */
export class PipePeer extends PeerBase implements Peer {
  readonly child: ChildProcess;
  /** Every message the server sent, in order. */
  readonly received: Json[] = [];
  stderr = '';
  private buf = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<string, { method: string; resolve: (a: Answer) => void }>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(opts: PeerOptions) {
    super(opts);
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

  notify(method: string, params?: unknown, opts: { invalid?: boolean } = {}): void {
    const msg: Json = { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) };
    if (!opts.invalid) this.opts.schema.clientMessage(msg);
    this.writeRaw(this.frame(msg));
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
    this.wake();
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
