/**
 * The two framings of protocol §2: LSP's `Content-Length` header frames and NDJSON lines. A
 * reader takes bytes as they arrive and yields whole message bodies; malformed server output
 * is reported, never guessed at.
 */
export type Framing = 'lsp' | 'ndjson';

/** Longest LSP header block the client accepts (as the server does, §2.5). */
const MAX_HEADER = 8192;

export function frame(framing: Framing, body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  return framing === 'lsp'
    ? Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes])
    : Buffer.concat([bytes, Buffer.from('\n')]);
}

export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  constructor(
    private readonly framing: Framing,
    private readonly onBody: (body: string) => void,
    private readonly onMalformed: (why: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const body = this.framing === 'lsp' ? this.takeLsp() : this.takeLine();
      if (body === undefined) return;
      this.onBody(body);
    }
  }

  /** Bytes received that are not (yet) a whole frame. */
  get pending(): number {
    return this.buf.length;
  }

  private takeLine(): string | undefined {
    const nl = this.buf.indexOf(0x0a);
    if (nl === -1) return undefined;
    const line = this.buf.toString('utf8', 0, nl);
    this.buf = this.buf.subarray(nl + 1);
    return line.trim() === '' ? this.takeLine() : line;
  }

  private takeLsp(): string | undefined {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end === -1) {
      if (this.buf.length > MAX_HEADER) this.fail('an LSP header longer than 8 KiB');
      return undefined;
    }
    const m = /^Content-Length: *(\d+) *$/im.exec(this.buf.toString('ascii', 0, end));
    if (!m || end > MAX_HEADER) {
      this.fail(m ? 'an LSP header longer than 8 KiB' : 'an LSP header without Content-Length');
      return undefined;
    }
    const start = end + 4;
    const len = Number(m[1]);
    if (this.buf.length < start + len) return undefined;
    const body = this.buf.toString('utf8', start, start + len);
    this.buf = this.buf.subarray(start + len);
    return body;
  }

  private fail(why: string): void {
    this.buf = Buffer.alloc(0);
    this.onMalformed(why);
  }
}
