import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, type Message } from 'vscode-jsonrpc/node';
import { libraryLogger, type Logger } from '../log.js';
import type { SessionStore } from '../domain/types.js';
import { cancelled, Dispatcher } from './dispatch.js';
import type { Framing } from '../framing/frameDecoder.js';
import { createTransport } from '../framing/transport.js';
import { sessionHandlers } from './handlers/session.js';
import { lineageHandlers } from './handlers/lineage.js';
import { subscriptionHandlers } from './handlers/subscribe.js';
import { turnHandlers } from './handlers/turn.js';
import { runtimeHandlers } from './handlers/runtime.js';
import { historyHandlers } from './handlers/history.js';
import { Lifecycle } from './lifecycle.js';

export interface ServerOptions {
  store: SessionStore;
  input: Readable;
  output: Writable;
  framing: 'auto' | Framing;
  maxMessageBytes: number;
  log: Logger;
  serverInfo: { name: string; version: string };
  parentPollMs?: number;
}

export interface RunningServer {
  /** Resolves with the process exit code once every request is answered and the store is closed. */
  exited: Promise<number>;
  /** Begins an orderly stop (signal, broken pipe). */
  stop(code: number, why: string): void;
}

/** Wires a store to a JSON-RPC connection over a pair of streams. */
export function startServer(opts: ServerOptions): RunningServer {
  const { store, log } = opts;
  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  let stopping = false;
  const stop = (code: number, why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`stopping: ${why}`);
    // A client that could not read every answer did not see a clean end: exit 1 then.
    void drainAndClose().then(() => resolveExit(transport.outputBroken() ? 1 : code), () => resolveExit(1));
  };

  const transport = createTransport(opts.input, opts.output, {
    framing: opts.framing,
    maxMessageBytes: opts.maxMessageBytes,
    diagnostic: (line) => log.error(line),
  });
  store.setRequestsWaiting?.(() => transport.pending());
  const lifecycle = new Lifecycle({ ...opts, finish: stop });
  let connection: ReturnType<typeof createMessageConnection> | undefined;
  const subscriptions = subscriptionHandlers(store, (method, params) => connection?.sendNotification(method, params) ?? Promise.resolve());
  const dispatcher = new Dispatcher(
    [...lifecycle.handlers(), ...sessionHandlers(store), ...turnHandlers(store), ...lineageHandlers(store), ...historyHandlers(store), ...runtimeHandlers(store), ...subscriptions.handlers],
    lifecycle.gate, log, (t, extra) => store.scrub(t, extra),
  );
  connection = createMessageConnection(transport.reader, transport.writer, libraryLogger(log), {
    connectionStrategy: {
      // A request cancelled before it was dispatched is answered -32800 and never runs.
      cancelUndispatched: (message: Message) => ({ jsonrpc: '2.0', id: (message as unknown as { id: number | string }).id, error: cancelled().toJson() }),
    },
  });
  connection.onRequest((method, params, token) => dispatcher.request(method, params, token));
  connection.onNotification((method) => lifecycle.notification(method));
  connection.onClose(() => {
    if (!transport.sawExit()) stop(transport.closedByFault() ? 1 : 0, 'input closed');
  });
  connection.onError(() => stop(1, 'the output is closed (the client is gone)'));
  opts.output.on('error', () => stop(1, 'the output is closed (the client is gone)'));
  connection.listen();

  async function drainAndClose(): Promise<void> {
    // Requests already read are answered before the store closes (appends finish durably).
    await untilAnswered();
    subscriptions.stopAll();
    lifecycle.dispose();
    await store.closeAll();
    connection?.dispose();
  }

  /** Waits for every request read to be answered; gives up only if none can progress any more. */
  async function untilAnswered(): Promise<void> {
    let idleSince: number | undefined;
    while (transport.pending() > 0) {
      const done = await Promise.race([transport.allAnswered().then(() => true), sleep(50).then(() => false)]);
      if (done) return;
      if (dispatcher.busy) idleSince = undefined;
      else if (Date.now() - (idleSince ??= Date.now()) > STALL_MS) {
        log.warn(`exiting with ${transport.pending()} request(s) that can no longer be answered`);
        return;
      }
    }
  }

  return { exited, stop };
}

const STALL_MS = 2000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
