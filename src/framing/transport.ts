import type { Readable, Writable } from 'node:stream';
import {
  AbstractMessageReader, AbstractMessageWriter, type DataCallback, Disposable, type Message, type MessageReader,
  type MessageWriter, StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import type { FrameProblem } from './decodeMessage.js';
import { type Framing, FrameDecoder } from './frameDecoder.js';

export interface TransportOptions {
  framing: 'auto' | Framing;
  maxMessageBytes: number;
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

  /** Requests handed to the connection: each must be answered before the server exits. */
  requests = 0;
  faulted = false;

  listen(callback: DataCallback): Disposable {
    const decoder = this.decoder((m) => {
      if ((m as { id?: unknown }).id !== undefined && (m as { method?: unknown }).method !== undefined) this.requests += 1;
      callback(m);
    });
    const onData = (chunk: Buffer) => decoder.push(chunk);
    const onEnd = () => this.fireClose();
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
}

/** Newline-delimited JSON: one message per line (JSON.stringify never emits a raw newline). */
class NdjsonWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly output: Writable) {
    super();
  }

  write(msg: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output.write(`${JSON.stringify(msg)}\n`, 'utf8', (err) => {
        if (!err) return resolve();
        this.fireError(err, msg);
        reject(err);
      });
    });
  }

  end(): void {}
}

/** Writes in the framing the input turned out to use. Nothing is written before that is known. */
class FramedWriter extends AbstractMessageWriter implements MessageWriter {
  private target: MessageWriter | undefined;
  /** Responses whose write has completed (or failed: the client is gone). */
  responses = 0;

  constructor(private readonly output: Writable) {
    super();
  }

  use(framing: Framing): void {
    this.target = framing === 'lsp' ? new StreamMessageWriter(this.output, 'utf-8') : new NdjsonWriter(this.output);
    this.target.onError((e) => {
      if (!this.broken) this.fireError(e[0], e[1], e[2]);
      this.broken = true;
    });
  }

  /** Set once the output failed (EPIPE: the client is gone): later frames are dropped. */
  private broken = false;

  write(msg: Message): Promise<void> {
    const isResponse = (msg as { method?: unknown }).method === undefined;
    const settled = () => {
      if (isResponse) this.responses += 1; // counted once on the wire (or lost with the client)
    };
    if (this.broken) return Promise.resolve(settled());
    if (!this.target) return Promise.reject(new Error('framing not yet known'));
    return this.target.write(msg).then(settled, (err: unknown) => {
      this.broken = true;
      settled();
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
}

export function createTransport(input: Readable, output: Writable, opts: TransportOptions): Transport {
  const writer = new FramedWriter(output);
  let framing: Framing | undefined = opts.framing === 'auto' ? undefined : opts.framing;
  if (framing) writer.use(framing);
  const answer = (p: FrameProblem) => {
    reader.requests += 1; // answered here, never handed to the connection
    const error = { code: p.code, message: p.message, ...(p.data ? { data: p.data } : {}) };
    writer.write({ jsonrpc: '2.0', id: p.id, error } as Message).catch(() => {});
  };
  const reader: FrameReader = new FrameReader(input, (callback) => new FrameDecoder(opts.framing, opts.maxMessageBytes, {
    framing: (f) => {
      framing = f;
      writer.use(f);
    },
    message: callback,
    problem: answer,
    fatal: (reason) => {
      opts.diagnostic(`closing the connection: ${reason}`);
      reader.close();
    },
  }));
  const allAnswered = async () => {
    while (writer.responses < reader.requests) await new Promise((r) => setTimeout(r, 2));
  };
  return { reader, writer, framing: () => framing, closedByFault: () => reader.faulted, allAnswered };
}
