import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { exportFileSession, fileSessionIds } from '../../../src/backends/file/transfer/exportFile.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { fileEnd } from '../../../src/migrate/ends.js';
import { migrateStores, sameBundle } from '../../../src/migrate/migrate.js';
import { tempDir } from '../../helpers.js';
import { Killed, killingLayer } from './killingLayer.js';
import { message, note, store } from './storeHelpers.js';

/**
 * Issue 25, finding 7d: a migrate into a directory store killed at any rename or fsync of its
 * import, then run again, leaves every session whole and nothing of its staging behind — no
 * `migrate/<id>/`, no `migrate/` (a kill after an import's commit point used to leave an empty
 * `migrate/<id>/` that the rerun, finding the session already there, never removed).
 */

async function source(root: string): Promise<string[]> {
  const s = store(root);
  const a = (await s.create({ title: 'compacted' })).sessionId;
  await s.append(a, [message('user', 'one'), message('assistant', 'two')]);
  await s.compact(a, { summary: 'one, two', throughSeq: 2 });
  await s.append(a, [note(3)]);
  await s.setState(a, 'k', { v: 1 });
  const b = (await s.create({ title: 'plain' })).sessionId;
  await s.append(b, [note(1)]);
  const c = (await s.create({ title: 'trashed' })).sessionId;
  await s.append(c, [note(1)]);
  await s.close(c);
  await s.delete(c);
  await s.closeAll();
  return [a, b, c];
}

const quiet = { env: {}, vocabulary: [], progress: () => {}, refuse: (line: string) => { throw new Error(line); } };

/** Directories under `root` with nothing in them, but the store's own folders. */
function emptyDirs(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    const names = fs.readdirSync(dir);
    if (names.length === 0 && !['sessions', 'index', 'recovery', 'history', 'trash', 'locks', 'blobs'].includes(path.relative(root, dir))) out.push(path.relative(root, dir));
    for (const n of names) if (fs.lstatSync(path.join(dir, n)).isDirectory()) walk(path.join(dir, n));
  };
  walk(root);
  return out;
}

describe('migrate into a directory store, killed and run again', () => {
  it('at every rename and fsync of the imports: every session whole after the rerun, no staging directory left', async () => {
    const src = tempDir('sidecar-import-src-');
    const ids = await source(src);
    const want = ids.map((id) => exportFileSession(nodeFs, new StoreLayout(src), id));
    let points = 0;
    for (let k = 1; ; k++) {
      const dest = path.join(tempDir('sidecar-import-dest-'), 'store');
      const { layer, state } = killingLayer(k);
      state.armed = true;
      try {
        await migrateStores(fileEnd(src, nodeFs), fileEnd(dest, layer), quiet);
      } catch (err) {
        if (!(err instanceof Killed)) throw err;
      }
      if (!state.killed) {
        expect(emptyDirs(dest)).toEqual([]);
        break;
      }
      points += 1;
      const where = `import killed at rename/fsync ${k}`;
      const sum = await migrateStores(fileEnd(src, nodeFs), fileEnd(dest, nodeFs), quiet);
      expect(sum.refused, where).toBe(0);
      const layout = new StoreLayout(dest);
      expect(fileSessionIds(nodeFs, layout).sort(), where).toEqual([...ids].sort());
      for (const [i, id] of ids.entries()) expect(sameBundle(exportFileSession(nodeFs, layout, id), want[i]!), `${where}: ${id}`).toBe(true);
      expect(fs.existsSync(path.join(dest, 'migrate')), `${where}: ${emptyDirs(dest).join(', ')}`).toBe(false);
      expect(emptyDirs(dest), where).toEqual([]);
    }
    expect(points).toBeGreaterThan(10);
  });
});
