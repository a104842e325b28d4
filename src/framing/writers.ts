import type { Writable } from 'node:stream';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
import type { Framing } from './frameDecoder.js';

/**
 * A result whose JSON text is already known (session/read's records are stored as JSON text):
 * the writer splices it into the response instead of building and re-serializing objects.
 * `text` must be one valid JSON value. `toJSON` keeps any other serializer correct.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** The JSON text of a message; a RawJson result is spliced in as it is. */
export function serialize(msg: Message): string {
  const result = (msg as { result?: unknown }).result;
  if (!(result instanceof RawJson)) return JSON.stringify(msg);
  const { result: _raw, ...envelope } = msg as unknown as Record<string, unknown>;
  return `${JSON.stringify(envelope).slice(0, -1)},"result":${result.text}}`;
}

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
    const frame = this.framing === 'ndjson' ? `${body}\n` : `Content-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n${body}`;
    return new Promise((resolve, reject) => {
      this.output.write(frame, 'utf8', (err) => {
        if (!err) return resolve();
        this.fireError(err, msg);
        reject(err);
      });
    });
  }

  end(): void {}
}
