import type { Writable } from 'node:stream';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
import type { Framing } from './frameDecoder.js';
import { parseExact, stringifyExact } from '../domain/exactJson.js';

/**
 * A result whose JSON is already known as UTF-8 bytes (session/read's records are stored as
 * JSON): the writer splices the parts into the response instead of building and re-serializing
 * objects. Their concatenation must be one valid JSON value without raw newlines (JSON.stringify
 * output is). `toJSON` keeps any other serializer correct.
 */
export class RawJson<T = unknown> {
  /** The value the bytes stand for, for the type checker only (handlers are typed by their result schema). */
  declare readonly shape?: T;

  constructor(
    readonly parts: Buffer[],
    /** Called once the parts have been written out (or the write failed): nothing reads them after. */
    readonly release?: () => void,
  ) {}

  toJSON(): T {
    return parseExact(Buffer.concat(this.parts).toString('utf8')) as T;
  }
}

/** The UTF-8 bytes of a message, in parts (a RawJson result's parts are spliced in, never copied). */
export function serialize(msg: Message): Buffer[] {
  const result = (msg as { result?: unknown }).result;
  if (!(result instanceof RawJson)) return [Buffer.from(stringifyExact(msg), 'utf8')];
  const { result: _raw, ...envelope } = msg as unknown as Record<string, unknown>;
  return [Buffer.from(`${stringifyExact(envelope).slice(0, -1)},"result":`), ...result.parts, CLOSE];
}

const CLOSE = Buffer.from('}');
const NEWLINE = Buffer.from('\n');

/**
 * Writes messages in one framing: NDJSON (one message per line: JSON.stringify never emits a raw
 * newline, and a spliced RawJson comes from JSON.stringify'd lines too) or LSP (`Content-Length`
 * in bytes, then the UTF-8 body — the header vscode-jsonrpc's StreamMessageWriter writes).
 */
export class FramingWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(
    private readonly output: Writable,
    private readonly framing: Framing,
  ) {
    super();
  }

  write(msg: Message): Promise<void> {
    const body = serialize(msg);
    const frame = this.framing === 'ndjson'
      ? [...body, NEWLINE]
      : [Buffer.from(`Content-Length: ${body.reduce((n, b) => n + b.length, 0)}\r\n\r\n`), ...body];
    // The parts of one frame are written back to back (the caller corks the stream for the tick,
    // so they leave in one writev); the stream keeps them in order with every other frame.
    const last = frame.pop() as Buffer;
    for (const part of frame) this.output.write(part);
    const result = (msg as { result?: unknown }).result;
    return new Promise((resolve, reject) => {
      this.output.write(last, (err) => {
        // the stream calls back once every part before `last` has gone out too (it keeps order)
        if (result instanceof RawJson) result.release?.();
        if (!err) return resolve();
        this.fireError(err, msg);
        reject(err);
      });
    });
  }

  end(): void {}
}
