import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyTrash, trashOf } from '../../../src/core/services/trash.js';
import { tempDir } from '../../helpers.js';
import { journalOf, note, store, storeError } from './storeHelpers.js';

/** trash empty (engine/trash.ts) on the file store: what it purges, and what it never touches. */
describe('trash empty', () => {
  it('purges the trashed sessions deleted before the cutoff; never a live session that has the same id', async () => {
    const root = tempDir();
    const s = store(root);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { sessionId } = await s.create({ title: `t${i}` });
      await s.append(sessionId, [note(i)]);
      ids.push(sessionId);
    }
    const [a, b, c] = ids as [string, string, string];
    for (const id of ids) await s.delete(id);
    // b is live again under the same id beside its trashed copy (a restore refused with Conflict "exists")
    fs.mkdirSync(path.dirname(journalOf(root, b)), { mode: 0o700 });
    fs.copyFileSync(path.join(root, 'trash', b, 'session', 'journal.jsonl'), journalOf(root, b));
    fs.chmodSync(journalOf(root, b), 0o600);
    // a was deleted long ago
    const old = new Date(Date.now() - 10 * 86_400_000);
    fs.utimesSync(path.join(root, 'trash', a), old, old);
    expect((await trashOf(s, '7d')).map((e) => e.sessionId)).toEqual([a]);

    const young = await emptyTrash(s, { olderThan: '7d' }, Date.now());
    expect(young.sessions.map((e) => e.sessionId)).toEqual([a]);
    expect(fs.existsSync(path.join(root, 'trash', a))).toBe(false);
    expect(fs.existsSync(path.join(root, 'trash', c))).toBe(true);

    const all = await emptyTrash(s, {}, Date.now());
    expect(all.sessions.map((e) => e.sessionId)).toEqual([c]);
    expect(fs.existsSync(path.join(root, 'trash', b, 'session', 'journal.jsonl'))).toBe(true);
    expect((await s.open(b, 'read')).lastSeq).toBe(1);
  });

  it('the check and the purge are one step under the session\'s lock: a restore from another instance meanwhile is SessionLocked', async () => {
    const root = tempDir();
    let other: ReturnType<typeof store> | undefined;
    let refused: unknown;
    // leases on: two instances of one process contend for the kernel lock as two processes do
    const s = store(root, {
      leases: true,
      hooks: {
        purgeChecked: async (id) => {
          other = store(root, { leases: true });
          refused = await other.restore(id).then(() => undefined, (e: unknown) => e);
        },
      },
    });
    const { sessionId: id } = await s.create({ title: 'x' });
    await s.append(id, [note(1)]);
    await s.close(id);
    await s.delete(id);
    const r = await emptyTrash(s, {}, Date.now());
    expect((refused as { kind?: string } | undefined)?.kind).toBe('SessionLocked');
    expect(r.sessions.map((e) => e.sessionId)).toEqual([id]);
    expect(fs.existsSync(path.join(root, 'trash', id))).toBe(false);
    expect(fs.existsSync(journalOf(root, id))).toBe(false);
    // Gone for good: its lock files too (the flock file unlinked while held, then released).
    expect(fs.readdirSync(path.join(root, 'locks')).filter((n) => n.startsWith(id))).toEqual([]);
    await other?.closeAll();
    await s.closeAll();
  });

  it('a session restored after trash empty listed it is skipped as live, one whose lock is held as open', async () => {
    const root = tempDir();
    const s = store(root, { leases: true });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { sessionId } = await s.create({ title: `t${i}` });
      await s.close(sessionId);
      await s.delete(sessionId);
      ids.push(sessionId);
    }
    const [restored, held] = ids as [string, string];
    await s.restore(restored);
    expect(await s.purgeTrashed(restored)).toBe('live');
    await s.open(restored, 'write'); // still live, and writable
    // held: a second instance restoring it (its lease taken, as a restore in progress has it)
    const other = store(root, { leases: true });
    const fence = await other.port.leases.acquire(held);
    expect(await s.purgeTrashed(held)).toBe('open');
    expect(fs.existsSync(path.join(root, 'trash', held, 'session', 'journal.jsonl'))).toBe(true);
    await storeError(s.restore(held), 'SessionLocked');
    await other.port.leases.release(fence);
    expect(await s.purgeTrashed(held)).toBe('purged');
    expect(await s.purgeTrashed(held)).toBe('gone');
    await s.closeAll();
  });

  it('a purge a crash cut short after its commit point (trash/.purging-<id>/ left) is finished by the next trash empty, which carries on', async () => {
    const root = tempDir();
    const s = store(root, { leases: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { sessionId } = await s.create({ title: `t${i}` });
      await s.append(sessionId, [note(i)]);
      await s.close(sessionId);
      await s.delete(sessionId);
      ids.push(sessionId);
    }
    const [cut, partly, rest] = ids as [string, string, string];
    // What a kill right after the commit point leaves (the rename done, nothing removed yet) ...
    fs.renameSync(path.join(root, 'trash', cut), path.join(root, 'trash', `.purging-${cut}`));
    // ... and a kill part way through removing the tree.
    fs.renameSync(path.join(root, 'trash', partly), path.join(root, 'trash', `.purging-${partly}`));
    fs.rmSync(path.join(root, 'trash', `.purging-${partly}`, 'session', 'journal.jsonl'));
    expect((await trashOf(s)).map((e) => e.sessionId)).toEqual([rest]); // never listed: gone for good
    const r = await emptyTrash(s, {}, Date.now());
    expect(r.sessions.map((e) => e.sessionId)).toEqual([rest]);
    expect(fs.readdirSync(path.join(root, 'trash'))).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'locks')).filter((n) => ids.some((id) => n.startsWith(id)))).toEqual([]);
    await s.closeAll();
  });
});
