import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../../src/stores/fileStore.js';
import { tempDir } from '../../../helpers.js';
import { indexOf, journalOf, message, store, storeError } from '../storeHelpers.js';

const api = (direction: 'request' | 'response', payload: unknown = { n: 1 }) => ({ kind: 'api', direction, payload });
const start = (extra: Record<string, unknown> = {}) => ({ kind: 'toolStart', requestId: 'r1', tool: 'bash', ...extra });

let open: FileSessionStore[] = [];
afterEach(async () => {
  for (const s of open) await s.closeAll();
  open = [];
});
function fresh(root: string): FileSessionStore {
  const s = store(root);
  open.push(s);
  return s;
}

describe('api records', () => {
  it('pair a response with the latest open request, across close, restart and a stale index', async () => {
    const root = tempDir();
    const a = fresh(root);
    const { sessionId } = await a.create({});
    await a.append(sessionId, [api('request'), api('response'), api('request')]);
    await a.closeAll();
    fs.rmSync(indexOf(root, sessionId)); // the counters must come back from the journal itself
    const b = fresh(root);
    await b.open(sessionId, 'write');
    await b.append(sessionId, [api('request'), api('response'), api('response'), api('request')]);
    const { records } = await b.read(sessionId);
    expect(records.map((r) => [r.direction, r.apiSeq])).toEqual([
      ['request', 1], ['response', 1], ['request', 2], ['request', 3], ['response', 3], ['response', 2], ['request', 4],
    ]);
  });

  it('refuse a response with no open request, and a client-chosen apiSeq, writing nothing', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    const before = fs.readFileSync(journalOf(root, sessionId));
    const err = await storeError(s.append(sessionId, [message('user', 'hi'), api('response')]), 'InvalidArgument');
    expect(err.message).toMatch(/no open request/);
    expect(err.details.path).toBe('records[1].direction');
    await storeError(s.append(sessionId, [{ ...api('request'), apiSeq: 7 }]), 'InvalidArgument');
    expect(fs.readFileSync(journalOf(root, sessionId))).toEqual(before);
  });

  it('keep their counters through a compaction (the checkpoint carries them)', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [api('request'), api('response'), api('request'), start(), start()]);
    await s.compact(sessionId, { summary: 's', throughSeq: 5 });
    await s.closeAll();
    const t = fresh(root);
    await t.open(sessionId, 'write');
    await t.append(sessionId, [api('response'), api('request'), start()]);
    const { records } = await t.read(sessionId, { kinds: ['api', 'toolStart'] });
    expect(records.map((r) => r.apiSeq ?? `t${String(r.toolSeq)}`)).toEqual([2, 3, 't3']);
  });
});

describe('tool records', () => {
  it('assign toolSeq in order, accept a larger explicit one, refuse a used one', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [start(), start({ toolSeq: 5 }), start()]);
    await storeError(s.append(sessionId, [start({ toolSeq: 2 })]), 'InvalidArgument');
    const { records } = await s.read(sessionId);
    expect(records.map((r) => r.toolSeq)).toEqual([1, 5, 6]);
    // the counter is placed right after kind: a reader can see it without parsing the line
    expect(fs.readFileSync(journalOf(root, sessionId), 'utf8')).toContain('"kind":"toolStart","toolSeq":5,"requestId":"r1"');
  });

  it('refuse a finish or stream chunk of a tool that has not started', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    await storeError(s.append(sessionId, [{ kind: 'toolFinish', toolSeq: 1, requestId: 'r', success: true }]), 'InvalidArgument');
    await s.append(sessionId, [start(), { kind: 'toolFinish', toolSeq: 1, requestId: 'r1', success: true, exitCode: 0 }]);
    expect((await s.read(sessionId)).lastSeq).toBe(2);
  });

  it('round-trip UTF-8 stream chunks as text and any bytes as base64, byte-exact', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    const binary = Buffer.from([0, 255, 0xc3, 0x28, 10, 13, 0x80]);
    const text = 'héllo ✓ 日本 \u0000 \t end';
    await s.append(sessionId, [
      start(),
      { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text },
      { kind: 'toolStream', toolSeq: 1, stream: 'stderr', dataBase64: binary.toString('base64') },
    ]);
    await s.closeAll();
    const t = fresh(root);
    const { records } = await t.read(sessionId, { kinds: ['toolStream'] });
    expect(records[0]?.text).toBe(text);
    expect(Buffer.from(records[1]?.dataBase64 as string, 'base64')).toEqual(binary);
  });

  it('refuse a chunk with both or neither of text and dataBase64, or non-canonical base64', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [start()]);
    for (const bad of [{ text: 'a', dataBase64: 'YQ==' }, {}, { dataBase64: 'YQ' }, { dataBase64: 'YR==' }]) {
      await storeError(s.append(sessionId, [{ kind: 'toolStream', toolSeq: 1, stream: 'stdout', ...bad }]), 'InvalidArgument');
    }
  });
});

describe('reading by kind', () => {
  it('returns only the kinds asked for, and session context ignores runtime records', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({ systemPrompt: 'sys' });
    await s.append(sessionId, [
      message('user', 'q'), api('request', { big: 'x'.repeat(10_000) }), api('response'), start(),
      { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: 'out' }, message('assistant', 'a'),
    ]);
    const page = await s.read(sessionId, { kinds: ['message'] });
    expect(page.records.map((r) => r.seq)).toEqual([1, 6]);
    expect(page.nextAfterSeq).toBeNull();
    const { messages } = await s.context(sessionId);
    expect(messages).toEqual([{ role: 'system', content: 'sys' }, { role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }]);
  });

  it('still reports a damaged line of a kind it skips', async () => {
    const root = tempDir();
    const s = fresh(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [message('user', 'q'), api('request', { p: 'abcdef' }), message('assistant', 'a')]);
    await s.closeAll();
    const file = journalOf(root, sessionId);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('abcdef', 'abcdeg'));
    const t = fresh(root);
    await storeError(t.read(sessionId, { kinds: ['message'] }), 'Corrupt');
  });
});
