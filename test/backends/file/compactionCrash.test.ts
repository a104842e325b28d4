import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import type { CompactionStep } from '../../../src/backends/file/journal/compact.js';
import { StoreError } from '../../../src/domain/errors.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import type { RecordInput, StoredRecord } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { eio, indexSettled, journalOf, lines, note, store, storeError } from './storeHelpers.js';

/**
 * A compaction interrupted at every step (protocol/README.md 12.1): through the test seam
 * (hooks.compactionStep throws after 'scanned' | 'copied' | 'archived' | 'written' | 'renamed' | 'synced'), through one
 * failing file-system call (renameSync / fsyncSync / fdatasync / writeSync failing at its n-th call), and
 * through a simulated crash (from the n-th file-system call of any kind on, every call fails, so
 * nothing is cleaned up). The failing store instance is then abandoned without closing it, and
 * a fresh store opens the same root: the old journal is authoritative before the rename (and
 * byte-identical), the new one after; every acknowledged record is readable from the active
 * journal or an archive; the error's stage says which; the next write open removes the temps.
 */

const archiveOf = (root: string, id: string, g: number) => path.join(root, 'history', id, `${g}.jsonl`);
const historyDirOf = (root: string, id: string) => path.join(root, 'history', id);
const strip = ({ seq: _s, ts: _t, ...rest }: StoredRecord) => rest;

/** Every call of the layer goes to node's fs, unless armed: then the n-th counted call fails. */
function faultyFs() {
  const state = {
    armed: false,
    /** Count only this method's calls (all methods when undefined). */
    only: undefined as keyof FsLayer | undefined,
    failAt: 0,
    calls: 0,
    /** After the fault every call fails: the process is as good as dead. */
    crash: false,
    dead: false,
    failed: undefined as string | undefined,
  };
  const layer = {} as Record<string, unknown>;
  for (const key of Object.keys(nodeFs) as Array<keyof FsLayer>) {
    layer[key] = (...args: unknown[]) => {
      if (state.dead) throw eio();
      if (state.armed && (state.only === undefined || state.only === key)) {
        state.calls += 1;
        if (state.calls === state.failAt) {
          state.failed = key;
          if (state.crash) state.dead = true;
          throw eio();
        }
      }
      return (nodeFs[key] as (...a: unknown[]) => unknown)(...args);
    };
  }
  return { layer: layer as unknown as FsLayer, state };
}

async function readAll(s: FileSessionStore, id: string, generation?: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await s.read(id, { afterSeq, limit: 1000, ...(generation === undefined ? {} : { generation }) });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

/**
 * A session with `generations` compactions behind it and records after the last one (healthy
 * fs), closed. Returns what was acknowledged and the journal's bytes.
 */
async function fixture(generations: number) {
  const root = tempDir();
  const s = store(root);
  const { sessionId } = await s.create({ title: 'crash', systemPrompt: 'sys' });
  const acked = new Map<number, RecordInput>();
  let lastSeq = 0;
  const append = async (records: RecordInput[]) => {
    const r = await s.append(sessionId, records);
    records.forEach((rec, i) => acked.set(r.firstSeq + i, rec));
    lastSeq = r.lastSeq;
  };
  const round = async () => {
    await append([note(lastSeq + 1)]);
    await append([note(lastSeq + 1, { pad: 'x'.repeat(300) }), note(lastSeq + 2), note(lastSeq + 3)]);
    await append([note(lastSeq + 1)]);
    await append([note(lastSeq + 1), note(lastSeq + 2)]);
  };
  await round();
  for (let g = 0; g < generations; g++) {
    await s.compact(sessionId, { summary: `earlier ${g}`, throughSeq: lastSeq - 3 });
    await round();
  }
  await s.closeAll();
  const journal = journalOf(root, sessionId);
  return { root, sessionId, acked, lastSeq, generation: generations, journal, before: fs.readFileSync(journal), firstSeq: generations === 0 ? 1 : Number(JSON.parse(lines(fs.readFileSync(journal))[1]!.toString()).seq) };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

function tempsOf(root: string, id: string): string[] {
  const found: string[] = [];
  if (fs.existsSync(journalOf(root, id) + '.tmp')) found.push('journal.jsonl.tmp');
  const dir = historyDirOf(root, id);
  if (fs.existsSync(dir)) for (const n of fs.readdirSync(dir)) if (n.endsWith('.tmp')) found.push(`history/${n}`);
  return found;
}

/**
 * After an interrupted compaction of `fx` (the error it failed with, if any), checks the store
 * from a fresh instance; returns whether the new journal had been renamed in and the temps left.
 */
/** A fresh fixture compacted through a file-system layer armed with `fault`; the instance is then abandoned. */
async function compactUnder(earlier: number, fault: Record<string, unknown>, summary: string) {
  const fx = await fixture(earlier);
  const throughSeq = fx.lastSeq - 2;
  const { layer, state } = faultyFs();
  const s = store(fx.root, { fs: layer });
  await s.open(fx.sessionId, 'write');
  await indexSettled(s);
  Object.assign(state, { armed: true, calls: 0, ...fault });
  let err: unknown;
  try {
    await s.compact(fx.sessionId, { summary, throughSeq });
  } catch (e) {
    err = e;
  }
  await indexSettled(s);
  return { fx, throughSeq, state, err };
}

async function verifyAfter(fx: Fixture, err: unknown, throughSeq: number): Promise<{ renamed: boolean; temps: string[] }> {
  const { root, sessionId: id } = fx;
  const now = fs.readFileSync(fx.journal);
  const first = JSON.parse(lines(now)[1]!.toString()) as Record<string, unknown>;
  const renamed = first.kind === 'checkpoint' && first.generation === fx.generation + 1;
  if (err !== undefined) {
    expect(err, 'a StoreError').toBeInstanceOf(StoreError);
    const e = err as StoreError;
    expect(e.details.stage, `${e.kind}: ${e.message}`).toBe(renamed ? 'postCommit' : 'preCommit');
    expect(e.kind).toBe(renamed ? 'Uncertain' : 'NotWritten');
  }
  if (renamed) {
    // The new generation: the same header, its checkpoint, the old suffix byte for byte.
    const [h, cp] = lines(now) as [Buffer, Buffer];
    expect(h.equals(lines(fx.before)[0] as Buffer)).toBe(true);
    expect(JSON.parse(cp.toString())).toMatchObject({ seq: throughSeq, throughSeq, archived: { generation: fx.generation, bytes: fx.before.length } });
    let at = 0;
    for (const line of lines(fx.before)) {
      const m = /^\{"seq":(\d+),/.exec(line.toString('latin1', 0, 40));
      if (m && Number(m[1]) > throughSeq) break;
      at += line.length;
    }
    expect(now.subarray(h.length + cp.length).equals(fx.before.subarray(at))).toBe(true);
    expect(fs.readFileSync(archiveOf(root, id, fx.generation)).equals(fx.before)).toBe(true);
  } else {
    expect(now.equals(fx.before), 'the old journal is untouched').toBe(true);
  }
  const temps = tempsOf(root, id);
  const fresh = store(root);
  // A reader first: it never cleans (it may run next to a writer).
  const active = await readAll(fresh, id);
  expect(active.map((r) => r.seq)).toEqual(active.map((_, i) => active[0]!.seq + i));
  const opened = await fresh.open(id, 'write');
  expect(opened.lastSeq).toBe(fx.lastSeq);
  expect(tempsOf(root, id), 'temps removed by the write open').toEqual([]);

  const generation = fx.generation + (renamed ? 1 : 0);
  const history = await fresh.history(id);
  expect(history.map((h) => h.generation), 'one entry per archived generation').toEqual(Array.from({ length: generation }, (_, g) => g));
  const bySeq = new Map<number, StoredRecord>();
  for (let g = 0; g <= generation; g++) {
    const recs = g === generation ? await readAll(fresh, id) : await readAll(fresh, id, g);
    expect(recs.map((r) => r.seq), `generation ${g} gapless`).toEqual(recs.map((_, i) => recs[0]!.seq + i));
    for (const r of recs) if (r.kind !== 'checkpoint') bySeq.set(r.seq, r);
  }
  for (const [seq, rec] of fx.acked) expect(strip(bySeq.get(seq) ?? ({} as StoredRecord)), `seq ${seq}`).toEqual(rec);

  // The store carries on: another compaction (over a stale archive of the same generation, if
  // the crash left one) and an append.
  const res = await fresh.compact(id, { summary: 'after the crash', throughSeq: fx.lastSeq - 1 });
  expect(res.generation).toBe(generation + 1);
  expect(await fresh.append(id, [note(fx.lastSeq + 1)])).toEqual({ firstSeq: fx.lastSeq + 1, lastSeq: fx.lastSeq + 1 });
  expect((await fresh.history(id)).map((h) => h.generation)).toEqual(Array.from({ length: generation + 1 }, (_, g) => g));
  await fresh.closeAll();
  const last = store(root);
  expect((await readAll(last, id)).map((r) => r.seq)).toEqual([fx.lastSeq - 1, fx.lastSeq, fx.lastSeq + 1]);
  await last.closeAll();
  return { renamed, temps };
}

const STEPS: Array<{ step: CompactionStep; renamed: boolean }> = [
  { step: 'scanned', renamed: false },
  { step: 'copied', renamed: false },
  { step: 'archived', renamed: false },
  { step: 'written', renamed: false },
  { step: 'renamed', renamed: true },
  { step: 'synced', renamed: true },
];

describe.each([0, 1])('compaction interrupted (after %i earlier compactions)', (earlier) => {
  it.each(STEPS)('the step hook throws after $step → stage and authoritative journal as documented', async ({ step, renamed }) => {
    const fx = await fixture(earlier);
    const throughSeq = fx.lastSeq - 2;
    const s = store(fx.root, { hooks: { compactionStep: (at) => { if (at === step) throw new Error(`crash after ${at}`); } } });
    await s.open(fx.sessionId, 'write');
    await indexSettled(s);
    const err = await storeError(s.compact(fx.sessionId, { summary: `crash ${step}`, throughSeq }), renamed ? 'Uncertain' : 'NotWritten');
    expect(err.details.stage).toBe(renamed ? 'postCommit' : 'preCommit');
    // In this instance: before the rename the session stays writable; after it, it is fail-stopped
    // (its view may be ahead of what a crash would leave on disk).
    if (renamed) await storeError(s.append(fx.sessionId, [note(999)]), 'ReadOnly');
    await indexSettled(s);
    // Abandoned without closing.
    const out = await verifyAfter(fx, err, throughSeq);
    expect(out.renamed).toBe(renamed);
  });

  it.each(['renameSync', 'fsyncSync', 'fdatasync', 'writeSync'] as const)('%s failing at its n-th call, for every n', async (method) => {
    let n = 0;
    const seen = { preCommit: 0, postCommit: 0 };
    for (;;) {
      n += 1;
      const { fx, throughSeq, state, err } = await compactUnder(earlier, { only: method, failAt: n }, `fault ${method} ${n}`);
      state.armed = false;
      if (err === undefined) {
        const { renamed } = await verifyAfter(fx, undefined, throughSeq);
        expect(renamed, 'the compaction succeeded').toBe(true);
        if (state.failed === undefined) break; // n is past the compaction's last call
        // The fault hit the index entry written after the commit: a cache, its failure only warned.
        continue;
      }
      expect(state.failed).toBe(method);
      const { renamed } = await verifyAfter(fx, err, throughSeq);
      seen[renamed ? 'postCommit' : 'preCommit'] += 1;
      expect(n).toBeLessThan(200);
    }
    expect(seen.preCommit).toBeGreaterThan(0);
    if (method === 'fsyncSync') expect(seen.postCommit, 'the directory sync after the rename').toBeGreaterThan(0);
  });

  it('a crash at every file-system call of a compaction: nothing acknowledged is lost; temps are cleaned by the next write open', async () => {
    let n = 0;
    const left = new Set<string>();
    const seen = { preCommit: 0, postCommit: 0 };
    for (;;) {
      n += 1;
      const { fx, throughSeq, state, err } = await compactUnder(earlier, { crash: true, failAt: n }, `crash at call ${n}`);
      if (err === undefined) {
        // The crash came after the compaction returned from its last step (the index write,
        // a cache, only warns), or never came.
        await verifyAfter(fx, undefined, throughSeq);
        if (!state.dead) break;
        continue;
      }
      expect(state.dead).toBe(true);
      const { renamed, temps } = await verifyAfter(fx, err, throughSeq);
      temps.forEach((t) => left.add(t.replace(/\d+\.jsonl\.tmp$/, 'N.jsonl.tmp')));
      seen[renamed ? 'postCommit' : 'preCommit'] += 1;
      expect(n).toBeLessThan(400);
    }
    // The enumeration met both kinds of leftovers, and both sides of the commit point.
    expect([...left].sort()).toEqual(['history/N.jsonl.tmp', 'journal.jsonl.tmp']);
    expect(seen.preCommit).toBeGreaterThan(5);
    expect(seen.postCommit).toBeGreaterThan(0);
  });
});

describe('compaction: after a failure before the commit', () => {
  it('the same instance stays writable, history lists no phantom generation, and a retry succeeds', async () => {
    const fx = await fixture(1);
    let fail: CompactionStep | undefined = 'written';
    const s = store(fx.root, { hooks: { compactionStep: (at) => { if (at === fail) throw new Error('injected'); } } });
    await s.open(fx.sessionId, 'write');
    await storeError(s.compact(fx.sessionId, { summary: 'x', throughSeq: fx.lastSeq - 1 }), 'NotWritten');
    // The archive of the current generation exists now, but describes nothing new.
    expect(fs.existsSync(archiveOf(fx.root, fx.sessionId, 1))).toBe(true);
    expect((await s.history(fx.sessionId)).map((h) => h.generation)).toEqual([0]);
    expect(await s.append(fx.sessionId, [note(fx.lastSeq + 1)])).toEqual({ firstSeq: fx.lastSeq + 1, lastSeq: fx.lastSeq + 1 });
    fail = undefined;
    const res = await s.compact(fx.sessionId, { summary: 'retry', throughSeq: fx.lastSeq });
    expect(res).toMatchObject({ generation: 2, checkpointSeq: fx.lastSeq, archived: { generation: 1 } });
    // The retry re-archived generation 1 with the append made in between.
    const archived = await readAll(s, fx.sessionId, 1);
    expect(archived[archived.length - 1]?.seq).toBe(fx.lastSeq + 1);
    expect((await s.history(fx.sessionId)).map((h) => h.generation)).toEqual([0, 1]);
    await s.closeAll();
  });

  it('a file descriptor is not leaked by a failed compaction', async () => {
    const open = new Set<number>();
    const counting: FsLayer = {
      ...nodeFs,
      openSync: (p, flags, mode) => {
        const fd = nodeFs.openSync(p, flags, mode);
        open.add(fd);
        return fd;
      },
      closeSync: (fd) => {
        open.delete(fd);
        nodeFs.closeSync(fd);
      },
      close: async (fd) => { // the replaced journal's descriptor is closed in the thread pool
        await nodeFs.close(fd);
        open.delete(fd);
      },
    };
    for (const step of ['scanned', 'copied', 'archived', 'written', 'renamed', 'synced'] as const) {
      const f2 = await fixture(0);
      const s = store(f2.root, { fs: counting, hooks: { compactionStep: (at) => { if (at === step) throw new Error('injected'); } } });
      await s.open(f2.sessionId, 'write');
      await indexSettled(s);
      const before = new Set(open);
      await s.compact(f2.sessionId, { summary: 'x', throughSeq: 2 }).catch(() => undefined);
      await indexSettled(s);
      // Exactly the journal's descriptor stays open (the old one or the new one).
      const added = [...open].filter((fd) => !before.has(fd));
      const removed = [...before].filter((fd) => !open.has(fd));
      expect(added.length - removed.length, `after ${step}`).toBe(0);
      await s.closeAll();
    }
  });
});
