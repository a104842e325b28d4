import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';
import { argsOf, journalOf, note, store, toolCall } from './storeHelpers.js';

/**
 * Issue 14, fault injection (simulated: in process, over a faulting FsLayer): every rename and
 * every fsync/fdatasync of a compaction, a state/set, a state/delete and an append that stores a
 * blob fails once with EIO, in turn (run k fails the k-th such call of the operation), and the
 * answer must be the one protocol/STORAGE.md "Outcomes of a failed step" gives for that step:
 *
 *   - before the operation's change became visible (compaction: the new journal renamed in;
 *     state: the value file replaced or removed; blob append: journal bytes written) NotWritten —
 *     the session stays writable and nothing changed;
 *   - after it, Uncertain — the session is fail-stopped (ReadOnly, reason failStop) in this
 *     process, and a fresh store opens it without Corrupt, with every record;
 *   - a failed write of the index entry (a cache, after the commit) is no error at all.
 *
 * "Visible" is read from the disk after the failure, not from the code under test, so the test
 * keeps its meaning when the steps move (state values are written through the seam by
 * durableFile's replaceAtomically: their temp file's fdatasync, the rename and the directory
 * fsync each fail here in turn).
 */

/** nodeFs whose `at`-th rename/fsync/fdatasync (counted while `armed`) fails once with EIO, changing nothing. */
function eioLayer(at: number) {
  const state = { armed: false, calls: 0, fired: '', target: '' };
  const maybeFail = (call: string, target = '') => {
    if (!state.armed) return;
    state.calls += 1;
    if (state.calls === at) {
      state.fired = call;
      state.target = target;
      throw Object.assign(new Error(`injected EIO (${call})`), { code: 'EIO', syscall: call });
    }
  };
  const layer: FsLayer = {
    ...nodeFs,
    renameSync: (from, to) => { maybeFail('rename', to); nodeFs.renameSync(from, to); },
    fsyncSync: (fd) => { maybeFail('fsync'); nodeFs.fsyncSync(fd); },
    fdatasync: async (fd) => { maybeFail('fdatasync'); await nodeFs.fdatasync(fd); },
  };
  return { layer, state };
}

type Op = 'compact' | 'state/set' | 'state/delete' | 'blob append';

const KEY = 'plan';
const stateFile = (root: string, id: string) => path.join(root, 'sessions', id, 'state', `${KEY}.json`);
const BIG = (k: number) => `${'blob payload '.repeat(400)}${k}`;

async function prepared(root: string, op: Op): Promise<string> {
  const s = store(root);
  const { sessionId } = await s.create({ title: 'eio', blobThreshold: 1024 });
  for (let i = 1; i <= 4; i++) await s.append(sessionId, [note(i)]);
  if (op === 'state/set' || op === 'state/delete') await s.setState(sessionId, KEY, { v: 'old' });
  await s.closeAll();
  return sessionId;
}

/** What "the change is visible" means for each operation, read from the disk. */
function visible(op: Op, root: string, id: string, before: { ino: number; size: number }): boolean {
  const st = fs.statSync(journalOf(root, id));
  switch (op) {
    case 'compact': return st.ino !== before.ino; // the compacted journal was renamed in
    case 'blob append': return st.size !== before.size; // the record's bytes reached the journal
    case 'state/set': return fs.existsSync(stateFile(root, id)) && JSON.parse(fs.readFileSync(stateFile(root, id), 'utf8')).value?.v === 'new';
    case 'state/delete': return !fs.existsSync(stateFile(root, id));
  }
}

async function run(s: FileSessionStore, op: Op, id: string, k: number): Promise<unknown> {
  switch (op) {
    case 'compact': return s.compact(id, { summary: 'first two', throughSeq: 2 });
    case 'state/set': return s.setState(id, KEY, { v: 'new' });
    case 'state/delete': return s.deleteState(id, KEY);
    case 'blob append': return s.append(id, [toolCall({ $attach: BIG(k) })]);
  }
}

describe('EIO once at every rename, fsync and fdatasync of compaction, state values and blob appends (simulated): the answer follows the outcome table', () => {
  for (const op of ['compact', 'state/set', 'state/delete', 'blob append'] as const) {
    it(`${op}: NotWritten (session writable, nothing changed) before the change is visible, Uncertain and fail-stop after`, async () => {
      const outcomes = new Map<string, number>();
      for (let k = 1; ; k++) {
        const root = tempDir();
        const id = await prepared(root, op);
        const { layer, state } = eioLayer(k);
        const s = store(root, { fs: layer });
        await s.open(id, 'write');
        const st = fs.statSync(journalOf(root, id));
        const before = { ino: st.ino, size: st.size };
        state.armed = true;
        let err: { kind?: string; details?: Record<string, unknown> } | undefined;
        try {
          await run(s, op, id, k);
        } catch (e) {
          err = e as typeof err;
        }
        state.armed = false;
        if (!state.fired) {
          expect(err, `${op}: the run without a failure`).toBeUndefined();
          await s.closeAll();
          break;
        }
        const at = `${op}, EIO at call ${k} (${state.fired})`;
        if (path.basename(path.dirname(state.target)) === 'index') {
          // the index entry (a cache, written after the commit): its failure is logged, never answered
          expect(err, at).toBeUndefined();
          outcomes.set('index entry ok', (outcomes.get('index entry ok') ?? 0) + 1);
          expect(await s.append(id, [note(99)]), at).toMatchObject({ firstSeq: expect.any(Number) });
          await s.closeAll();
          continue;
        }
        const changed = visible(op, root, id, before);
        expect(err?.kind, at).toBe(changed ? 'Uncertain' : 'NotWritten');
        if (op === 'compact') expect(err?.details?.stage, at).toBe(changed ? 'postCommit' : 'preCommit');
        outcomes.set(`${state.fired} ${err?.kind}`, (outcomes.get(`${state.fired} ${err?.kind}`) ?? 0) + 1);
        // this process: fail-stopped after Uncertain; writable (and unchanged) after NotWritten
        const next = await s.append(id, [note(99)]).then(() => undefined, (e: { kind?: string; details?: { reason?: string } }) => e);
        if (changed) {
          expect(next?.kind, at).toBe('ReadOnly');
          expect(next?.details?.reason, at).toBe('failStop');
        } else {
          expect(next, at).toBeUndefined();
          if (op === 'compact') expect(await s.history(id), at).toEqual([]);
          if (op === 'blob append') expect((await s.read(id)).records.map((r) => r.seq), at).toEqual([1, 2, 3, 4, 5]);
          if (op.startsWith('state/')) expect(await s.getState(id, KEY), at).toEqual({ v: 'old' });
        }
        s.abandon();
        // a fresh store (a new process) opens it for writing, without Corrupt, every record there
        const t = store(root);
        const opened = await t.open(id, 'write');
        const seqs = (await t.read(id, { inline: true })).records.filter((r) => r.kind !== 'checkpoint').map((r) => r.seq);
        for (const g of await t.history(id)) seqs.unshift(...(await t.read(id, { generation: g.generation })).records.map((r) => r.seq));
        expect([...new Set(seqs)].sort((a, b) => a - b), at).toEqual(Array.from({ length: opened.lastSeq }, (_, i) => i + 1));
        expect(opened.lastSeq, at).toBeGreaterThanOrEqual(4);
        if (op === 'blob append') {
          // the blob-holding record, when it is there (Uncertain), reads back inline whole: its blob is durable
          const shots = (await t.read(id, { inline: true })).records.filter((r) => r.kind === 'message');
          expect(shots.length, at).toBe(changed ? 1 : 0);
          for (const r of shots) expect(argsOf(r) === BIG(k), at).toBe(true);
        }
        await t.closeAll();
      }
      // every kind of call the operation makes was failed at least once
      expect([...outcomes.keys()].length, `${op}: ${JSON.stringify([...outcomes])}`).toBeGreaterThan(0);
      if (op === 'compact') expect([...outcomes.keys()].sort()).toEqual(expect.arrayContaining(['fsync NotWritten', 'rename NotWritten', 'fsync Uncertain']));
      if (op === 'blob append') expect([...outcomes.keys()]).toEqual(expect.arrayContaining(['fdatasync Uncertain']));
      if (op.startsWith('state/')) expect([...outcomes.keys()]).toEqual(expect.arrayContaining(['fsync Uncertain']));
    });
  }
});
