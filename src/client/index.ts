import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { COMMAND_ENV, splitCommandLine } from '../../clients/typescript/src/commandLine.js';
import { fileURLToPath } from 'node:url';
import type {
  InitializeParams, InitializeResult, SessionAppendParams, SessionAppendResult, SessionCreateParams, SessionCreateResult,
  SessionListParams, SessionListResult, SessionSearchParams, SessionSearchResult, SessionUpdateParams, SessionUpdateResult, SessionOpenParams, SessionOpenResult, SessionReadParams, SessionReadResult,
  BlobGetParams, BlobGetResult, ToolAllocateScratchParams, ToolAllocateScratchResult,
} from '../../protocol/index.js';
import { FrameDecoder, type Framing } from '../framing/frameDecoder.js';

/** A JSON-RPC error answered by the sidecar; `kind` is `data.kind` when the server gave one. */
export class SidecarError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown> | undefined,
  ) {
    super(message);
    this.name = 'SidecarError';
  }

  get kind(): string | undefined {
    return typeof this.data?.kind === 'string' ? this.data.kind : undefined;
  }
}

export interface SpawnOptions {
  /**
   * The executable (`args` follow it). Default: the command line in `$SESSION_SIDECAR_COMMAND`
   * (looked up in `env` when given; split as a POSIX shell would, without expansions: `'…'`,
   * `"…"`, `\`), else this package's own CLI under the running `node` (the package's `bin`, so
   * no PATH lookup is needed).
   */
  command?: string;
  args?: string[];
  /** Store directory, passed as --store. */
  store?: string;
  framing?: Framing;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Keep every raw stdout byte in `stdout` (default false: a long-lived client would hold every
   * answer it ever read). The project's conformance tests turn it on to check the raw frames.
   */
  keepStdout?: boolean;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

const DEFAULT_CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'cli.js');

export { COMMAND_ENV, splitCommandLine };

/** The argv prefix to spawn: `command`, else `$SESSION_SIDECAR_COMMAND`, else this package's CLI under node. */
function sidecarArgv(command: string | undefined, env: NodeJS.ProcessEnv): [string, ...string[]] {
  if (command) return [command];
  const line = env[COMMAND_ENV];
  if (line !== undefined && line.trim() !== '') {
    const [exe, ...rest] = splitCommandLine(line);
    if (exe !== undefined) return [exe, ...rest];
  }
  return [process.execPath, DEFAULT_CLI];
}

/**
 * A client for the sidecar over a child process's stdin/stdout, in either framing. Keeps all of
 * stderr (`stderr`), and every raw stdout byte when asked (`keepStdout`: the project's
 * conformance tests check the raw frames). Once the process has ended every request fails at
 * once, with the sidecar's last stderr line.
 */
export class SidecarClient {
  readonly child: ChildProcess;
  readonly framing: Framing;
  /** Every raw stdout byte, in order, when spawned with `keepStdout: true` (else stays empty). */
  readonly stdout: Buffer[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly notifications: Array<{ method: string; params: unknown }> = [];
  private nextId = 1;
  private readonly pending = new Map<number | string, Pending>();
  private readonly decoder: FrameDecoder;

  constructor(opts: SpawnOptions = {}) {
    this.framing = opts.framing ?? 'ndjson';
    const [command, ...lead] = sidecarArgv(opts.command, opts.env ?? process.env);
    const args = [...lead, ...(opts.args ?? []), ...(opts.store ? ['--store', opts.store] : [])];
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd });
    this.decoder = new FrameDecoder(this.framing, 1 << 30, {
      framing: () => {},
      message: (m) => this.onMessage(m as unknown as Record<string, unknown>),
      problem: (p) => this.failAll(new SidecarError(p.code, `unreadable frame from the sidecar: ${p.message}`, undefined)),
      fatal: (reason) => this.failAll(new Error(`unreadable output from the sidecar: ${reason}`)),
    }, false); // plain JSON.parse: a caller gets ordinary values (a number past 2^53 rounded, as JSON.parse rounds it)
    const keep = opts.keepStdout === true;
    this.child.stdout!.on('data', (chunk: Buffer) => {
      if (keep) this.stdout.push(chunk);
      this.decoder.push(chunk);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.child.stdin!.on('error', () => {}); // EPIPE after the sidecar exited: reported through `exited`
    this.exited = new Promise((resolve) => {
      // A process that could not be spawned (ENOENT, EACCES) emits 'error' and no 'exit'.
      this.child.on('error', (err: NodeJS.ErrnoException) => {
        this.gone = new Error(`the sidecar could not be started: ${err.code ?? err.message} (${command})`);
        this.failAll(this.gone);
        resolve({ code: null, signal: null });
      });
      this.child.on('exit', (code, signal) => {
        const end = () => {
          // Its last stderr line says why (a store refused, a flag misspelt); the sidecar never
          // writes a secret there.
          const why = this.stderr.trim().split('\n').pop()?.slice(0, 500);
          this.gone = new Error(`sidecar exited (code ${code}, signal ${signal})${why ? `: ${why}` : ''}`);
          this.failAll(this.gone);
          resolve({ code, signal });
        };
        // stderr may still hold the last line when 'exit' comes: read it to its end first (briefly)
        const err = this.child.stderr!;
        if (err.readableEnded || err.destroyed) end();
        else {
          const t = setTimeout(end, 200);
          err.once('end', () => {
            clearTimeout(t);
            end();
          });
        }
      });
    });
  }

  /** Set once the process has ended (or never started): every later request fails with it at once. */
  private gone: Error | undefined;

  static async start(opts: SpawnOptions & { initialize?: Partial<InitializeParams> } = {}): Promise<SidecarClient> {
    const client = new SidecarClient(opts);
    await client.initialize(opts.initialize);
    return client;
  }

  async initialize(params: Partial<InitializeParams> = {}): Promise<InitializeResult> {
    const result = await this.request<InitializeResult>('initialize', { protocolVersion: 1, clientInfo: { name: 'session-sidecar/client' }, ...params });
    this.notify('initialized', {});
    return result;
  }

  request<R = unknown>(method: string, params?: unknown): Promise<R> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** A promise for the response to a request sent with writeRaw under `id`. */
  expectResponse<R = unknown>(id: number | string): Promise<R> {
    if (this.gone) return Promise.reject(this.gone);
    return new Promise<R>((resolve, reject) => this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  }

  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Sends bytes exactly as given (tests of malformed input). */
  writeRaw(bytes: string | Buffer): void {
    this.child.stdin!.write(bytes);
  }

  /** A message framed in this client's framing. */
  frame(message: unknown): Buffer {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    if (this.framing === 'ndjson') return Buffer.concat([body, Buffer.from('\n')]);
    return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
  }

  create(p: SessionCreateParams = {}) { return this.request<SessionCreateResult>('session/create', p); }
  open(p: SessionOpenParams) { return this.request<SessionOpenResult>('session/open', p); }
  append(p: SessionAppendParams) { return this.request<SessionAppendResult>('session/append', p); }
  read(p: SessionReadParams) { return this.request<SessionReadResult>('session/read', p); }
  list(p: SessionListParams = {}) { return this.request<SessionListResult>('session/list', p); }
  close(sessionId: string) { return this.request<Record<string, never>>('session/close', { sessionId }); }
  update(p: SessionUpdateParams) { return this.request<SessionUpdateResult>('session/update', p); }
  search(p: SessionSearchParams) { return this.request<SessionSearchResult>('session/search', p); }
  allocateScratch(p: ToolAllocateScratchParams) { return this.request<ToolAllocateScratchResult>('tool/allocateScratch', p); }
  setState(sessionId: string, key: string, value: unknown) { return this.request<{ redactions?: unknown[] }>('state/set', { sessionId, key, value }); }
  getState(sessionId: string, key: string) { return this.request<{ value: unknown }>('state/get', { sessionId, key }).then((r) => r.value); }
  deleteState(sessionId: string, key: string) { return this.request<{ deleted: boolean }>('state/delete', { sessionId, key }).then((r) => r.deleted); }
  blobGet(p: BlobGetParams) { return this.request<BlobGetResult>('blob/get', p); }

  /** A whole blob, fetched chunk by chunk with blob/get. */
  async readBlob(sessionId: string, ref: string, chunk = 1 << 20): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let offset = 0; ;) {
      const r = await this.blobGet({ sessionId, ref, offset, length: chunk });
      const bytes = Buffer.from(r.dataBase64, 'base64');
      parts.push(bytes);
      offset += bytes.length;
      if (r.eof) return Buffer.concat(parts);
    }
  }

  /** shutdown, exit, and wait for the process to end. */
  async shutdown(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    await this.request('shutdown');
    this.notify('exit');
    return this.exited;
  }

  /** Closes stdin (EOF) and waits for the process to end. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return this.exited;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.kill(signal);
    return this.exited;
  }

  private send(message: unknown): void {
    this.child.stdin!.write(this.frame(message));
  }

  private onMessage(m: Record<string, unknown>): void {
    if (typeof m.method === 'string') {
      this.notifications.push({ method: m.method, params: m.params });
      return;
    }
    const waiter = this.pending.get(m.id as number);
    if (!waiter) return;
    this.pending.delete(m.id as number);
    const error = m.error as { code: number; message: string; data?: Record<string, unknown> } | undefined;
    if (error) waiter.reject(new SidecarError(error.code, error.message, error.data));
    else waiter.resolve(m.result);
  }

  private failAll(err: unknown): void {
    for (const w of this.pending.values()) w.reject(err);
    this.pending.clear();
  }
}
