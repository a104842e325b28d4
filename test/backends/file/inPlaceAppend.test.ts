import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { journalOf, lines, note, store, storeError } from './storeHelpers.js';

/**
 * Issue 14, mutation gap: the writer's size check before a commit (another program appended
 * to the journal in place, same inode, without taking the lease) was caught only in its
 * compaction variant. Without it the next append would overwrite the other program's bytes.
 */
describe('a journal appended to in place by another program', () => {
  it('the next append is Conflict (journalChanged), writes nothing, and the session is read-only in this process', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.open(sessionId, 'write');
    await s.append(sessionId, [note(1)]);
    const foreign = lines(fs.readFileSync(journalOf(root, sessionId)))[1] as Buffer; // a well-formed line, appended again
    fs.appendFileSync(journalOf(root, sessionId), foreign);
    const before = fs.readFileSync(journalOf(root, sessionId));
    const err = await storeError(s.append(sessionId, [note(2)]), 'Conflict');
    expect(err.details.reason).toBe('journalChanged');
    expect(fs.readFileSync(journalOf(root, sessionId))).toEqual(before);
    await storeError(s.append(sessionId, [note(3)]), 'ReadOnly');
    await s.closeAll();
  });
});
