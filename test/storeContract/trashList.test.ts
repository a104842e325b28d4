/**
 * Store contract: the trash listing (trash list / trash empty's selection) on every backend —
 * on PostgreSQL one statement over the trashed rows (sessions.ts listTrashed), on the file
 * store its trash directory: the same entries for the same history. Most recently deleted
 * first; each with its title, when it was deleted and its bytes as listed before the delete; a
 * restored session leaves it, a purged one too; live sessions are never in it.
 */
import { expect, it } from 'vitest';
import { trashOf } from '../../src/core/services/trash.js';
import { eachBackend, user } from './backends.js';

eachBackend('trash listing', (setup) => {
  it('the trashed sessions, newest deletion first, with title, deletedAt and bytes; restore and purge take them out', async () => {
    const { store: s } = await setup();
    const made: Array<{ id: string; bytes: number }> = [];
    for (let i = 0; i < 6; i++) {
      const { sessionId } = await s.create({ title: `t${i}` });
      await s.append(sessionId, [user(`message ${'x'.repeat(i * 10)}`)]);
      await s.close(sessionId);
      const listed = (await s.list({ limit: 100 })).sessions.find((x) => x.sessionId === sessionId)!;
      made.push({ id: sessionId, bytes: listed.bytes });
    }
    const deletedAt: Record<string, [number, number]> = {};
    for (const i of [4, 1, 3, 0]) {
      const before = Date.now();
      await s.delete(made[i]!.id);
      deletedAt[made[i]!.id] = [before, Date.now()];
      await new Promise((r) => setTimeout(r, 5));
    }
    await s.restore(made[3]!.id);
    await s.delete(made[0]!.id, true);
    const trash = await s.listTrash!();
    expect(trash.map((e) => e.sessionId)).toEqual([made[1]!.id, made[4]!.id]);
    for (const e of trash) {
      const i = made.findIndex((m) => m.id === e.sessionId);
      expect(e).toMatchObject({ title: `t${i}`, bytes: made[i]!.bytes });
      const t = Date.parse(e.deletedAt);
      const [lo, hi] = deletedAt[e.sessionId]!;
      expect(t).toBeGreaterThanOrEqual(lo - 1000); // the backend's clock (the database's on PostgreSQL)
      expect(t).toBeLessThanOrEqual(hi + 1000);
    }
    expect((await trashOf(s, '1h')).length).toBe(0);
    expect((await trashOf(s)).map((e) => e.sessionId)).toEqual(trash.map((e) => e.sessionId));
  });
});
