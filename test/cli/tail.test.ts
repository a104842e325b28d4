import { afterEach, describe, expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { explain, makeStore, runCli, startCli, until } from './helpers.js';

/** session-sidecar tail, over the BUILT binary; -f against a sidecar serving the store in another process. */

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c().catch(() => undefined);
});

describe('session-sidecar tail', () => {
  it('prints the last 20 records by default, -n N the last N, in the show format', async () => {
    const f = await makeStore();
    const all = await runCli(['tail', f.chat, '--store', f.root]);
    expect(all.code, explain(all)).toBe(0);
    expect(all.stdout.match(/^#\d+ /gm)).toEqual(['#1 ', '#2 ', '#3 ', '#4 ', '#5 ', '#6 ', '#7 ', '#8 ']);
    const two = await runCli(['tail', f.chat, '-n', '2', '--store', f.root]);
    expect(two.code, explain(two)).toBe(0);
    expect(two.stdout).toMatch(/^#7 [\d: -]+ {2}interruption {2}user cancelled \(during executingTools\)\n {4}The log says\n#8 [\d: -]+ {2}turn {2}finish interrupted {2}\S+\n$/);
    const raw = await runCli(['tail', f.chat, '-n', '1', '--raw', '--store', f.root]);
    expect(JSON.parse(raw.stdout)).toMatchObject({ seq: 8, kind: 'turn', event: 'finish', outcome: 'interrupted' });
    const none = await runCli(['tail', f.chat, '-n', '0', '--store', f.root]);
    expect(none.stdout).toBe('');
  });

  it('-f prints records another process appends (a running sidecar holding the session) and exits 0 on SIGINT', async () => {
    const f = await makeStore();
    const tail = startCli(['tail', f.chat, '-f', '-n', '1', '--store', f.root]);
    cleanup.push(async () => {
      if (tail.child.exitCode === null) tail.child.kill('SIGKILL');
    });
    await until(() => tail.output().includes('#8 '), 'the last record');

    const sidecar = await SidecarClient.start({ store: f.root });
    cleanup.push(() => sidecar.kill('SIGKILL'));
    await sidecar.open({ sessionId: f.chat, mode: 'write' });
    await sidecar.append({ sessionId: f.chat, records: [{ kind: 'message', message: { role: 'user', content: 'written by the sidecar' } }] });
    await until(() => tail.output().includes('written by the sidecar'), 'the appended record', 15_000);
    expect(tail.output()).toMatch(/#9 [\d: -]+ {2}user\n {4}written by the sidecar\n$/);

    await sidecar.append({
      sessionId: f.chat,
      records: [
        { kind: 'message', message: { role: 'assistant', content: null, toolCalls: [{ id: 'c9', name: 'grep', arguments: '{"pattern":"TODO"}' }] } },
        { kind: 'event', type: 'note', payload: null },
      ],
    });
    await until(() => tail.output().includes('#11 '), 'a batch of two');
    expect(tail.output()).toMatch(/#10 [\d: -]+ {2}assistant\n {4}→ grep\(\{"pattern":"TODO"\}\) \[c9\]\n#11 [\d: -]+ {2}event {2}note\n$/);

    tail.child.kill('SIGINT');
    const exit = await tail.exited;
    expect(exit, tail.errors()).toEqual({ code: 0, signal: null });
    expect(tail.errors()).toBe('');
    expect((await sidecar.shutdown()).code).toBe(0); // the sidecar was never disturbed
  });

  it('-f follows across a compaction by the sidecar', async () => {
    const f = await makeStore();
    const tail = startCli(['tail', f.compacted, '-f', '-n', '0', '--raw', '--store', f.root]);
    cleanup.push(async () => {
      if (tail.child.exitCode === null) tail.child.kill('SIGKILL');
    });
    const sidecar = await SidecarClient.start({ store: f.root });
    cleanup.push(() => sidecar.kill('SIGKILL'));
    await sidecar.open({ sessionId: f.compacted, mode: 'write' });
    await new Promise((r) => setTimeout(r, 500)); // the tail is watching
    await sidecar.append({ sessionId: f.compacted, records: [{ kind: 'message', message: { role: 'assistant', content: 'four' } }] });
    await sidecar.request('session/compact', { sessionId: f.compacted, summary: 'More greetings.', throughSeq: 4 });
    await sidecar.append({ sessionId: f.compacted, records: [{ kind: 'message', message: { role: 'user', content: 'five' } }] });
    await until(() => tail.output().includes('five'), 'the record after the compaction', 15_000);
    const seqs = tail.output().trimEnd().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toEqual([4, 5]);
    tail.child.kill('SIGTERM');
    expect((await tail.exited).code).toBe(0);
  });

  it('-f ends with an error when the session is deleted', async () => {
    const f = await makeStore();
    const tail = startCli(['tail', f.fork, '-f', '--store', f.root]);
    cleanup.push(async () => {
      if (tail.child.exitCode === null) tail.child.kill('SIGKILL');
    });
    await until(() => tail.output().includes('#3 '), 'the records');
    const sidecar = await SidecarClient.start({ store: f.root });
    cleanup.push(() => sidecar.kill('SIGKILL'));
    await sidecar.request('session/delete', { sessionId: f.fork });
    const exit = await tail.exited;
    expect(exit.code).toBe(1);
    expect(tail.errors()).toBe(`session-sidecar: session ${f.fork} can no longer be read (deleted, or damaged: 'session-sidecar verify ${f.fork}' checks it)\n`);
  });
});
