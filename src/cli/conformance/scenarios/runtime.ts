import fs from 'node:fs';
import path from 'node:path';
import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, readAll } from './util.js';

/** §15: runtime records and their counters, scratch directories, state, blobs. */
export const runtime: Scenario = {
  name: 'runtime',
  summary: 'api/tool records and counters (an unpaired response refused at records[i].direction), tool/allocateScratch, state/set|get|delete, blobs and blob/get',
  async run(t) {
    const p = await t.started();
    const sessionId = await newSession(p, { blobThreshold: 1024 });
    await t.check('api-pairs', async () => {
      await p.call('session/append', { sessionId, records: [{ kind: 'api', direction: 'request', payload: {} }, { kind: 'api', direction: 'response', payload: {} }, { kind: 'api', direction: 'request', payload: {} }] });
      expectEqual((await readAll(p, sessionId, { kinds: ['api'] })).map((r) => r.apiSeq), [1, 1, 2], 'apiSeq');
    });
    await t.check('api-unpaired-path', async () => {
      // §15.1: refused with -32602, its path in §6.1's grammar (records[i].member), nothing written
      const fresh = await newSession(p);
      const e = expectError(await p.request('session/append', { sessionId: fresh, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }, { kind: 'api', direction: 'response', payload: {} }] }), -32602, 'InvalidParams');
      expectEqual(((e.data as Json).issues as Json[]).map((i) => i.path), ['records[1].direction'], 'issue paths');
      expectEqual((await readAll(p, fresh)).length, 0, 'records written');
    });
    let toolSeq = 0;
    await t.check('allocateScratch', async () => {
      const r = expectResult<{ toolSeq: number; dir: string; tmpDir: string }>(await p.request('tool/allocateScratch', { sessionId, requestId: 'r1' }));
      toolSeq = r.toolSeq;
      expectEqual(toolSeq, 1, 'toolSeq');
      expect(path.isAbsolute(r.dir) && fs.statSync(r.dir).isDirectory(), 'dir is not an existing directory');
      expect(fs.statSync(r.tmpDir).isDirectory() && r.tmpDir.startsWith(r.dir), 'tmpDir is not a directory inside dir');
    });
    await t.check('tool-records', async () => {
      await p.call('session/append', {
        sessionId, records: [
          { kind: 'toolStart', toolSeq, requestId: 'r1', tool: 'bash' },
          { kind: 'toolStream', toolSeq, stream: 'stderr', dataBase64: 'AAEC' },
          { kind: 'toolFinish', toolSeq, requestId: 'r1', success: false, exitCode: 2 },
          { kind: 'toolStart', requestId: 'r2', tool: 'grep' },
        ],
      });
      const tools = await readAll(p, sessionId, { kinds: ['toolStart', 'toolStream', 'toolFinish'] });
      expectEqual(tools.map((r) => [r.kind, r.toolSeq]), [['toolStart', 1], ['toolStream', 1], ['toolFinish', 1], ['toolStart', 2]], 'kinds and toolSeqs');
    });
    await t.check('state', async () => {
      expectEqual(expectResult(await p.request('state/get', { sessionId, key: 'plan' })), { value: null }, 'unset value');
      expectResult(await p.request('state/set', { sessionId, key: 'plan', value: { steps: [1, 2] } }));
      expectEqual(await p.call('state/get', { sessionId, key: 'plan' }), { value: { steps: [1, 2] } }, 'value');
      expectEqual(await p.call('state/delete', { sessionId, key: 'plan' }), { deleted: true }, 'delete');
      expectEqual(await p.call('state/delete', { sessionId, key: 'plan' }), { deleted: false }, 'second delete');
      expectError(await p.request('state/set', { sessionId, key: '../x', value: 1 }), -32602, 'InvalidParams');
    });
    await t.check('blobs', async () => {
      const big = 'B'.repeat(5000);
      const { firstSeq } = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [{ kind: 'message', message: { role: 'tool', toolCallId: 'c', content: big } }] });
      const stored = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: 1 })).records[0] as Json;
      const ref = (stored.message as Json).content as Json;
      expect(typeof ref?.$blob === 'string', 'a large string is not stored as a BlobRef');
      expectEqual(ref.bytes, 5000, 'BlobRef bytes');
      const chunk = expectResult<{ dataBase64: string; bytes: number; eof: boolean }>(await p.request('blob/get', { sessionId, ref: ref.$blob }));
      expectEqual([Buffer.from(chunk.dataBase64, 'base64').toString('utf8') === big, chunk.bytes, chunk.eof], [true, 5000, true], 'blob content');
      const part = await p.call<{ dataBase64: string; offset: number; eof: boolean }>('blob/get', { sessionId, ref: ref.$blob, offset: 4990, length: 100 });
      expectEqual([Buffer.from(part.dataBase64, 'base64').length, part.offset, part.eof], [10, 4990, true], 'a chunk at an offset');
      const inline = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: 1, inline: true })).records[0] as Json;
      expectEqual(((inline.message as Json).content as string) === big, true, 'inline read gives the string back');
    });
  },
};
