import fs from 'node:fs';
import path from 'node:path';
import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, readAll } from './util.js';

/** An assistant message with one tool call whose `arguments` (a BlobRef position, §15.4) is `args`. */
const call = (args: unknown): Json => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'write_file', arguments: args }] } });
const argumentsOf = (r: Json): unknown => (((r.message as Json | undefined)?.toolCalls as Json[] | undefined)?.[0] as Json | undefined)?.arguments;

/** §15: runtime records and their counters, scratch directories, state, blobs. */
export const runtime: Scenario = {
  name: 'runtime',
  summary: 'api/tool records and counters (an unpaired response refused at records[i].direction), tool/allocateScratch, state/set|get|delete, blobs and blob/get, BlobRefs only at the schema\'s positions',
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
      const { firstSeq } = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [call(big)] });
      const stored = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: 1 })).records[0] as Json;
      const ref = argumentsOf(stored) as Json;
      expect(typeof ref?.$blob === 'string', 'a large string is not stored as a BlobRef');
      expectEqual(ref.bytes, 5000, 'BlobRef bytes');
      const chunk = expectResult<{ dataBase64: string; bytes: number; eof: boolean }>(await p.request('blob/get', { sessionId, ref: ref.$blob }));
      expectEqual([Buffer.from(chunk.dataBase64, 'base64').toString('utf8') === big, chunk.bytes, chunk.eof], [true, 5000, true], 'blob content');
      const part = await p.call<{ dataBase64: string; offset: number; eof: boolean }>('blob/get', { sessionId, ref: ref.$blob, offset: 4990, length: 100 });
      expectEqual([Buffer.from(part.dataBase64, 'base64').length, part.offset, part.eof], [10, 4990, true], 'a chunk at an offset');
      const inline = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: 1, inline: true })).records[0] as Json;
      expectEqual(argumentsOf(inline) === big, true, 'inline read gives the string back');
    });
    await t.check('blob-positions', async () => {
      // §15.4: a BlobRef stands only at the schema's BlobRef positions; a large string anywhere
      // else comes back inline, and $attach / $blob there are refused.
      const big = 'P'.repeat(5000);
      const elsewhere: Json[] = [
        { kind: 'event', type: 'upload', payload: { data: big, parts: [big] } },
        { kind: 'message', message: { role: 'tool', content: big, providerData: { text: big } } },
        { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c', name: big, arguments: '{}', extra: big }] } },
        { kind: 'api', direction: 'request', payload: { messages: [{ content: big }] } },
      ];
      const { firstSeq } = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: elsewhere });
      const back = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: firstSeq - 1, limit: elsewhere.length })).records;
      for (const [i, r] of back.entries()) {
        expect(!JSON.stringify(r).includes('"$blob"'), `a large string at a non-BlobRef position (record ${i}, ${String(elsewhere[i]?.kind)}) came back as a BlobRef`);
        const { seq: _seq, ts: _ts, apiSeq: _apiSeq, ...asSent } = r;
        expectEqual(asSent, elsewhere[i], `record ${i} reads back as appended`);
      }
      const made = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [call(big)] });
      const ref = argumentsOf((await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: made.firstSeq - 1, limit: 1 })).records[0] as Json) as Json;
      expect(typeof ref?.$blob === 'string', 'large tool-call arguments (a BlobRef position) are not stored as a BlobRef');
      for (const [what, record] of [
        ['an $attach in an event payload', { kind: 'event', type: 'shot', payload: { image: { $attach: 'abc', mediaType: 'image/png' } } }],
        ['a BlobRef in an event payload', { kind: 'event', type: 'again', payload: { image: ref } }],
        ['a BlobRef as message content', { kind: 'message', message: { role: 'user', content: ref } }],
      ] as const) {
        const err = expectError(await p.request('session/append', { sessionId, records: [record] }), -32602, 'InvalidParams');
        const at = ((err.data?.issues as Json[] | undefined)?.[0] as Json | undefined)?.path;
        expect(/^records\[0\]\.(payload|message)/.test(String(at)), `${what}: data.issues[0].path ${JSON.stringify(at)} does not name the member`);
      }
      const at = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [
        { kind: 'interruption', reason: 'cancelled', phase: 'providerStream', assistantText: big },
        { kind: 'toolStart', requestId: 'r9', tool: 'cat' },
      ] });
      const [interruption, started] = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: at.firstSeq - 1, limit: 2 })).records as [Json, Json];
      expect(typeof (interruption.assistantText as Json | undefined)?.$blob === 'string', 'a large interruption assistantText (a BlobRef position) is not stored as a BlobRef');
      const stream = await p.call<{ firstSeq: number }>('session/append', { sessionId, records: [{ kind: 'toolStream', toolSeq: started.toolSeq, stream: 'stdout', text: big }] });
      const [streamed] = (await p.call<{ records: Json[] }>('session/read', { sessionId, afterSeq: stream.firstSeq - 1, limit: 1 })).records as [Json];
      expect(typeof (streamed.text as Json | undefined)?.$blob === 'string', 'a large toolStream text (a BlobRef position) is not stored as a BlobRef');
      expectResult(await p.request('session/append', { sessionId, records: [call(ref)] })); // a BlobRef read back, at a BlobRef position
    });
  },
};
