import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConnectionError, isErrorOf, REQUESTS, SidecarError, spawnClient } from '../../../clients/typescript/src/index.js';
import { CLI, FRAMINGS } from '../../conformance/harness.js';
import { tempDir } from '../../helpers.js';

const ROOT = path.resolve(__dirname, '../../..');

/** The generated client's own behaviour against the built binary: errors, cancellation, notifications, a dying server. */
const start = async (framing: 'lsp' | 'ndjson', sent: Array<Record<string, unknown>> = []) => {
  const c = spawnClient({ command: ['node', CLI, 'serve', '--store', tempDir()], framing, stderrTail: 256, tap: (dir, m) => void (dir === 'out' && sent.push(m)) });
  await c.start();
  return c;
};
const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user' as const, content } });

describe.each(FRAMINGS)('the generated client (%s)', (framing) => {
  it('types errors by kind: SessionNotFound narrows to its data, and is one session/read may answer', async () => {
    const c = await start(framing);
    const e = await c.sessionRead({ sessionId: '01J00000000000000000000000' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SidecarError);
    const err = e as SidecarError;
    expect(err.code).toBe(-31001);
    expect(err.is('SessionNotFound') && err.data.sessionId).toBe('01J00000000000000000000000');
    expect(err.is('Conflict')).toBe(false);
    expect(isErrorOf('session/read', err)).toBe(true);
    expect(isErrorOf('initialize', err)).toBe(false);
    expect(await c.close()).toBe(0);
  });

  it('appends, reads back and delivers session/didAppend through a bounded stream that counts what it dropped', async () => {
    const c = await start(framing);
    const { sessionId } = await c.sessionCreate({ title: 't' });
    await c.sessionSubscribe({ sessionId });
    const stream = c.notifications(2);
    for (let i = 0; i < 5; i++) await c.sessionAppend({ sessionId, records: [msg(`m${i}`)] });
    const { records } = await c.sessionRead({ sessionId });
    expect(records.filter((r) => r.kind === 'message')).toHaveLength(5);
    // 5 notifications into a buffer of 2 nobody read: the 3 oldest dropped, the 2 newest kept
    await expect.poll(() => stream.dropped, { timeout: 10_000 }).toBe(3);
    const first = await stream.next();
    expect(first.value).toMatchObject({ method: 'session/didAppend', params: { sessionId } });
    await stream.return();
    expect(await c.close()).toBe(0);
  });

  it('rejects every pending call with ConnectionError closed when the server dies; later calls at once; stderr is a bounded tail', async () => {
    const c = await start(framing);
    const { sessionId } = await c.sessionCreate({});
    const pending = Array.from({ length: 20 }, (_, i) => c.sessionAppend({ sessionId, records: [msg(`x${i}`)] }).catch((e: unknown) => e));
    await c.kill('SIGKILL');
    const outcomes = await Promise.all(pending);
    expect(outcomes.some((o) => o instanceof ConnectionError && o.reason === 'closed')).toBe(true);
    const later = await c.sessionList({}).catch((e: unknown) => e);
    expect(later).toBeInstanceOf(ConnectionError);
    expect(c.stderr.length).toBeLessThanOrEqual(256);
  });

  it('an aborted signal sends $/cancelRequest; the call settles with the server\'s answer; a timeout rejects', async () => {
    const sent: Array<Record<string, unknown>> = [];
    const c = await start(framing, sent);
    const { sessionId } = await c.sessionCreate({});
    const ac = new AbortController();
    ac.abort();
    const outcome = await c.sessionRead({ sessionId }, { signal: ac.signal }).then(() => 'result', (e: unknown) => (e instanceof SidecarError && e.is('RequestCancelled') ? 'cancelled' : e));
    expect(['result', 'cancelled']).toContain(outcome);
    const read = sent.find((m) => m.method === 'session/read')!;
    expect(sent).toContainEqual({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: read.id } });
    // a stopped server cannot answer: the call's timeout rejects it; once resumed, the client goes on
    process.kill(c.child.pid!, 'SIGSTOP');
    const slow = await c.sessionList({}, { timeoutMs: 300 }).catch((e: unknown) => e);
    process.kill(c.child.pid!, 'SIGCONT');
    expect(slow).toBeInstanceOf(ConnectionError);
    expect((slow as ConnectionError).reason).toBe('timeout');
    expect((await c.sessionList({})).sessions).toHaveLength(1);
    expect(await c.close()).toBe(0);
  });
});

describe('session-sidecar/client (the package export)', () => {
  it('is the generated client, and starts the package\'s own binary when given no command', async () => {
    const store = tempDir();
    const env = { ...process.env };
    delete env.SESSION_SIDECAR_COMMAND;
    const code = `
      const m = await import('session-sidecar/client');
      const c = await m.startClient({ store: ${JSON.stringify(store)} });
      const { sessionId } = await c.sessionCreate({ title: 'own binary' });
      await c.sessionAppend({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }] });
      const { records } = await c.sessionRead({ sessionId });
      console.log(JSON.stringify({ helpers: Object.keys(m.REQUESTS).length, content: records[0].message.content, exit: await c.close() }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, env, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ helpers: Object.keys(REQUESTS).length, content: 'hi', exit: 0 });
  });
});
