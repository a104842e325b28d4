import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Message } from 'vscode-jsonrpc/node';
import { FramingWriter, RawJson, serialize } from '../../src/framing/writers.js';

const raw = new RawJson([Buffer.from('{"records":[{"text":"ünï 😀"}'), Buffer.from(',{"n":2}'), Buffer.from('],"lastSeq":2}')]);
const response = { jsonrpc: '2.0', id: 'a"b', result: raw } as unknown as Message;

function written(framing: 'ndjson' | 'lsp', msgs: Message[]): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const w = new FramingWriter(out, framing);
  return Promise.all(msgs.map((m) => w.write(m))).then(() => Buffer.concat(chunks));
}

describe('frame writers', () => {
  it('splice a RawJson result byte for byte into the response; any other serializer sees the same value', () => {
    const text = Buffer.concat(serialize(response)).toString('utf8');
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 'a"b', result: { records: [{ text: 'ünï 😀' }, { n: 2 }], lastSeq: 2 } });
    expect(JSON.parse(JSON.stringify(response))).toEqual(JSON.parse(text)); // toJSON
  });

  it('NDJSON: one line per message; LSP: Content-Length in bytes, frames in order', async () => {
    const plain = { jsonrpc: '2.0', id: 1, result: { ok: 'é' } } as unknown as Message;
    const nd = (await written('ndjson', [response, plain])).toString('utf8').split('\n');
    expect(nd).toHaveLength(3);
    expect(JSON.parse(nd[0] as string).result.lastSeq).toBe(2);
    expect(JSON.parse(nd[1] as string)).toEqual(plain);
    const lsp = await written('lsp', [response, plain]);
    let at = 0;
    const bodies: unknown[] = [];
    while (at < lsp.length) {
      const headerEnd = lsp.indexOf('\r\n\r\n', at);
      const length = Number(/^Content-Length: (\d+)$/.exec(lsp.toString('latin1', at, headerEnd))?.[1]);
      bodies.push(JSON.parse(lsp.toString('utf8', headerEnd + 4, headerEnd + 4 + length)));
      at = headerEnd + 4 + length;
    }
    expect(bodies).toEqual([JSON.parse(Buffer.concat(serialize(response)).toString('utf8')), plain]);
  });
});
