import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';
import { note, store } from './storeHelpers.js';

/**
 * verify's consistent view (verify/settle.ts), made deterministic: a real writer process (the
 * built store library, run to completion by spawnSync) appends or compacts at an exact point of
 * verify's reads — after verify has read the journal, just before it opens the index entry.
 * Without the re-check this is the race the issue saw (an index entry newer than the journal
 * read: "acknowledged records are missing"; a replaced journal and a new archive).
 */

const FILE_STORE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/src/stores/fileStore.js');

/** Another process opens the session for writing, appends (and compacts), and closes it: its index entry is written. */
function writerProcess(root: string, id: string, what: 'append' | 'compact'): void {
  const script = `
    const { FileSessionStore } = await import(${JSON.stringify(FILE_STORE)});
    const s = new FileSessionStore(${JSON.stringify(root)}, {});
    await s.open(${JSON.stringify(id)}, 'write');
    const { lastSeq } = await s.append(${JSON.stringify(id)}, [{ kind: 'note', n: 1 }, { kind: 'note', n: 2 }]);
    if (${JSON.stringify(what)} === 'compact') await s.compact(${JSON.stringify(id)}, { summary: 'so far', throughSeq: lastSeq - 1 });
    await s.closeAll();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** nodeFs whose opens of `file` first run `action` (the first `times` of them). */
function beforeOpening(file: string, times: number, action: () => void): FsLayer {
  let left = times;
  return {
    ...nodeFs,
    openSync: (p, flags, mode) => {
      if (p === file && left > 0) {
        left -= 1;
        action();
      }
      return nodeFs.openSync(p, flags, mode);
    },
  };
}

async function session(root: string): Promise<string> {
  const s = store(root);
  const { sessionId } = await s.create({ title: 'x' });
  for (let i = 0; i < 5; i++) await s.append(sessionId, [note(i)]);
  await s.closeAll();
  return sessionId;
}

const problems = (r: Awaited<ReturnType<typeof verifyStore>>) =>
  [...r.store, ...r.sessions.flatMap((x) => x.findings)].filter((f) => f.severity !== 'note');

describe('verify while another process writes', () => {
  it.each(['append', 'compact'] as const)('a writer that %ss between verify\'s read of the journal and of the index entry: nothing reported', async (what) => {
    const root = tempDir();
    const id = await session(root);
    const index = path.join(root, 'index', `${id}.json`);
    const r = await verifyStore(root, { fs: beforeOpening(index, 1, () => writerProcess(root, id, what)) });
    expect(problems(r)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.sessions[0]?.journal?.lastSeq).toBe(7); // the check that held still saw the writer's records
  });

  it('a session that changes during every check: only what every check found is reported — real damage still is', async () => {
    const root = tempDir();
    const id = await session(root);
    // Damage no writer explains, in a file the writer never touches: a state value open to others.
    const s = store(root);
    await s.open(id, 'write');
    await s.setState(id, 'k', 1);
    await s.closeAll();
    const value = path.join(root, 'sessions', id, 'state', 'k.json');
    fs.chmodSync(value, 0o644);
    // A writer appends before every read of the index entry: no check sees the session hold still.
    const fsl = beforeOpening(path.join(root, 'index', `${id}.json`), 100, () => writerProcess(root, id, 'append'));
    const r = await verifyStore(root, { fs: fsl });
    const report = r.sessions.find((x) => x.sessionId === id)!;
    expect(report.findings.map((f) => f.message).join('\n')).toContain('changed during each of');
    expect(report.findings.filter((f) => f.severity !== 'note')).toEqual([
      expect.objectContaining({ severity: 'error', check: 'permissions', file: `sessions/${id}/state/k.json` }),
    ]);
    expect(r.ok).toBe(false);
  });
});
