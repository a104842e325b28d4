/**
 * The backup's guards in process (src/backends/file/backup.ts; the binary-level tests are
 * test/cli/backup.test.ts and progress.test.ts, the power-loss one backupPowerLoss.test.ts):
 * the source is only read — a torn tail at the source is neither cut nor copied; an index
 * entry is copied only when it vouches for no more than the copied bytes; an encrypted store
 * is copied sealed (byte for byte) and reads back under its key; a journal that cannot be read
 * is copied whole and reported; scratch, temp and lock files are left out; something that is
 * neither file nor directory is refused; a stop at a safe point throws WorkInterrupted.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupStore, INCOMPLETE_MARKER, publishBackup } from '../../../src/backends/file/backup.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import { WorkInterrupted } from '../../../src/domain/work.js';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';
import { msg } from '../../cli/helpers.js';

async function storeWith(n: number, opts: { encryptionKey?: StoreKey } = {}): Promise<{ root: string; ids: string[] }> {
  const root = path.join(tempDir('sidecar-backup-'), 'store');
  const s = new FileSessionStore(root, { leases: false, ...opts });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { sessionId } = await s.create({ title: `s${i}` });
    await s.append(sessionId, [msg('user', `hello ${i}`), msg('assistant', `hi ${i}`)]);
    ids.push(sessionId);
  }
  await s.closeAll();
  return { root, ids };
}

const target = () => path.join(tempDir('sidecar-backup-to-'), 'copy.incomplete');

describe('backupStore', () => {
  it('reads the source only: a torn tail there is neither cut nor copied, and the copy ends at the last whole line', async () => {
    const { root, ids } = await storeWith(1);
    const journal = new StoreLayout(root).journal(ids[0] as string);
    const whole = fs.readFileSync(journal);
    fs.appendFileSync(journal, '{"seq":3,"torn'); // a write killed halfway
    const before = fs.readFileSync(journal);
    const partial = target();
    await backupStore(root, partial);
    expect(fs.readFileSync(journal).equals(before)).toBe(true); // untouched, torn tail and all
    expect(fs.readFileSync(new StoreLayout(partial).journal(ids[0] as string)).equals(whole)).toBe(true);
    expect(fs.readdirSync(path.join(root, 'recovery')).length).toBe(0); // no evidence taken: nothing was cut
  });

  it('copies an index entry only when it vouches for no more than the copied bytes', async () => {
    const { root, ids } = await storeWith(2);
    const layout = new StoreLayout(root);
    const [keep, shrink] = ids as [string, string];
    expect(fs.existsSync(layout.indexEntry(shrink))).toBe(true);
    const j = layout.journal(shrink);
    const lines = fs.readFileSync(j, 'utf8').split('\n');
    fs.writeFileSync(j, `${lines.slice(0, -2).join('\n')}\n`); // its last line gone: the entry vouches for more
    const partial = target();
    await backupStore(root, partial);
    const copy = new StoreLayout(partial);
    expect(fs.readFileSync(copy.indexEntry(keep)).equals(fs.readFileSync(layout.indexEntry(keep)))).toBe(true);
    expect(fs.existsSync(copy.indexEntry(shrink))).toBe(false);
  });

  it('copies an encrypted store sealed, byte for byte; the copy reads back under the key', async () => {
    const key = new StoreKey(randomBytes(32));
    const { root, ids } = await storeWith(2, { encryptionKey: key });
    const partial = target();
    const r = await backupStore(root, partial, { key });
    expect(r.unreadable).toEqual([]);
    const [src, dst] = [new StoreLayout(root), new StoreLayout(partial)];
    for (const id of ids) expect(fs.readFileSync(dst.journal(id)).equals(fs.readFileSync(src.journal(id)))).toBe(true);
    expect(fs.readFileSync(path.join(partial, 'encryption.json')).equals(fs.readFileSync(path.join(root, 'encryption.json')))).toBe(true);
    const to = path.join(path.dirname(partial), 'copy');
    publishBackup(partial, to);
    expect((await verifyStore(to, { encryptionKey: key })).ok).toBe(true);
    const s = new FileSessionStore(to, { leases: false, readOnly: true, encryptionKey: key });
    try {
      const { records } = await s.read(ids[1] as string);
      expect(JSON.stringify(records)).toContain('hello 1');
    } finally {
      await s.closeAll();
    }
  });

  it('a journal it cannot read (damaged at its start) is copied whole and reported; the others are copied as read', async () => {
    const { root, ids } = await storeWith(2);
    const bad = new StoreLayout(root).journal(ids[0] as string);
    const bytes = fs.readFileSync(bad);
    bytes[5] = bytes[5] === 0x41 ? 0x42 : 0x41; // the header line altered
    fs.writeFileSync(bad, bytes);
    const partial = target();
    const r = await backupStore(root, partial);
    expect(r.sessions).toBe(2);
    expect(r.unreadable.map((u) => u.sessionId)).toEqual([ids[0]]);
    expect(fs.readFileSync(new StoreLayout(partial).journal(ids[0] as string)).equals(bytes)).toBe(true);
  });

  it('leaves out scratch, temp and lock files, keeps the marker until published, copies .gitignore and the trash', async () => {
    const { root, ids } = await storeWith(2);
    const layout = new StoreLayout(root);
    const [live, gone] = ids as [string, string];
    const s = new FileSessionStore(root, { leases: false });
    await s.delete(gone);
    await s.closeAll();
    fs.mkdirSync(path.join(layout.scratchDir(live), 'tool-000001'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(layout.scratchDir(live), 'tool-000001', 'out.txt'), 'scratch');
    fs.mkdirSync(layout.stateDir(live), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(layout.stateDir(live), 'plan.json'), '{"v":1}\n', { mode: 0o600 });
    fs.writeFileSync(path.join(layout.stateDir(live), 'plan.json.123.tmp'), 'half', { mode: 0o600 });
    fs.writeFileSync(path.join(root, '.gitignore'), '*\n', { mode: 0o600 });
    const partial = target();
    const r = await backupStore(root, partial);
    expect(r.trashed).toBe(1);
    const copy = new StoreLayout(partial);
    expect(fs.existsSync(path.join(partial, INCOMPLETE_MARKER))).toBe(true);
    expect(fs.existsSync(copy.scratchDir(live))).toBe(false);
    expect(fs.readdirSync(copy.stateDir(live))).toEqual(['plan.json']);
    expect(fs.readFileSync(path.join(partial, '.gitignore'), 'utf8')).toBe('*\n');
    expect(fs.readdirSync(path.join(partial, 'trash'))).toEqual(fs.readdirSync(path.join(root, 'trash')));
    expect(fs.existsSync(path.join(partial, 'locks'))).toBe(false);
    const modes = fs.readdirSync(partial, { withFileTypes: true, recursive: true }).map((e) => [e.isDirectory(), fs.lstatSync(path.join(e.parentPath, e.name)).mode & 0o777]);
    for (const [dir, mode] of modes) expect(mode).toBe(dir ? 0o700 : 0o600);
    const to = path.join(path.dirname(partial), 'copy');
    publishBackup(partial, to);
    expect(fs.existsSync(partial)).toBe(false);
    expect(fs.existsSync(path.join(to, INCOMPLETE_MARKER))).toBe(false);
    expect((await verifyStore(to)).ok).toBe(true);
  });

  it('refuses a symlink in a copied folder (never follows it)', async () => {
    const { root, ids } = await storeWith(1);
    const layout = new StoreLayout(root);
    fs.mkdirSync(layout.stateDir(ids[0] as string), { recursive: true, mode: 0o700 });
    fs.symlinkSync('/etc/passwd', path.join(layout.stateDir(ids[0] as string), 'evil.json'));
    await expect(backupStore(root, target())).rejects.toThrow(/neither a file nor a directory/);
  });

  it('stops at a safe point when asked: WorkInterrupted between sessions, with what was copied', async () => {
    const { root } = await storeWith(3);
    let asked = 0;
    const steps: number[] = [];
    const work = { phase: (_l: string, total: number) => steps.push(total), step: () => steps.push(-1), shouldStop: async () => ++asked > 2 };
    await expect(backupStore(root, target(), { work })).rejects.toThrow(WorkInterrupted);
    expect(steps).toEqual([3, -1, -1]);
  });
});
