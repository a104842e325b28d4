import type { ChildProcess } from 'node:child_process';
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
 * The server under test as a scenario sees it: requests and their answers as received, raw
 * bytes for malformed input, every message the server sent. `PipePeer` (below) is the suite's
 * own byte-level client; a client library under test provides another (`RunOptions.peer`).
 */
export interface Peer {
  readonly child: ChildProcess;
  /** Every message the server sent, in order. */
  readonly received: Json[];
  readonly stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  frame(msg: unknown): Buffer;
  /** Bytes as they are: the wire schema does not see them (scenarios send malformed input on purpose). */
  writeRaw(bytes: Buffer | string): void;
  /** A request; `invalid` marks params sent wrong on purpose (not checked against the schema). */
  request(method: string, params?: unknown, opts?: { id?: Id; invalid?: boolean }): Promise<Answer>;
  /** The answer to a request sent with writeRaw under `id`. */
  expect(id: Id, method: string): Promise<Answer>;
  notify(method: string, params?: unknown, opts?: { invalid?: boolean }): void;
  kill(signal?: NodeJS.Signals): Promise<unknown>;
  /** Bytes the server wrote that are not (yet) a whole frame. */
  leftover(): number;
  /** The result of a request that must succeed. */
  call<T = Json>(method: string, params?: unknown): Promise<T>;
  initialize(params?: Json): Promise<Json>;
  /** shutdown, exit, and the exit code. */
  shutdown(): Promise<number | null>;
  /** Server notifications received so far with this method. */
  notifications(method: string): Json[];
  /** Waits until `test` holds over the messages received (or the timeout). */
  until(test: () => boolean, what: string): Promise<void>;
  within<T>(p: Promise<T>, what: string): Promise<T>;
}

/** Makes the peer a scenario talks to (the suite's PipePeer unless a run says otherwise). */
export type PeerFactory = (opts: PeerOptions) => Peer;

/** What every peer does the same way, on top of request, notify and what it received. */
export abstract class PeerBase {
  abstract readonly child: ChildProcess;
  abstract readonly received: Json[];
  abstract readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  abstract request(method: string, params?: unknown, opts?: { id?: Id; invalid?: boolean }): Promise<Answer>;
  abstract notify(method: string, params?: unknown, opts?: { invalid?: boolean }): void;
  protected readonly waiters: Array<() => void> = [];

  constructor(protected readonly opts: PeerOptions) {}

  async call<T = Json>(method: string, params?: unknown): Promise<T> {
    const a = await this.request(method, params);
    if (a.error) throw new Error(`${method} failed: ${a.error.code} ${a.error.message}`);
    return a.result as T;
  }

  async initialize(params: Json = {}): Promise<Json> {
    const r = await this.call('initialize', { protocolVersion: 1, clientInfo: { name: 'session-sidecar conformance' }, ...params });
    this.notify('initialized', {});
    return r;
  }

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

  notifications(method: string): Json[] {
    return this.received.filter((m) => m.method === method && m.id === undefined);
  }

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

  /** Wakes `until` after new messages. */
  protected wake(): void {
    this.waiters.splice(0).forEach((w) => w());
  }
}

