import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, user } from './util.js';

/** §3: initialize, the gate before it, shutdown, exit and the exit codes. */
export const lifecycle: Scenario = {
  name: 'lifecycle',
  summary: 'initialize, version refusal, the gate, unknown methods, shutdown, exit codes, EOF',
  async run(t) {
    const p = t.spawn();
    await t.check('not-initialized', async () => expectError(await p.request('session/list', {}), -32002));
    await t.check('unsupported-version', async () => {
      const err = expectError(await p.request('initialize', { protocolVersion: 2 }, { invalid: true }), -31011, 'UnsupportedProtocolVersion');
      expectEqual(err.data, { kind: 'UnsupportedProtocolVersion', supported: [1], requested: 2 }, 'error data');
    });
    await t.check('initialize', async () => {
      const r = expectResult<Json>(await p.request('initialize', { protocolVersion: 1, clientInfo: { name: 'conformance' }, processId: process.pid }));
      expectEqual(r.protocolVersion, 1, 'protocolVersion');
      expect(typeof (r.store as Json | undefined)?.root === 'string', 'store.root is not a string');
      p.notify('initialized', {});
    });
    await t.check('initialize-twice', async () => expectError(await p.request('initialize', { protocolVersion: 1 }), -32600));
    await t.check('unknown-method', async () => expectError(await p.request('session/teleport', {}, { invalid: true }), -32601));
    await t.check('unknown-notification-ignored', async () => {
      const before = p.received.length;
      p.notify('$/setTrace', { value: 'off' });
      p.notify('vendor/somethingNew', {}, { invalid: true });
      expectResult(await p.request('session/list', {}));
      expectEqual(p.received.length, before + 1, 'messages received (only the list answer)');
    });
    await t.check('invalid-params', async () => {
      const err = expectError(await p.request('session/list', { limit: 0, bogus: 1 }, { invalid: true }), -32602, 'InvalidParams');
      expect(Array.isArray(err.data?.issues) && (err.data.issues as unknown[]).length > 0, 'data.issues is empty');
    });
    await t.check('optional-null-refused', async () => {
      // §7: an optional member is omitted, never null; null is not read as absent.
      const err = expectError(await p.request('session/list', { limit: null }, { invalid: true }), -32602, 'InvalidParams');
      expect((err.data?.issues as Array<{ path?: string }> | undefined)?.some((i) => i.path === 'limit') === true, 'the issue names limit');
    });
    await t.check('shutdown-then-refused', async () => {
      expectEqual(expectResult(await p.request('shutdown')), null, 'shutdown result');
      expectError(await p.request('session/list', {}), -32600);
    });
    await t.check('exit-after-shutdown-0', async () => {
      p.notify('exit');
      expectEqual((await p.within(p.exited, 'exit')).code, 0, 'exit code');
    });
    await t.check('exit-without-shutdown-1', async () => {
      const q = await t.started();
      q.notify('exit');
      expectEqual((await q.within(q.exited, 'exit')).code, 1, 'exit code');
    });
    await t.check('eof-answers-everything-then-0', async () => {
      const q = await t.started();
      const sessionId = await newSession(q);
      const answers = [1, 2, 3].map(() => q.request('session/append', { sessionId, records: [user('before EOF')] }));
      q.child.stdin!.end();
      for (const a of answers) expectResult(await a);
      expectEqual((await q.within(q.exited, 'exit')).code, 0, 'exit code');
    });
  },
};
