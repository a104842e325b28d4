import type { Readable, Writable } from 'node:stream';
import {
  AbstractMessageReader, AbstractMessageWriter, type DataCallback, Disposable, type Message, type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import { JsonRpcErrorCode } from '../../protocol/errors.js';
import type { FrameProblem } from './decodeMessage.js';
import { type Framing, FrameDecoder } from './frameDecoder.js';
import { RequestLedger } from './ledger.js';
import { toConnectionId, toWireId } from './wireIds.js';
import { FramingWriter } from './writers.js';

export interface TransportOptions {
  framing: 'auto' | Framing;
  maxMessageBytes: number;
  /** Input is paused while requests in flight hold more bytes than this (default 256 MiB). */
  maxInFlightBytes?: number;
  /** A diagnostic for stderr; never given message content. */
  diagnostic: (line: string) => void;
}

/** Reads frames from a stream; problems are answered through `writer` directly. */
class FrameReader extends AbstractMessageReader implements MessageReader {
  constructor(
    private readonly input: Readable,
    private readonly decoder: (sink: DataCallback) => FrameDecoder,
  ) {
    super();
  }

  faulted = false;

  listen(callback: DataCallback): Disposable {
    const decoder = this.decoder(callback);
    const onData = (chunk: Buffer) => decoder.push(chunk);
    // A truncated last frame makes the decoder fatal, which closes through close(): once only.
    const onEnd = () => {
      decoder.end();
      if (!this.faulted) this.fireClose();
    };
    const onError = (err: Error) => this.fireError(err);
    this.input.on('data', onData);
    this.input.on('end', onEnd);
    this.input.on('error', onError);
    return Disposable.create(() => {
      this.input.off('data', onData);
      this.input.off('end', onEnd);
      this.input.off('error', onError);
    });
  }

  close(): void {
    this.faulted = true;
    this.input.pause();
    this.fireClose();
  }

  /** Backpressure: stop reading input while the server is this far behind, resume below half. */
  throttle(inFlightBytes: number, budget: number): void {
    if (this.faulted) return;
    if (inFlightBytes > budget && !this.input.isPaused()) this.input.pause();
    else if (inFlightBytes <= budget / 2 && this.input.isPaused()) this.input.resume();
  }
}

/** Writes in the framing the input turned out to use. Nothing is written before that is known. */
class FramedWriter extends AbstractMessageWriter implements MessageWriter {
  private target: MessageWriter | undefined;
  /** Set once the output failed (EPIPE: the client is gone): later frames are dropped. */
  broken = false;

  constructor(
    private readonly output: Writable,
    private readonly ledger: RequestLedger,
  ) {
    super();
  }

  use(framing: Framing): void {
    this.target = new FramingWriter(this.output, framing);
    this.target.onError((e) => {
      if (!this.broken) this.fireError(e[0], e[1], e[2]);
      this.broken = true;
    });
  }

  /** Frames from the connection; a response settles its request once written (or lost with the client). */
  write(connectionMsg: Message): Promise<void> {
    const isResponse = (connectionMsg as { method?: unknown }).method === undefined;
    const connectionId = (connectionMsg as { id?: unknown }).id;
    const settle = () => {
      if (isResponse) this.ledger.settle(connectionId);
    };
    // A response leaves with the id its request arrived with (see wireIds.ts).
    const msg = isResponse ? ({ ...connectionMsg, id: toWireId(connectionId) } as Message) : connectionMsg;
    return this.send(msg).then(settle, (err: unknown) => {
      settle();
      throw err;
    });
  }

  /** Answers a frame that never reached the connection (it is not in the ledger). */
  writeProblem(msg: Message): void {
    this.send(msg).catch(() => {});
  }

  private corked = false;

  private send(msg: Message): Promise<void> {
    if (this.broken) return Promise.resolve();
    if (!this.target) return Promise.reject(new Error('framing not yet known'));
    // Frames written in one tick leave in one write (writev): a group commit answers every
    // request of its batch at once, and one system call per answer cost ~30 µs each.
    if (!this.corked) {
      this.corked = true;
      this.output.cork();
      process.nextTick(() => {
        this.corked = false;
        this.output.uncork();
      });
    }
    return this.target.write(msg).catch((err: unknown) => {
      this.broken = true;
      throw err;
    });
  }

  end(): void {}
}

export interface Transport {
  reader: MessageReader;
  writer: MessageWriter;
  framing(): Framing | undefined;
  /** True when the input was closed because it could not be read on (not a plain EOF). */
  closedByFault(): boolean;
  /** Resolves once every request read so far has been answered. */
  allAnswered(): Promise<void>;
  /** Requests read and not yet answered. */
  pending(): number;
  /** True once an `exit` notification was read (the connection decides the exit code, not the EOF after it). */
  sawExit(): boolean;
  /** True once writing to the output failed: the client cannot have seen every answer. */
  outputBroken(): boolean;
}

export function createTransport(input: Readable, output: Writable, opts: TransportOptions): Transport {
  const ledger = new RequestLedger();
  const budget = opts.maxInFlightBytes ?? 256 << 20;
  let sawExit = false;
  ledger.onSettle = () => reader.throttle(ledger.bytes, budget);
  const writer = new FramedWriter(output, ledger);
  let framing: Framing | undefined = opts.framing === 'auto' ? undefined : opts.framing;
  if (framing) writer.use(framing);
  const answer = (p: FrameProblem) => {
    if (p.notification) return opts.diagnostic(`ignored a malformed notification: ${p.message}`);
    const error = { code: p.code, message: p.message, ...(p.data ? { data: p.data } : {}) };
    writer.writeProblem({ jsonrpc: '2.0', id: p.id, error } as Message);
  };
  const reader: FrameReader = new FrameReader(input, (callback) => new FrameDecoder(opts.framing, opts.maxMessageBytes, {
    framing: (f) => {
      framing = f;
      writer.use(f);
    },
    message: (m, bytes) => {
      const { id, method } = m as { id?: string | number; method?: unknown };
      if (method === 'exit' && id === undefined) sawExit = true;
      if (id !== undefined && method !== undefined) {
        const connectionId = toConnectionId(id);
        if (!ledger.admit(connectionId, bytes)) {
          return answer({ id, code: JsonRpcErrorCode.InvalidRequest, message: 'Invalid request: this id is already used by a request in flight' });
        }
        (m as unknown as { id: string | number }).id = connectionId;
        reader.throttle(ledger.bytes, budget);
      }
      const cancel = method === '$/cancelRequest' ? (m as { params?: { id?: unknown } }).params : undefined;
      if (cancel && (typeof cancel.id === 'string' || typeof cancel.id === 'number')) cancel.id = toConnectionId(cancel.id);
      callback(m);
    },
    problem: answer,
    fatal: (reason) => {
      opts.diagnostic(`closing the connection: ${reason}`);
      reader.close();
    },
  }));
  return {
    reader, writer, framing: () => framing, closedByFault: () => reader.faulted, sawExit: () => sawExit,
    outputBroken: () => writer.broken,
    allAnswered: () => ledger.drained(), pending: () => ledger.size,
  };
}
