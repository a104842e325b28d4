/**
 * The repair's guards in process (src/backends/file/repair.ts; over the binary:
 * test/cli/repair.test.ts; under power loss: repairPowerLoss.test.ts): a session that is not
 * damaged, one held by a writer, one that does not exist, and a repair that fails halfway
 * change nothing (no temp file, the journal byte for byte); a batch whose last lines were lost
 * is closed by repair events in that batch, so the store opens it and appends after it; the
 * events say what was lost and where the evidence is.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPAIR_EVENT, repairSession } from '../../../src/backends/file/repair.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { SessionLease } from '../../../src/backends/file/leases.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';
import { msg } from '../../cli/helpers.js';

/** A store with one session of `batches` batches of 3 records, its journal's lines altered at `damage` (1-based record lines). */
async function sessionWith(batches: number, damage: number[]): Promise<{ root: string; id: string; layout: StoreLayout; journal: string }> {
  const root = path.join(tempDir('sidecar-repair-unit-'), 'store');
  const s = new FileSessionStore(root);
  const { sessionId: id } = await s.create({ title: 'r' });
  for (let b = 0; b < batches; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `b${b} r${k}`)));
  await s.closeAll();
  const layout = new StoreLayout(root);
  const journal = layout.journal(id);
  const lines = fs.readFileSync(journal, 'utf8').split('\n');
  for (const i of damage) {
    const l = lines[i] as string;
    const at = Math.floor(l.length / 2);
    lines[i] = `${l.slice(0, at)}${l[at] === 'Q' ? 'R' : 'Q'}${l.slice(at + 1)}`;
  }
  fs.writeFileSync(journal, lines.join('\n'));
  return { root, id, layout, journal };
}

const leftovers = (layout: StoreLayout, id: string) => fs.readdirSync(layout.sessionDir(id)).filter((n) => n.endsWith('.tmp'));

describe('repairSession', () => {
  it('a journal with nothing damaged is left as it is (repaired: false, no evidence, no temp file)', async () => {
    const { layout, id, journal } = await sessionWith(2, []);
    const before = fs.readFileSync(journal);
    const r = await repairSession({ ...nodeFs }, layout, id);
    expect(r).toMatchObject({ repaired: false, kept: 6, damaged: [], lostSeqs: [] });
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
    expect(fs.existsSync(layout.recoverySessionDir(id))).toBe(false);
    expect(leftovers(layout, id)).toEqual([]);
  });

  it('a session that does not exist is SessionNotFound', async () => {
    const { layout } = await sessionWith(1, []);
    await expect(repairSession({ ...nodeFs }, layout, '01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({ kind: 'SessionNotFound' });
  });

  it('a session another writer holds is refused (SessionLocked) and nothing changes', async () => {
    const { layout, id, journal } = await sessionWith(2, [4]);
    const before = fs.readFileSync(journal);
    // the writer lease of `id`, as a sidecar holds it (a sidecar's open of this damaged journal would fail: the lease is taken directly)
    const lease = await SessionLease.acquire({ ...nodeFs }, layout, id, 10_000);
    try {
      await expect(repairSession({ ...nodeFs }, layout, id)).rejects.toMatchObject({ kind: 'SessionLocked' });
      expect(fs.readFileSync(journal).equals(before)).toBe(true);
      expect(leftovers(layout, id)).toEqual([]);
    } finally {
      await lease.release();
    }
  });

  it('a failure before the commit point (the evidence link fails) changes nothing: no temp file, the journal byte for byte, the lease given back', async () => {
    const { layout, id, journal } = await sessionWith(3, [4]);
    const before = fs.readFileSync(journal);
    const failing = { ...nodeFs, linkSync: () => { throw Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' }); } };
    await expect(repairSession(failing, layout, id)).rejects.toThrow(/EIO/);
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
    expect(leftovers(layout, id)).toEqual([]);
    const r = await repairSession({ ...nodeFs }, layout, id); // the lease was given back: a rerun works
    expect(r.repaired).toBe(true);
  });

  it('a batch whose last lines were lost is closed by repair events in that batch: the store opens it and appends after it', async () => {
    const { root, layout, id, journal } = await sessionWith(3, [8, 9]); // the last two lines of batch 3 (seqs 8, 9)
    const damaged = fs.readFileSync(journal);
    const r = await repairSession({ ...nodeFs }, layout, id);
    expect(r).toMatchObject({ repaired: true, kept: 7, lostSeqs: [8, 9] });
    expect(fs.readFileSync(path.join(root, r.evidence as string)).equals(damaged)).toBe(true);
    expect(fs.existsSync(layout.indexEntry(id))).toBe(false); // removed: the next writer writes it anew
    expect(fs.statSync(journal).mode & 0o777).toBe(0o600);
    const s = new FileSessionStore(root);
    try {
      const { records } = await s.read(id);
      expect(records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      const events = records.filter((x) => x.kind === 'event') as unknown as Array<{ seq: number; type: string; payload: Record<string, unknown> }>;
      expect(events.map((e) => [e.seq, e.type])).toEqual([[8, REPAIR_EVENT], [9, REPAIR_EVENT], [10, REPAIR_EVENT]]);
      expect(events[0]?.payload).toEqual({ lost: 8, evidence: r.evidence });
      expect(events[2]?.payload).toMatchObject({ kept: 7, lostSeqs: [8, 9], evidence: r.evidence, removed: [{ lines: '9-10' }] });
      await s.open(id, 'write');
      const { lastSeq } = await s.append(id, [msg('user', 'after')]);
      expect(lastSeq).toBe(11);
    } finally {
      await s.closeAll();
    }
  });

  it('a lost first line of a batch is taken by an event in that batch (with the batch end), and every line keeps its batch', async () => {
    const { layout, id, journal } = await sessionWith(3, [4]); // seq 4, the first of batch 4-6
    const r = await repairSession({ ...nodeFs }, layout, id);
    expect(r.lostSeqs).toEqual([4]);
    const lines = fs.readFileSync(journal, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { seq: number; batchEnd?: number; kind: string });
    expect(lines.map((l) => [l.seq, l.batchEnd ?? null])).toEqual([[1, 3], [2, 3], [3, 3], [4, 6], [5, 6], [6, 6], [7, 9], [8, 9], [9, 9], [10, null]]);
    expect(lines[3]?.kind).toBe('event');
  });

  it('a batch whose last lines were lost: the events carry that batch end', async () => {
    const { layout, id, journal } = await sessionWith(3, [8, 9]);
    await repairSession({ ...nodeFs }, layout, id);
    const lines = fs.readFileSync(journal, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { seq: number; batchEnd?: number });
    expect(lines.map((l) => [l.seq, l.batchEnd ?? null])).toEqual([[1, 3], [2, 3], [3, 3], [4, 6], [5, 6], [6, 6], [7, 9], [8, 9], [9, 9], [10, null]]);
  });

  it('a compacted journal (starting at its checkpoint) gets events only for the seqs it lost, none before the checkpoint', async () => {
    const root = path.join(tempDir('sidecar-repair-unit-'), 'store');
    const s = new FileSessionStore(root);
    const { sessionId: id } = await s.create({ title: 'c' });
    for (let b = 0; b < 2; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `b${b} r${k}`)));
    await s.compact(id, { summary: 'six records', throughSeq: 6 });
    for (let b = 2; b < 4; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `b${b} r${k}`)));
    await s.closeAll();
    const layout = new StoreLayout(root);
    const journal = layout.journal(id);
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    const firstSeq = (JSON.parse(lines[1] as string) as { seq: number }).seq;
    expect(firstSeq).toBeGreaterThan(1); // the checkpoint
    const l = lines[3] as string; // a record of the first batch after it
    lines[3] = `${l.slice(0, 40)}${l[40] === 'Q' ? 'R' : 'Q'}${l.slice(41)}`;
    fs.writeFileSync(journal, lines.join('\n'));
    const lost = (JSON.parse(l) as { seq: number }).seq;
    const r = await repairSession({ ...nodeFs }, layout, id);
    expect(r.lostSeqs).toEqual([lost]);
    const t = new FileSessionStore(root);
    try {
      const { records } = await t.read(id);
      expect(records.filter((x) => x.kind === 'event').map((x) => x.seq)).toEqual([lost, (records.at(-1) as { seq: number }).seq]);
    } finally {
      await t.closeAll();
    }
  });

  it('a journal repeating a seq cannot be ordered: Corrupt, and nothing changes', async () => {
    const { layout, id, journal } = await sessionWith(3, [5]);
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    lines.splice(8, 0, lines[2] as string); // seq 2 again after seq 7
    fs.writeFileSync(journal, lines.join('\n'));
    const before = fs.readFileSync(journal);
    await expect(repairSession({ ...nodeFs }, layout, id)).rejects.toMatchObject({ kind: 'Corrupt', message: expect.stringMatching(/repeats seq 2 \(after seq 7\)/) });
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
    expect(leftovers(layout, id)).toEqual([]);
    expect(fs.existsSync(layout.recoverySessionDir(id))).toBe(false);
  });

  it('an encrypted journal is repaired sealed: its events too are under the key, and it reads back with it', async () => {
    const key = new StoreKey(randomBytes(32));
    const root = path.join(tempDir('sidecar-repair-unit-'), 'store');
    const s = new FileSessionStore(root, { encryptionKey: key });
    const { sessionId: id } = await s.create({ title: 'sealed' });
    for (let b = 0; b < 3; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `b${b} r${k}`)));
    await s.closeAll();
    const layout = new StoreLayout(root);
    const journal = layout.journal(id);
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    const l = lines[5] as string;
    const at = Math.floor(l.length / 2);
    lines[5] = `${l.slice(0, at)}${l[at] === 'Q' ? 'R' : 'Q'}${l.slice(at + 1)}`;
    fs.writeFileSync(journal, lines.join('\n'));
    await expect(repairSession({ ...nodeFs }, layout, id)).rejects.toMatchObject({ kind: 'KeyMismatch' });
    const r = await repairSession({ ...nodeFs }, layout, id, { key });
    expect(r.lostSeqs).toEqual([5]);
    const text = fs.readFileSync(journal, 'utf8');
    expect(text).not.toContain(REPAIR_EVENT);
    expect(text).not.toContain('b0 r1');
    const t = new FileSessionStore(root, { encryptionKey: key });
    try {
      const { records } = await t.read(id);
      expect(records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(records[4]).toMatchObject({ kind: 'event', type: REPAIR_EVENT, payload: { lost: 5 } });
    } finally {
      await t.closeAll();
    }
  });
});

