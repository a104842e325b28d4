/**
 * The session-sidecar TypeScript client: `Client` (generated from protocol/meta.json, a typed
 * helper per method) over a `Transport`, and `spawnClient`, which starts the sidecar as a child
 * process and connects to its stdin/stdout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMAND_ENV, splitCommandLine } from './commandLine.js';
import { Client, PROTOCOL_VERSION } from './generated/methods.js';
import type { InitializeParams, InitializeResult } from './generated/types.js';
import { NotificationStream } from './notifications.js';
import { Transport, type TransportOptions } from './transport.js';
import type { Framing } from './framing.js';

export * from './generated/methods.js';
export type * from './generated/types.js';
export { COMMAND_ENV, splitCommandLine } from './commandLine.js';
export { ConnectionError, isErrorOf, SidecarError } from './errors.js';
export { type Framing, FrameReader, frame } from './framing.js';
export { type Notification, NotificationStream } from './notifications.js';
export { type Id, type Message, type Response, Transport, type TransportOptions } from './transport.js';

export interface SpawnOptions {
  /** The whole server command (default: see commandOf: the env var, this package's binary, PATH). */
  command?: string[];
  /** The store (`--store`): a directory or a postgres:// URL; ignored when `command` is given. */
  store?: string;
  /** More arguments after `serve` (e.g. `['--pg-schema', 's']`); ignored when `command` is given. */
  args?: string[];
  framing?: Framing;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How much of the server's stderr to keep, in characters (the last ones). */
  stderrTail?: number;
  parse?: TransportOptions['parse'];
  timeoutMs?: number;
  tap?: TransportOptions['tap'];
  onMalformed?: TransportOptions['onMalformed'];
}

/** A sidecar child process and the typed client connected to it. */
export class SidecarClient extends Client {
  private tail = '';
  /** The child's exit: its code, or the signal that ended it (both null if it never started). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly child: ChildProcess, readonly transport: Transport, private readonly tailSize: number) {
    super(transport);
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (this.tail = (this.tail + s).slice(-this.tailSize)));
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal }));
      child.on('error', () => resolve({ code: null, signal: null }));
    });
  }

  /** The last characters the server wrote to stderr (its log). */
  get stderr(): string {
    return this.tail;
  }

  /** `initialize` with this client's protocol version, then `initialized`. */
  async start(params: Partial<InitializeParams> = {}): Promise<InitializeResult> {
    const result = await this.initialize({ protocolVersion: PROTOCOL_VERSION, clientInfo: { name: 'session-sidecar-client' }, ...params });
    this.initialized({});
    return result;
  }

  /** Server notifications as an async iterator (bounded: see NotificationStream). */
  notifications(capacity?: number): NotificationStream {
    return new NotificationStream(this, capacity);
  }

  /** `shutdown`, `exit`, and the exit code. */
  async close(): Promise<number | null> {
    if (!this.transport.closed) {
      await this.shutdown();
      this.exit();
      this.child.stdin?.end();
    }
    return (await this.exited).code;
  }

  /** Kills the server (its whole process group). */
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
}

/**
 * The server: `command` if given; else `$SESSION_SIDECAR_COMMAND` (split as a POSIX shell would,
 * without expansions: commandLine.ts); else, when
 * this client is the one built into the session-sidecar package, that package's own binary;
 * else `session-sidecar` on PATH. Then `serve` and `args`.
 */
function commandOf(opts: SpawnOptions): string[] {
  if (opts.command) return opts.command;
  const line = process.env[COMMAND_ENV]?.trim();
  const own = fileURLToPath(new URL('../../../src/cli.js', import.meta.url));
  const base = line ? splitCommandLine(line) : fs.existsSync(own) ? [process.execPath, own] : ['session-sidecar'];
  return [...base, 'serve', ...(opts.store !== undefined ? ['--store', opts.store] : []), ...(opts.args ?? [])];
}

/** Starts the sidecar and connects to it (not yet initialized: call `start()`). */
export function spawnClient(opts: SpawnOptions = {}): SidecarClient {
  const framing = opts.framing ?? 'ndjson';
  const [cmd, ...args] = commandOf(opts);
  // Its own process group: `kill` reaches a server started through a shell or a proxy too.
  const child = spawn(cmd as string, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd, detached: true });
  child.stdin.on('error', () => {});
  const transport = new Transport({
    framing, input: child.stdout, output: child.stdin,
    ...(opts.parse ? { parse: opts.parse } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.tap ? { tap: opts.tap } : {}), ...(opts.onMalformed ? { onMalformed: opts.onMalformed } : {}),
  });
  child.on('error', (e) => transport.close(`cannot start ${cmd}: ${e.message}`));
  return new SidecarClient(child, transport, opts.stderrTail ?? 65536);
}

/** Starts the sidecar, connects and initializes it (`initialize` + `initialized`). */
export async function startClient(opts: SpawnOptions & { initialize?: Partial<InitializeParams> } = {}): Promise<SidecarClient> {
  const client = spawnClient(opts);
  try {
    await client.start(opts.initialize);
  } catch (e) {
    await client.kill();
    throw e;
  }
  return client;
}
