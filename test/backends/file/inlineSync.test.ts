/**
 * Where a lone append's fdatasync runs: on the main thread only when the server says no other
 * request is waiting (SessionStore.setRequestsWaiting) and nothing is queued behind it; else in
 * the thread pool, so that requests arriving meanwhile group into the next write.
 */
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';
import { note, store } from './storeHelpers.js';

function recording() {
  const inline: Array<boolean | undefined> = [];
  return { inline, fs: { ...nodeFs, fdatasync: (fd: number, i?: boolean) => (inline.push(i), nodeFs.fdatasync(fd, i)) } };
}

describe('inline fdatasync of a lone append', () => {
  it('only when the server has no other request waiting, and never for a pipelined batch', async () => {
    const r = recording();
    const s = store(tempDir(), { fs: r.fs });
    const { sessionId } = await s.create({});
    r.inline.length = 0;
    await s.append(sessionId, [note(1)]); // no probe set: assumed busy
    let waiting = 1;
    s.setRequestsWaiting(() => waiting);
    await s.append(sessionId, [note(2)]);
    waiting = 3;
    await s.append(sessionId, [note(3)]);
    waiting = 1;
    await Promise.all([s.append(sessionId, [note(4)]), s.append(sessionId, [note(5)])]); // one batch of two
    expect(r.inline).toEqual([false, true, false, false]);
    expect((await s.read(sessionId)).records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5]);
    await s.closeAll();
  });
});
