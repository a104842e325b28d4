import { describe, expect, it } from 'vitest';
import { parseFrames } from './frames.js';
import { FRAMINGS, SidecarError, spawnSidecar, startSidecar, rejection } from './harness.js';


const raw = (framing: 'lsp' | 'ndjson', body: string | Buffer) => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return framing === 'lsp' ? Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]) : Buffer.concat([b, Buffer.from('\n')]);
};

describe.each(FRAMINGS)('framing %s', (framing) => {
  it('answers malformed frames with -32700/-32600 and keeps serving; stdout holds frames only', async () => {
    const c = await startSidecar({ framing });
    const errors = () => parseFrames(Buffer.concat(c.stdout), framing).filter((f) => f.id === null);
    c.writeRaw(raw(framing, '{"jsonrpc":"2.0","id":1,'));                          // not JSON
    c.writeRaw(raw(framing, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])));              // not UTF-8
    c.writeRaw(raw(framing, '[{"jsonrpc":"2.0","id":2,"method":"session/list"}]')); // a batch
    c.writeRaw(raw(framing, '42'));                                                 // not an object
    c.writeRaw(raw(framing, '{"jsonrpc":"1.0","id":"v","method":"session/list"}')); // wrong version
    const wrongVersion = c.expectResponse('v');
    expect((await rejection(wrongVersion)).code).toBe(-32600);
    expect((await c.list()).sessions).toEqual([]);
    const codes = errors().map((f) => (f.error as { code: number }).code);
    expect(codes).toEqual([-32700, -32700, -32600, -32600]);
    await c.shutdown();
    expect(c.stderr).not.toContain('Unexpected token');
    expect(() => parseFrames(Buffer.concat(c.stdout), framing)).not.toThrow();
  });

  it('a request reusing the id of one in flight is refused, and exit still answers everything', async () => {
    const c = await startSidecar({ framing });
    const req = (title: string) => c.frame({ jsonrpc: '2.0', id: 'same', method: 'session/create', params: { title } });
    c.writeRaw(Buffer.concat([req('a'), req('b'), req('c')]));
    const { code } = await c.end();
    expect(code).toBe(0);
    const answers = parseFrames(Buffer.concat(c.stdout), framing).filter((f) => f.id === 'same');
    expect(answers).toHaveLength(3);
    expect(answers.filter((f) => f.result !== undefined).length).toBeGreaterThanOrEqual(1);
    for (const f of answers.filter((x) => x.error)) expect((f.error as { code: number }).code).toBe(-32600);
  });

  it('the ids 7 and "7" are two ids: both are answered, each with its own id and type', async () => {
    const c = await startSidecar({ framing });
    c.writeRaw(Buffer.concat([
      c.frame({ jsonrpc: '2.0', id: 7, method: 'session/create', params: { title: 'number' } }),
      c.frame({ jsonrpc: '2.0', id: '7', method: 'session/create', params: { title: 'string' } }),
      c.frame({ jsonrpc: '2.0', id: 's7', method: 'session/create', params: { title: 'prefixed' } }),
    ]));
    const { code } = await c.end();
    expect(code).toBe(0);
    const answers = parseFrames(Buffer.concat(c.stdout), framing).filter((f) => ['7', 's7'].includes(String(f.id)));
    expect(answers.map((f) => JSON.stringify(f.id)).sort()).toEqual(['7', '"7"', '"s7"'].sort()); // by JSON text: 7 and "7" sort apart
    for (const f of answers) expect(f.error).toBeUndefined();
  });

  it('"params": null is absent for methods whose params are optional (jsonrpc.el sends it)', async () => {
    const c = spawnSidecar({ framing });
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', method: 'initialized', params: null }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 2, method: 'session/list', params: null }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 3, method: 'session/read', params: null }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 4, method: 'shutdown', params: null }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', method: 'exit', params: null }));
    expect((await c.exited).code).toBe(0);
    const frames = parseFrames(Buffer.concat(c.stdout), framing);
    expect(frames.find((f) => f.id === 2)!.result).toEqual({ sessions: [] });
    expect((frames.find((f) => f.id === 3)!.error as { code: number }).code).toBe(-32600);
    expect(frames.find((f) => f.id === 4)).toEqual({ jsonrpc: '2.0', id: 4, result: null });
    expect(frames).toHaveLength(4);
  });

  it('a malformed notification is never answered (logged on stderr); an unknowable id still gets id null', async () => {
    const c = await startSidecar({ framing });
    c.writeRaw(c.frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: null } }));
    c.writeRaw(c.frame({ jsonrpc: '1.0', method: 'initialized' }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', method: 7 }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', method: 'session/list', params: 'x' }));
    c.writeRaw(raw(framing, '{"jsonrpc":"2.0","result":1}'));
    expect((await c.list()).sessions).toEqual([]);
    await c.shutdown();
    const frames = parseFrames(Buffer.concat(c.stdout), framing);
    expect(frames.filter((f) => f.id === null).map((f) => (f.error as { code: number }).code)).toEqual([-32600]);
    expect(c.stderr.match(/ignored a malformed notification/g)).toHaveLength(4);
  });

  it('--framing forces the framing; auto detects it from the first byte', async () => {
    const c = spawnSidecar({ framing, args: ['--framing', framing] });
    expect((await c.initialize()).protocolVersion).toBe(1);
    await c.shutdown();
    expect(parseFrames(Buffer.concat(c.stdout), framing)).toHaveLength(2);
  });

  it('an oversized message with a visible id gets PayloadTooLarge; the stream stays in sync', async () => {
    const c = await startSidecar({ framing, args: ['--max-message-bytes', '4096'] });
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'session/create', params: { title: 'x'.repeat(50_000) } });
    const answered = c.expectResponse('big');
    c.writeRaw(raw(framing, big));
    const err = await rejection(answered);
    expect(err).toMatchObject({ code: -31010, data: { kind: 'PayloadTooLarge', maxMessageBytes: 4096 } });
    expect((await c.create({ title: 'after' })).sessionId).toBeTruthy();
  });

  it('an oversized message whose id cannot be seen closes the connection cleanly with a stderr diagnostic', async () => {
    const c = await startSidecar({ framing, args: ['--max-message-bytes', '4096'] });
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'session/create', params: { title: 'x'.repeat(50_000) }, id: 'late' });
    c.writeRaw(raw(framing, big));
    const { code } = await c.exited;
    expect(code).toBe(1);
    expect(c.stderr).toContain('larger than 4096 bytes');
    expect(() => parseFrames(Buffer.concat(c.stdout), framing)).not.toThrow();
  });
});

describe('auto-detection', () => {
  it('skips blank bytes before the first LSP frame, in the same chunk', async () => {
    const c = spawnSidecar({ framing: 'lsp' });
    const init = c.frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
    const answered = c.expectResponse(1);
    c.writeRaw(Buffer.concat([Buffer.from('\r\n\n \n'), init]));
    expect(await answered).toMatchObject({ protocolVersion: 1 });
  });
});

describe('LSP header faults', () => {
  for (const [name, header] of [
    ['a negative Content-Length', 'Content-Length: -5\r\n\r\n'],
    ['a missing Content-Length', 'Content-Type: application/json\r\n\r\n{}'],
    ['a header that never ends', `Content-Length: 5${'x'.repeat(10_000)}`],
    ['a 20 KB header block arriving in one write', `Content-Length: 2\r\nX-Pad: ${'x'.repeat(20_000)}\r\n\r\n{}`],
  ] as const) {
    it(`${name}: diagnostic on stderr, clean close, nothing but frames on stdout`, async () => {
      const c = await startSidecar({ framing: 'lsp' });
      c.writeRaw(header);
      const { code } = await c.exited;
      expect(code).toBe(1);
      expect(c.stderr).toContain('closing the connection');
      expect(() => parseFrames(Buffer.concat(c.stdout), 'lsp')).not.toThrow();
    });
  }
});

describe.each(FRAMINGS)('truncated last frame (%s)', (framing) => {
  it('EOF inside a frame: exit 1, diagnostic on stderr, earlier requests answered', async () => {
    const c = await startSidecar({ framing });
    const listed = c.expectResponse('before');
    const whole = c.frame({ jsonrpc: '2.0', id: 'before', method: 'session/list' });
    const cut = c.frame({ jsonrpc: '2.0', id: 'cut', method: 'session/list' });
    c.writeRaw(Buffer.concat([whole, cut.subarray(0, cut.length - 5)]));
    await listed;
    c.child.stdin!.end();
    const { code } = await c.exited;
    expect(code).toBe(1);
    expect(c.stderr).toContain('closing the connection');
    expect(c.stderr).toContain('truncated frame');
    expect(() => parseFrames(Buffer.concat(c.stdout), framing)).not.toThrow();
  });
});
