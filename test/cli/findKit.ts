import fs from 'node:fs';
import path from 'node:path';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { msg } from './helpers.js';

/**
 * A store of three sessions in two directories: `old` (created first in `here`, updated last),
 * `hereNew` (in `here`), `other` (in `elsewhere`); most recently updated first: old, other, hereNew.
 */
export async function cwdStore(): Promise<{ root: string; here: string; elsewhere: string; ids: { old: string; hereNew: string; other: string } }> {
  const base = fs.realpathSync(tempDir('sidecar-find2-'));
  const here = path.join(base, 'proj');
  const elsewhere = path.join(base, 'other');
  fs.mkdirSync(here);
  fs.mkdirSync(elsewhere);
  const root = path.join(base, 'store');
  const s = new FileSessionStore(root, { leases: false });
  const pause = () => new Promise((r) => setTimeout(r, 15));
  const old = (await s.create({ title: 'Old here', cwd: here })).sessionId;
  await s.append(old, [msg('user', 'first in proj')]);
  await pause();
  const hereNew = (await s.create({ title: 'New here', cwd: here })).sessionId;
  await s.append(hereNew, [msg('user', 'second in proj')]);
  await pause();
  const other = (await s.create({ title: 'Elsewhere', cwd: elsewhere })).sessionId;
  await s.append(other, [msg('user', 'in other')]);
  await pause();
  await s.append(old, [msg('assistant', 'updated last')]); // the oldest session is now the most recently updated
  await s.closeAll();
  return { root, here, elsewhere, ids: { old, hereNew, other } };
}

