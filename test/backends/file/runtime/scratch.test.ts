import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers.js';
import { nodeFs } from '../../../../src/durable/fsLayer.js';
import { faultFs, modeOf, store, storeError } from '../storeHelpers.js';

const finish = (toolSeq: number, success: boolean) => ({ kind: 'toolFinish', toolSeq, requestId: 'r', success });

describe('tool/allocateScratch', () => {
  it('creates private tool-NNNNNN directories with tmp/ inside, whose toolSeq a toolStart then uses', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ keepScratch: 'always' });
    const a = await s.allocateScratch(sessionId, 'r1');
    const b = await s.allocateScratch(sessionId, 'r2');
    expect([a.toolSeq, b.toolSeq]).toEqual([1, 2]);
    expect(a.dir).toBe(path.join(root, 'sessions', sessionId, 'scratch', 'tool-000001'));
    expect(a.tmpDir).toBe(path.join(a.dir, 'tmp'));
    expect(modeOf(a.dir)).toBe(0o700);
    expect(fs.readdirSync(a.tmpDir)).toEqual([]);
    // started out of order; a toolStart without toolSeq never takes an allocated one
    await s.append(sessionId, [
      { kind: 'toolStart', toolSeq: 2, requestId: 'r2', tool: 't' },
      { kind: 'toolStart', toolSeq: 1, requestId: 'r1', tool: 't' },
      { kind: 'toolStart', requestId: 'r3', tool: 't' },
    ]);
    await storeError(s.append(sessionId, [{ kind: 'toolStart', toolSeq: 1, requestId: 'r1', tool: 't' }]), 'InvalidArgument');
    expect((await s.read(sessionId)).records.map((r) => r.toolSeq)).toEqual([2, 1, 3]);
    expect((await s.allocateScratch(sessionId, 'r4')).toolSeq).toBe(4);
    await s.closeAll();
  });

  it('continues the sequence past directories a crashed run left behind', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ keepScratch: 'always' });
    await s.allocateScratch(sessionId, 'r');
    await s.allocateScratch(sessionId, 'r');
    s.abandon(); // killed: toolSeqs 1 and 2 were handed out but never started
    fs.mkdirSync(path.join(root, 'sessions', sessionId, 'scratch', 'tool-000007'), { mode: 0o700 });
    const t = store(root);
    await t.open(sessionId, 'write');
    expect((await t.allocateScratch(sessionId, 'r')).toolSeq).toBe(8);
    await t.append(sessionId, [{ kind: 'toolStart', requestId: 'x', tool: 't' }]);
    expect((await t.read(sessionId)).records[0]?.toolSeq).toBe(9);
    await t.closeAll();
  });

  it('removes directories on close as keepScratch says (session default, per-call override)', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ keepScratch: 'onFailure' });
    const ok = await s.allocateScratch(sessionId, 'r');
    const failed = await s.allocateScratch(sessionId, 'r');
    const unfinished = await s.allocateScratch(sessionId, 'r');
    const always = await s.allocateScratch(sessionId, 'r', 'always');
    const never = await s.allocateScratch(sessionId, 'r', 'never');
    const starts = [ok, failed, unfinished, always, never].map((x) => ({ kind: 'toolStart', toolSeq: x.toolSeq, requestId: 'r', tool: 't' }));
    await s.append(sessionId, [...starts, finish(ok.toolSeq, true), finish(failed.toolSeq, false), finish(never.toolSeq, false)]);
    fs.writeFileSync(path.join(failed.dir, 'out.txt'), 'evidence');
    await s.close(sessionId);
    const exists = (d: string) => fs.existsSync(d);
    expect([ok, failed, unfinished, always, never].map((x) => exists(x.dir))).toEqual([false, true, true, true, false]);
  });

  it('a toolSeq handed out and never started stays handed out after close removed its directory (torture found it reissued)', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ keepScratch: 'never' });
    const a = await s.allocateScratch(sessionId, 'r1');
    const b = await s.allocateScratch(sessionId, 'r2');
    await s.close(sessionId); // both directories removed: never started, nothing in the journal
    expect(fs.existsSync(a.dir) || fs.existsSync(b.dir)).toBe(false);
    const issued = path.join(root, 'sessions', sessionId, 'scratch', 'issued.json');
    expect(modeOf(issued)).toBe(0o600);
    await s.open(sessionId, 'write');
    expect((await s.allocateScratch(sessionId, 'r3')).toolSeq).toBe(3);
    await s.close(sessionId);
    const t = store(root); // another process, after a crash or a restart
    await t.open(sessionId, 'write');
    expect((await t.allocateScratch(sessionId, 'r4')).toolSeq).toBe(4);
    await t.append(sessionId, [{ kind: 'toolStart', requestId: 'x', tool: 't' }]);
    expect((await t.read(sessionId)).records[0]?.toolSeq).toBe(5);
    await t.closeAll();
  });

  it('needs the session open for writing', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.closeAll();
    await storeError(s.allocateScratch(sessionId, 'r'), 'ReadOnly');
    await storeError(s.allocateScratch('nope', 'r'), 'SessionNotFound');
  });
});

describe('toolSeq under concurrency', () => {
  it('an allocation racing a commit never hands out the toolSeq that commit assigned', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ keepScratch: 'always' });
    const starts: Array<Promise<unknown>> = [];
    const allocations: Array<Promise<{ toolSeq: number }>> = [];
    for (let i = 0; i < 20; i++) {
      starts.push(s.append(sessionId, [{ kind: 'toolStart', requestId: `r${i}`, tool: 't' }]));
      await new Promise((r) => setImmediate(r)); // the commit is planned and waits for its fdatasync
      allocations.push(s.allocateScratch(sessionId, 'r'));
    }
    await Promise.all(starts);
    const allocated = (await Promise.all(allocations)).map((a) => a.toolSeq);
    const started = (await s.read(sessionId)).records.map((r) => r.toolSeq as number);
    expect(new Set([...allocated, ...started]).size).toBe(40);
    await s.closeAll();
  });

  it('a refused append does not use up an allocated toolSeq', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ turns: 'auto' });
    const { toolSeq } = await s.allocateScratch(sessionId, 'r');
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'q' } }]);
    // a second user message while the turn is pending is refused as a whole
    await storeError(s.append(sessionId, [
      { kind: 'toolStart', toolSeq, requestId: 'r', tool: 't' }, { kind: 'message', message: { role: 'user', content: 'again' } },
    ]), 'InvalidTurnTransition');
    await s.append(sessionId, [{ kind: 'toolStart', toolSeq, requestId: 'r', tool: 't' }]);
    expect((await s.read(sessionId, { kinds: ['toolStart'] })).records[0]?.toolSeq).toBe(toolSeq);
    await s.closeAll();
  });
});

describe('toolSeq edge cases', () => {
  it('an append that wrote nothing gives its allocated toolSeq back; a chunk of an unstarted tool is refused; toolSeq is bounded', async () => {
    const root = tempDir();
    let full = false;
    const layer = faultFs({
      writeSync: (fd, buf, off, len, pos) => {
        if (full && fs.fstatSync(fd).size > 0 && len > 0 && buf.includes('toolStart')) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        return nodeFs.writeSync(fd, buf, off, len, pos);
      },
    });
    const s = store(root, { fs: layer });
    const { sessionId } = await s.create({});
    const a = await s.allocateScratch(sessionId, 'r');
    const b = await s.allocateScratch(sessionId, 'r');
    full = true;
    await storeError(s.append(sessionId, [{ kind: 'toolStart', toolSeq: a.toolSeq, requestId: 'r', tool: 't' }]), 'NotWritten');
    full = false;
    await s.append(sessionId, [{ kind: 'toolStart', toolSeq: a.toolSeq, requestId: 'r', tool: 't' }]);
    await s.append(sessionId, [{ kind: 'toolStart', toolSeq: 3, requestId: 'r', tool: 't' }]);
    // b (2) was allocated but never started: its chunks are refused though 3 has started
    await storeError(s.append(sessionId, [{ kind: 'toolStream', toolSeq: b.toolSeq, stream: 'stdout', text: 'x' }]), 'InvalidArgument');
    await storeError(s.append(sessionId, [{ kind: 'toolStart', toolSeq: 2 ** 31, requestId: 'r', tool: 't' }]), 'InvalidArgument');
    await s.closeAll();
  });
});
