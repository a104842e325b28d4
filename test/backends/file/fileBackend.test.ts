/**
 * The file backend under the core (src/backends/file/fileBackend.ts; the store contract runs
 * it whole as `file`): a write open repairs a torn tail under its lease and reports it once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBackend } from '../../../src/backends/file/fileBackend.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { Sessions } from '../../../src/core/sessions/sessions.js';
import { scratchAt } from '../../../src/scratch/localScratch.js';
import type { SessionStore } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';

const open: SessionStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.closeAll().catch(() => undefined);
});

function core(root: string): Sessions {
  const backend = new FileBackend(root, { leases: false });
  const s = new Sessions(backend, { scratch: scratchAt(root, (id) => backend.scratchDir(id)) });
  open.push(s);
  return s;
}

const note = (i: number) => ({ kind: 'note', i });

describe('FileBackend', () => {
  it('a write open cuts a torn tail, keeps it as evidence and reports it once; a reader leaves it', async () => {
    const root = tempDir('file-backend-');
    const a = core(root);
    const { sessionId } = await a.create({ title: 't' });
    await a.append(sessionId, [note(1), note(2)]);
    await a.closeAll();
    const journal = path.join(root, 'sessions', sessionId, 'journal.jsonl');
    fs.appendFileSync(journal, '{"seq":3,"ts":"2026-01-01T00:00:00.000Z","kind":"no');
    const torn = fs.statSync(journal).size;
    const b = core(root);
    expect((await b.open(sessionId, 'read')).lastSeq).toBe(2);
    expect(fs.statSync(journal).size).toBe(torn);
    await b.close(sessionId);
    const opened = await b.open(sessionId, 'write');
    expect(opened.lastSeq).toBe(2);
    expect(opened.recovered?.bytes).toBeGreaterThan(0);
    expect(opened.recovered?.evidence).toMatch(new RegExp(`^recovery/${sessionId}/\\d+-\\d+\\.torn$`));
    expect(fs.existsSync(path.join(root, opened.recovered?.evidence as string))).toBe(true);
    expect(fs.statSync(journal).size).toBeLessThan(torn);
    await b.append(sessionId, [note(3)]);
    expect((await b.read(sessionId)).records.map((r) => r.seq)).toEqual([1, 2, 3]);
  });

  it('writes the file store format: FileSessionStore reads the core\'s session and the core reads FileSessionStore\'s', async () => {
    const root = tempDir('file-backend-');
    const a = core(root);
    const { sessionId: mine } = await a.create({ title: 'core' });
    await a.append(mine, [note(1), note(2), note(3)]);
    await a.compact(mine, { summary: 's', throughSeq: 2 });
    await a.closeAll();
    const old = new FileSessionStore(root, { leases: false });
    open.push(old);
    const { sessionId: theirs } = await old.create({ title: 'old' });
    await old.append(theirs, [note(1)]);
    const viaOld = await old.read(mine, { generation: 0 });
    await old.closeAll();
    const b = core(root);
    expect((await b.read(mine, { generation: 0 })).records).toEqual(viaOld.records);
    expect((await b.read(theirs)).records.map((r) => r.seq)).toEqual([1]);
    expect((await b.history(mine)).map((h) => h.generation)).toEqual([0]);
    expect((await b.list()).sessions.map((s) => s.sessionId).sort()).toEqual([mine, theirs].sort());
  });
});
