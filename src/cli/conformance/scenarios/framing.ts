import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';

/** §2: both framings, their edge cases, malformed input, the size limit. */
export const framing: Scenario = {
  name: 'framing',
  summary: 'framings, malformed messages, notifications never answered, ids, params null, size limit',
  async run(t) {
    const p = t.spawn();
    let init: Json = {};
    await t.check('initialize', async () => {
      init = await p.initialize();
    });
    const nullAnswers = () => p.received.filter((m) => m.id === null);
    const lsp = t.framing === 'lsp';
    await t.check('header-variants', async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 'hv', method: 'session/list', params: {} });
      const answer = p.expect('hv', 'session/list');
      p.writeRaw(lsp
        ? `content-length: ${Buffer.byteLength(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body}`
        : `${body}\r\n`);
      expectResult(await answer);
    });
    const malformed: Array<[string, string | Buffer, number]> = [
      ['parse-error', '{"jsonrpc":"2.0","id":1,', -32700],
      ['not-utf8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), -32700],
      ['batch', '[{"jsonrpc":"2.0","id":2,"method":"session/list"}]', -32600],
      ['not-an-object', '42', -32600],
    ];
    for (const [name, body, code] of malformed) {
      await t.check(name, async () => {
        const before = nullAnswers().length;
        p.writeRaw(Buffer.isBuffer(body) ? frameBytes(lsp, body) : p.frame(body));
        await p.until(() => nullAnswers().length > before, `the answer (id null) to ${name}`);
        expectEqual((nullAnswers()[before]!.error as Json).code, code, 'error code');
      });
    }
    await t.check('wrong-jsonrpc-version', async () => {
      const a = p.expect('v', 'session/list');
      p.writeRaw(p.frame('{"jsonrpc":"1.0","id":"v","method":"session/list"}'));
      expectError(await a, -32600);
    });
    await t.check('malformed-notification-unanswered', async () => {
      const before = nullAnswers().length;
      p.notify('$/cancelRequest', { id: null }, { invalid: true });
      p.writeRaw(p.frame('{"jsonrpc":"1.0","method":"initialized"}'));
      p.writeRaw(p.frame('{"jsonrpc":"2.0","method":"session/list","params":"x"}'));
      expectResult(await p.request('session/list', {}));
      expectEqual(nullAnswers().length, before, 'answers with id null after malformed notifications');
    });
    await t.check('ids-7-and-"7"-distinct', async () => {
      const a = p.expect(7, 'session/list');
      const b = p.expect('7', 'session/list');
      p.writeRaw(Buffer.concat([p.frame({ jsonrpc: '2.0', id: 7, method: 'session/list', params: {} }), p.frame({ jsonrpc: '2.0', id: '7', method: 'session/list', params: {} })]));
      expectResult(await a);
      expectResult(await b);
    });
    await t.check('params-null-when-optional', async () => {
      expectResult(await p.request('session/list', null, { invalid: true }));
    });
    await t.check('size-limit', async () => {
      const max = Number((init.capabilities as Json | undefined)?.maxMessageBytes);
      expect(Number.isSafeInteger(max) && max > 0, 'capabilities.maxMessageBytes is not a positive integer');
      if (max > 64 << 20) throw new Error(`maxMessageBytes ${max} is too large to test`);
      const head = '{"jsonrpc":"2.0","id":"big","method":"session/create","params":{"title":"';
      const body = `${head}${'x'.repeat(max + 1 - head.length - 3)}"}}`;
      const a = p.expect('big', 'session/create');
      p.writeRaw(p.frame(body));
      const err = expectError(await a, -31010, 'PayloadTooLarge');
      expectEqual(err.data?.maxMessageBytes, max, 'data.maxMessageBytes');
      expectResult(await p.request('session/list', {}));
    });
    await t.check('stdout-holds-frames-only', async () => {
      await p.shutdown();
      expectEqual(p.leftover(), 0, 'bytes after the last whole frame');
    });
  },
};

function frameBytes(lsp: boolean, body: Buffer): Buffer {
  return lsp ? Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]) : Buffer.concat([body, Buffer.from('\n')]);
}
