import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyTrash, trashOf } from '../../../src/engine/trash.js';
import { tempDir } from '../../helpers.js';
import { journalOf, note, store } from './storeHelpers.js';

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
});
