import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { pruneSessions } from '../../../src/core/services/prune.js';
import { tempDir } from '../../helpers.js';
import { killingLayer } from './killingLayer.js';
import { journalOf, note, store } from './storeHelpers.js';

/**
 * A crash mid-prune loses nothing (protocol §18): the k-th rename or fsync of a prune of three
 * sessions "kills the process" (the store is abandoned as a SIGKILL would leave it), for every
 * k — so crashes fall between two sessions and inside each one's move. After each, every session
 * is either live and whole, or in the trash and restorable whole (records and archive).
 */

/** Three compacted sessions (records 1..4 archived through 2, then 5), closed. */
async function three(root: string): Promise<string[]> {
  const s = store(root);
  const ids: string[] = [];
  for (let n = 0; n < 3; n++) {
    const { sessionId } = await s.create({ title: `s${n}` });
    for (let i = 1; i <= 4; i++) await s.append(sessionId, [note(i)]);
    await s.compact(sessionId, { summary: 'first two', throughSeq: 2 });
    await s.append(sessionId, [note(5)]);
    ids.push(sessionId);
  }
  await s.closeAll();
  return ids;
}

async function expectWhole(s: FileSessionStore, id: string, where: string): Promise<void> {
  expect((await s.open(id, 'read')).lastSeq, where).toBe(5);
  expect((await s.read(id, { generation: 0 })).records.map((r) => r.seq), where).toEqual([1, 2, 3, 4]);
  expect((await s.read(id)).records.map((r) => r.seq), where).toEqual([2, 3, 4, 5]);
  await s.close(id);
}

describe('a crash at every rename and fsync of a prune', () => {
  it('every session is where it was or in the trash, restorable whole; crashes fall between sessions and inside one', async () => {
    const shapes = new Set<string>();
    let points = 0;
    for (let k = 1; ; k++) {
      const root = tempDir();
      const ids = await three(root);
      const { layer, state } = killingLayer(k);
      const s = store(root, { fs: layer });
      state.armed = true;
      try {
        await pruneSessions(s, { olderThan: '1d' }, Date.now() + 2 * 86_400_000);
      } catch (err) {
        if (!state.killed) throw err;
      }
      s.abandon();
      if (!state.killed) {
        expect(ids.every((id) => !fs.existsSync(journalOf(root, id)))).toBe(true); // the whole prune ran
        break;
      }
      points += 1;
      const where = `prune killed at rename/fsync ${k}`;
      const t = store(root);
      const live = ids.map((id) => fs.existsSync(journalOf(root, id)));
      shapes.add(live.map((l) => (l ? 'L' : 'T')).join(''));
      for (const [i, id] of ids.entries()) {
        if (!live[i]) await t.restore(id);
        await expectWhole(t, id, `${where}, session ${i}`);
      }
    }
    expect(points).toBeGreaterThan(6);
    // between sessions: some already in the trash, the others untouched (prune moves newest first)
    expect([...shapes].some((sh) => sh.includes('T') && sh.includes('L'))).toBe(true);
  });
});
