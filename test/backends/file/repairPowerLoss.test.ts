/**
 * `repair SESSION` under simulated power loss (test/torture/crashFs.ts): a journal damaged in
 * its middle is repaired on a recording file-system layer, then a power cut is replayed before
 * every sync point of the repair (and after the last), in each variant. The promise (STORAGE.md,
 * "Repair"): after any crash the session's journal is either the damaged one, byte for byte, or
 * the repaired one, byte for byte — never a mix — and whenever it is the repaired one, the
 * damaged journal is kept as evidence under recovery/<id>/, byte for byte, and the store opens
 * the session with every intact record.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairSession } from '../../../src/backends/file/repair.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { CrashRecorder, replay } from '../../torture/crashFs.js';
import { Ledger } from '../../torture/model.js';
import { tempDir } from '../../helpers.js';
import { msg } from '../../cli/helpers.js';

describe('repair under simulated power loss', () => {
  it('at every sync point the journal is the damaged one or the repaired one, and the repaired one never without its evidence', async () => {
    const root = path.join(tempDir('sidecar-repair-pl-'), 'store');
    fs.mkdirSync(root, { mode: 0o700 });
    const rec = new CrashRecorder(root);
    const s = new FileSessionStore(root, { fs: rec.layer, leases: false });
    const { sessionId: id } = await s.create({ title: 'to repair' });
    for (let b = 0; b < 4; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `batch ${b} record ${k}`)));
    await s.closeAll();

    // One byte of line 5 (a record of batch 1) altered, through the seam and synced: the damage is durable.
    const layout = new StoreLayout(root);
    const journal = layout.journal(id);
    const before = fs.readFileSync(journal);
    const lines = before.toString('utf8').split('\n');
    const at = lines.slice(0, 5).reduce((n, l) => n + l.length + 1, 0) + Math.floor((lines[5] as string).length / 2);
    const fd = rec.layer.openSync(journal, fs.constants.O_RDWR);
    rec.layer.writeSync(fd, Buffer.from(before[at] === 0x51 ? 'R' : 'Q'), 0, 1, at);
    rec.layer.fsyncSync(fd);
    rec.layer.closeSync(fd);
    const damaged = fs.readFileSync(journal);
    const repairFrom = rec.events.length;

    const r = await repairSession(rec.layer, layout, id, { leaseStaleMs: 10_000 });
    rec.finish();
    expect(r.repaired).toBe(true);
    expect(r.lostSeqs).toEqual([5]);
    const repaired = fs.readFileSync(journal);
    expect(fs.readFileSync(path.join(root, r.evidence as string)).equals(damaged)).toBe(true);

    const seen = { damaged: 0, repaired: 0 };
    await replay(rec, {
      scratch: tempDir('sidecar-repair-pl-images-'),
      tornLength: (n) => Math.max(1, n >> 1),
      newLedger: () => new Ledger(),
      check: async (image, point) => {
        if (point.at < repairFrom) return; // the store being made, and damaged: not the repair
        const where = `crash before event ${point.at} of ${rec.events.length} (${point.variant})`;
        const now = fs.readFileSync(path.join(image, path.relative(root, journal)));
        if (now.equals(damaged)) return void seen.damaged++;
        expect(now.equals(repaired), `${where}: the journal is neither the damaged nor the repaired one`).toBe(true);
        seen.repaired++;
        const evidenceDir = path.join(image, 'recovery', id);
        const kept = fs.existsSync(evidenceDir) ? fs.readdirSync(evidenceDir).filter((n) => n.endsWith('-damaged-journal.jsonl')) : [];
        expect(kept.length, `${where}: the repaired journal without its evidence`).toBeGreaterThan(0);
        expect(kept.some((n) => fs.readFileSync(path.join(evidenceDir, n)).equals(damaged)), where).toBe(true);
        const fresh = new FileSessionStore(image, { leases: false });
        try {
          const { records } = await fresh.read(id);
          expect(records.length, where).toBe(13); // 11 intact, the lost seq's event, the closing event
        } finally {
          await fresh.closeAll();
        }
      },
    });
    expect(seen.damaged).toBeGreaterThan(0);
    expect(seen.repaired).toBeGreaterThan(0);
  }, 120_000);
});
