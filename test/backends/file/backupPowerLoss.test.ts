/**
 * `backup --to DIR` under simulated power loss (test/torture/crashFs.ts): the backup and its
 * publication run on a recording file-system layer, then a power cut is replayed before every
 * sync point (and after the last), in each variant (synced; a torn or zeroed last write). The
 * promise (STORAGE.md, "Backup"): a crash never leaves at DIR anything but the whole, verified
 * copy — DIR is absent, or it is the full store (every journal byte for byte, the state values,
 * the archives, the trash and the blobs) with no incomplete marker in it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupStore, INCOMPLETE_MARKER, publishBackup } from '../../../src/backends/file/backup.js';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { CrashRecorder, replay } from '../../torture/crashFs.js';
import { Ledger } from '../../torture/model.js';
import { tempDir } from '../../helpers.js';
import { msg, toolCall } from '../../cli/helpers.js';

/** Every regular file under `dir`, by its path relative to it, with its bytes. */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    out.set(path.relative(dir, p), fs.readFileSync(p));
  }
  return out;
}

describe('backup under simulated power loss', () => {
  it('at every sync point DIR is absent or the whole verified copy (no marker, every file byte for byte)', async () => {
    const root = path.join(tempDir('sidecar-backup-pl-'), 'store');
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId: plain } = await s.create({ title: 'plain' });
    await s.append(plain, [msg('user', 'hello'), msg('assistant', 'hi')]);
    const { sessionId: rich } = await s.create({ title: 'state and blob', blobThreshold: 1024 });
    await s.append(rich, [msg('user', 'go'), toolCall('x'.repeat(3000))]);
    await s.setState(rich, 'plan', { step: 2 });
    const { sessionId: compacted } = await s.create({ title: 'compacted' });
    await s.append(compacted, [msg('user', 'a'), msg('assistant', 'b')]);
    await s.compact(compacted, { summary: 'they spoke', throughSeq: 2 });
    await s.append(compacted, [msg('user', 'c')]);
    const { sessionId: trashed } = await s.create({ title: 'trashed' });
    await s.append(trashed, [msg('user', 'bye')]);
    await s.delete(trashed);
    await s.closeAll();

    const out = tempDir('sidecar-backup-pl-out-');
    const scratch = tempDir('sidecar-backup-pl-images-');
    const rec = new CrashRecorder(out);
    const partial = path.join(out, 'copy.incomplete');
    const result = await backupStore(root, partial, { fs: rec.layer });
    publishBackup(partial, path.join(out, 'copy'), rec.layer);
    rec.finish();
    expect(result.sessions).toBe(3);
    expect(result.trashed).toBe(1);

    // What a whole copy holds: every file the backup wrote, as it wrote it (the marker gone).
    const whole = filesOf(path.join(out, 'copy'));
    expect([...whole.keys()].some((k) => k.startsWith('history/'))).toBe(true);
    expect([...whole.keys()].some((k) => k.startsWith('blobs/'))).toBe(true);
    expect([...whole.keys()].some((k) => k.startsWith('trash/'))).toBe(true);
    expect([...whole.keys()].some((k) => k.includes('/state/'))).toBe(true);
    expect([...whole.keys()]).not.toContain(INCOMPLETE_MARKER);

    let published = 0;
    const { points } = await replay(rec, {
      scratch,
      tornLength: (n) => Math.max(1, n >> 1),
      newLedger: () => new Ledger(),
      check: async (image, point) => {
        const at = `crash before event ${point.at} of ${rec.events.length} (${point.variant})`;
        const copy = path.join(image, 'copy');
        if (!fs.existsSync(copy)) return; // not published: nothing there looks like a backup
        published++;
        const got = filesOf(copy);
        expect([...got.keys()].sort(), at).toEqual([...whole.keys()].sort());
        for (const [name, bytes] of whole) expect(got.get(name)?.equals(bytes), `${at}: ${name}`).toBe(true);
        const report = await verifyStore(copy);
        expect(report.ok, `${at}: ${JSON.stringify(report.totals)}`).toBe(true);
      },
    });
    expect(points).toBeGreaterThan(20);
    expect(published).toBeGreaterThan(0); // the crash after the last sync keeps the published copy
  }, 120_000);
});
