import type { Message } from 'vscode-jsonrpc';
import { ErrorKindCode, JsonRpcErrorCode } from '../../protocol/errors.js';
import { type Decoded, decodeMessage, type FrameProblem } from './decodeMessage.js';
import { sniffId } from './sniffId.js';

export type Framing = 'lsp' | 'ndjson';

export interface FrameSink {
  framing(f: Framing): void;
  /** A decoded message and the size of its frame body in bytes. */
  message(m: Message, bytes: number): void;
  problem(p: FrameProblem): void;
  /** The stream cannot be read on: say why on stderr and close. */
  fatal(reason: string): void;
}

const NL = 0x0a;
const SNIFF_BYTES = 4096;
const MAX_HEADER_BYTES = 8192;
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Turns input bytes into messages in either framing. No message larger than `max` is ever
 * buffered: its bytes are skipped as they arrive, and it is answered with PayloadTooLarge
 * when its id shows in its first bytes; otherwise the stream is closed.
 */
export class FrameDecoder {
  private mode: Framing | undefined;
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** An oversized message being discarded; `remaining` is Infinity for NDJSON (until the newline). */
  private skip: { remaining: number; sniff: Buffer[]; sniffed: number; decided: boolean } | undefined;
  private lspLength: number | undefined;
  private dead = false;

  constructor(
    framing: 'auto' | Framing,
    private readonly max: number,
    private readonly sink: FrameSink,
    /** Exact numbers (the server): see decodeMessage. A client reads plain JSON.parse values. */
    private readonly exactNumbers = true,
  ) {
    if (framing !== 'auto') this.mode = framing;
  }

  push(chunk: Buffer): void {
    if (this.dead) return;
    if (this.mode === undefined) {
      const first = this.detect(chunk);
      if (first === -1) return;
      chunk = chunk.subarray(first); // blank bytes before the first message are not part of it
    }
    if (this.mode === 'ndjson') this.pushNdjson(chunk);
    else this.pushLsp(chunk);
  }

  /** The first non-blank byte decides: `C`/`c` (Content-Length) is LSP, anything else NDJSON. Returns its index. */
  private detect(chunk: Buffer): number {
    const i = chunk.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== NL);
    if (i === -1) return -1;
    this.mode = chunk[i] === 0x43 || chunk[i] === 0x63 ? 'lsp' : 'ndjson';
    this.sink.framing(this.mode);
    return i;
  }

  private pushNdjson(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length && !this.dead) {
      const nl = chunk.indexOf(NL, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      from = nl === -1 ? chunk.length : nl + 1;
      if (this.skip) {
        this.feedSkip(piece, nl !== -1);
        continue;
      }
      if (this.partBytes + piece.length > this.max) {
        this.skip = { remaining: Infinity, sniff: [], sniffed: 0, decided: false };
        this.feedSkip(Buffer.concat([...this.takeParts(), piece]), nl !== -1);
        continue;
      }
      if (nl === -1) {
        this.parts.push(piece);
        this.partBytes += piece.length;
        continue;
      }
      const line = Buffer.concat([...this.takeParts(), piece]);
      if (line.some((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d)) this.emit(decodeMessage(line, this.exactNumbers), line.length);
    }
  }

  private pushLsp(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0 && !this.dead) {
      if (this.skip) {
        const n = Math.min(rest.length, this.skip.remaining);
        this.skip.remaining -= n;
        this.feedSkip(rest.subarray(0, n), this.skip.remaining === 0);
        rest = rest.subarray(n);
      } else if (this.lspLength === undefined) {
        rest = this.readHeader(rest);
      } else {
        const need = this.lspLength - this.partBytes;
        this.parts.push(rest.subarray(0, need));
        this.partBytes += Math.min(need, rest.length);
        rest = rest.subarray(need);
        if (this.partBytes === this.lspLength) {
          const length = this.lspLength;
          this.lspLength = undefined;
          this.emit(decodeMessage(Buffer.concat(this.takeParts()), this.exactNumbers), length);
        }
      }
    }
  }

  private readHeader(rest: Buffer): Buffer {
    const buffered = Buffer.concat([...this.takeParts(), rest]);
    const end = buffered.indexOf(HEADER_END);
    // The limit is on the header block itself, however it arrives: one write of 20 KB is no
    // different from many small ones.
    if (end > MAX_HEADER_BYTES) {
      this.die('LSP header too long or missing its blank line');
      return Buffer.alloc(0);
    }
    if (end === -1) {
      if (buffered.length > MAX_HEADER_BYTES) this.die('LSP header too long or missing its blank line');
      else this.parts.push(buffered);
      return Buffer.alloc(0);
    }
    const length = contentLength(buffered.toString('latin1', 0, end));
    if (length === undefined) {
      this.die('LSP header without a valid Content-Length');
      return Buffer.alloc(0);
    }
    const body = buffered.subarray(end + HEADER_END.length);
    if (length > this.max) this.skip = { remaining: length, sniff: [], sniffed: 0, decided: false };
    else if (length === 0) this.emit(decodeMessage(Buffer.alloc(0), this.exactNumbers), 0);
    else this.lspLength = length;
    return body;
  }

  /**
   * End of input. Bytes of a frame not yet complete (a header without its blank line, a body
   * shorter than its Content-Length, an oversized message still being skipped, an NDJSON line
   * without its newline that is not a whole JSON text) are a truncated frame: fatal (§2.5),
   * never silently dropped. A last NDJSON line that is a whole JSON text but lacks its newline
   * (`printf '%s'` of a request) is a complete frame: it is served.
   */
  end(): void {
    if (this.dead) return;
    const blank = (p: Buffer) => !p.some((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== NL);
    if (this.mode === 'ndjson' && this.skip === undefined && !this.parts.every(blank)) {
      const line = Buffer.concat(this.takeParts());
      const decoded = decodeMessage(line, this.exactNumbers);
      if (!('problem' in decoded) || decoded.problem.code !== JsonRpcErrorCode.ParseError) return this.emit(decoded, line.length);
      return this.die('the input ended inside a frame (truncated frame)');
    }
    const pending = this.skip !== undefined || this.lspLength !== undefined || !this.parts.every(blank);
    if (pending) this.die('the input ended inside a frame (truncated frame)');
  }

  /** Feeds bytes of an oversized message being discarded; only its first bytes are kept, to find its id. */
  private feedSkip(piece: Buffer, ended: boolean): void {
    const s = this.skip!;
    if (!s.decided && s.sniffed < SNIFF_BYTES) {
      const take = piece.subarray(0, SNIFF_BYTES - s.sniffed);
      s.sniff.push(Buffer.from(take));
      s.sniffed += take.length;
    }
    if (!s.decided && (s.sniffed >= SNIFF_BYTES || ended)) this.decideSkip();
    if (ended) this.skip = undefined;
  }

  private decideSkip(): void {
    const s = this.skip!;
    s.decided = true;
    const id = sniffId(Buffer.concat(s.sniff).toString('utf8'));
    if (id === undefined) return this.die(`a message larger than ${this.max} bytes, with no id in its first bytes`);
    this.sink.problem({
      id, code: ErrorKindCode.PayloadTooLarge,
      message: `message larger than the maximum of ${this.max} bytes`,
      data: { kind: 'PayloadTooLarge', maxMessageBytes: this.max },
    });
  }

  private takeParts(): Buffer[] {
    const p = this.parts;
    this.parts = [];
    this.partBytes = 0;
    return p;
  }

  private emit(d: Decoded, bytes: number): void {
    if ('message' in d) this.sink.message(d.message, bytes);
    else this.sink.problem(d.problem);
  }

  private die(reason: string): void {
    this.dead = true;
    this.parts = [];
    this.sink.fatal(reason);
  }
}

function contentLength(header: string): number | undefined {
  let length: number | undefined;
  for (const line of header.split('\r\n')) {
    const m = /^content-length:\s*(\d{1,15})\s*$/i.exec(line);
    if (m) length = Number(m[1]);
    else if (/^content-length:/i.test(line)) return undefined;
  }
  return length;
}
