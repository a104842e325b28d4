import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI, rejection, SidecarClient, startSidecar } from '../conformance/harness.js';

const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

/** Whether this machine lets us make a PID namespace (root, or user namespaces allowed). */
const canUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

/**
 * Issue 25 finding 3: two containers of one pod share a volume and a host name but not a PID
 * namespace. The holder's pid means nothing to the other side, so a lease judged by its pid was
 * taken while its holder lived. The kernel lock is the same lock in every namespace.
 */
describe.skipIf(!canUnshare && !process.env.CI)('a holder in another PID namespace', () => {
  it('keeps its live lease (refused, whatever its pid looks like from here), and a dead one is taken over at once', async () => {
    const store = tempDir();
    // The holder, pid 1-ish in a namespace of its own: from here its pid names no process, or another one.
    const a = new SidecarClient({ command: 'unshare', args: ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, CLI, '--lease-stale-ms', '5000'], store, keepStdout: true });
    await a.initialize();
    const { sessionId } = await a.create();
    await a.append({ sessionId, records: [msg('a1')] });
    const b = await startSidecar({ store, args: ['--lease-stale-ms', '5000'] });
    const refused = await rejection(b.open({ sessionId, mode: 'write' }));
    expect(refused.kind).toBe('SessionLocked');
    expect(await a.append({ sessionId, records: [msg('a2')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    await a.kill('SIGKILL'); // unshare and, with it, the namespace's processes
    // The kernel dropped the dead holder's lock: no stale wait, no pid guess.
    expect((await b.open({ sessionId, mode: 'write' })).mode).toBe('write');
    expect(await b.append({ sessionId, records: [msg('b3')] })).toEqual({ firstSeq: 3, lastSeq: 3 });
    await b.shutdown();
  }, 30_000);
});
