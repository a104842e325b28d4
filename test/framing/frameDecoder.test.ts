import { describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../src/framing/frameDecoder.js';

function decoder(framing: 'lsp' | 'ndjson') {
  const seen = { messages: 0, fatal: [] as string[] };
  const d = new FrameDecoder(framing, 1 << 20, {
    framing: () => {}, message: () => { seen.messages++; }, problem: () => {}, fatal: (r) => { seen.fatal.push(r); },
  });
  return { d, seen };
}

describe('FrameDecoder header limit and end of input', () => {
  it('a header block over 8 KiB is fatal whether it arrives in one chunk or many', () => {
    const header = Buffer.from(`Content-Length: 2\r\nX-Pad: ${'x'.repeat(20_000)}\r\n\r\n{}`);
    const one = decoder('lsp');
    one.d.push(header);
    expect(one.seen.fatal).toHaveLength(1);
    const many = decoder('lsp');
    for (let i = 0; i < header.length; i += 100) many.d.push(header.subarray(i, i + 100));
    expect(many.seen.fatal).toHaveLength(1);
    expect(one.seen.messages + many.seen.messages).toBe(0);
  });

  it('end() inside a frame is fatal; between frames (or after blank bytes) it is not', () => {
    const body = '{"jsonrpc":"2.0","method":"x"}';
    const lsp = decoder('lsp');
    lsp.d.push(Buffer.from(`Content-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`));
    lsp.d.end();
    expect(lsp.seen.fatal[0]).toContain('truncated frame');
    const nd = decoder('ndjson');
    nd.d.push(Buffer.from(`${body}\n${body.slice(0, 5)}`));
    nd.d.end();
    expect(nd.seen).toMatchObject({ messages: 1 });
    expect(nd.seen.fatal).toHaveLength(1);
    const clean = decoder('ndjson');
    clean.d.push(Buffer.from(`${body}\n \r`));
    clean.d.end();
    expect(clean.seen).toEqual({ messages: 1, fatal: [] });
  });

  it('end() after a last NDJSON line that is a whole JSON text without its newline serves it; a cut one is fatal', () => {
    const body = '{"jsonrpc":"2.0","method":"x"}';
    const whole = decoder('ndjson');
    whole.d.push(Buffer.from(`${body}\n${body}`));
    whole.d.end();
    expect(whole.seen).toEqual({ messages: 2, fatal: [] });
    const cut = decoder('ndjson');
    cut.d.push(Buffer.from(body.slice(0, -1)));
    cut.d.end();
    expect(cut.seen.messages).toBe(0);
    expect(cut.seen.fatal[0]).toContain('truncated frame');
  });
});
