import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { StoreError } from '../../../src/domain/errors.js';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import type { StoredRecord } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { note, store } from './storeHelpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * A reader following a session across compactions made by another writer (protocol/README.md
 * §14.1, STORAGE.md "Following a session across compactions"), at the store level, with the
 * interleavings forced: a compaction runs *inside* the reader's first look at history/ (its
 * file-system seam runs it synchronously), so the reader meets two compactions between two of
 * its reads of the journal. Every record is delivered once, in order; a generation that cannot
 * be read ends the watch with an error, never with a skip.
 */

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Compacts the session through its last seq from outside any store instance: in another process (compactOnce.ts), waited for. */
function compactNow(root: string, id: string): void {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'compactOnce.ts'), root, id], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`compactOnce failed: ${r.stderr}`);
}

/** nodeFs that, once armed, compacts the session the first time the store touches history/<id>. */
function compactingSeam(root: string, id: string): { fs: FsLayer; arm(): void; fired(): boolean } {
  const dir = path.join(root, 'history', id);
  let armed = false;
  let fired = false;
  const fire = (p: string) => {
    if (!armed || !(p === dir || p.startsWith(`${dir}${path.sep}`))) return;
    armed = false;
    fired = true;
    compactNow(root, id);
  };
  return {
    fs: {
      ...nodeFs,
      readdirSync: (p) => {
        const names = nodeFs.readdirSync(p);
        fire(p); // after the listing: what it lists is already out of date
        return names;
      },
      openSync: (p, flags, mode) => {
        fire(p);
        return nodeFs.openSync(p, flags, mode);
      },
    },
    arm: () => void (armed = true),
    fired: () => fired,
  };
}

/** A session of 30 single-record appends, compacted through 10 and through 20; the writer has closed it. */
async function twiceCompacted(root: string): Promise<string> {
  const w = store(root);
  const { sessionId: id } = await w.create({});
  for (const i of range(1, 10)) await w.append(id, [note(i)]);
  await w.compact(id, { summary: 'one', throughSeq: 10 });
  for (const i of range(11, 20)) await w.append(id, [note(i)]);
  await w.compact(id, { summary: 'two', throughSeq: 20 });
  for (const i of range(21, 30)) await w.append(id, [note(i)]);
  await w.closeAll();
  return id;
}

/** Watches from `afterSeq` until `last` is delivered or the watch ends. */
async function follow(s: FileSessionStore, id: string, afterSeq: number, last: number, hold?: Promise<void>) {
  const got: StoredRecord[] = [];
  let ended: string | undefined;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => (done = r));
  const w = await s.watch(id, afterSeq, async (recs) => {
    await hold;
    got.push(...recs);
    if ((got.at(-1)?.seq ?? 0) >= last) done();
    return true;
  }, (reason) => {
    ended = reason;
    done();
  });
  return { got, finished, stop: () => w.stop(), ended: () => ended };
}

describe('following a session across compactions by another writer', () => {
  it('a compaction inside the reader’s catch-up (two between two reads of the journal) skips nothing', async () => {
    const root = tempDir();
    const id = await twiceCompacted(root);
    const seam = compactingSeam(root, id);
    const reader = store(root, { fs: seam.fs });
    seam.arm();
    const f = await follow(reader, id, 0, 30);
    await f.finished;
    f.stop();
    expect(seam.fired()).toBe(true);
    // the writer goes on after the seam's compaction (through 30)
    const w = store(root);
    await w.open(id, 'write');
    for (const i of range(31, 35)) await w.append(id, [note(i)]);
    const more = await follow(reader, id, 30, 35);
    await more.finished;
    more.stop();
    expect(f.got.map((r) => r.seq)).toEqual(range(1, 30));
    expect(f.got.map((r) => (r as unknown as { i: number }).i)).toEqual(range(1, 30)); // the originals, never a checkpoint
    expect(more.got.map((r) => r.seq)).toEqual(range(31, 35));
    await w.closeAll();
    await reader.closeAll();
  });

  it('session/history lists every archived generation while a compaction runs', async () => {
    const root = tempDir();
    const id = await twiceCompacted(root);
    const seam = compactingSeam(root, id);
    const reader = store(root, { fs: seam.fs });
    seam.arm();
    const gens = (await reader.history(id)).map((g) => g.generation);
    expect(seam.fired()).toBe(true);
    // a snapshot as of one instant: generations 0..k-1 of the journal it saw, none left out
    expect(gens).toEqual(range(0, gens.length - 1));
    expect(gens.length).toBeGreaterThanOrEqual(2);
    expect((await reader.history(id)).map((g) => g.generation)).toEqual([0, 1, 2]);
    await reader.closeAll();
  });

  it('a watcher held in delivery while the writer compacts twice gets every record once, in order', async () => {
    const root = tempDir();
    const w = store(root);
    const { sessionId: id } = await w.create({});
    await w.append(id, [note(1), note(2)]);
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const reader = store(root);
    const f = await follow(reader, id, 0, 40, hold);
    for (const i of range(3, 20)) await w.append(id, [note(i)]);
    await w.compact(id, { summary: 'one', throughSeq: 15 });
    for (const i of range(21, 30)) await w.append(id, [note(i)]);
    await w.compact(id, { summary: 'two', throughSeq: 28 });
    for (const i of range(31, 40)) await w.append(id, [note(i)]);
    release();
    await f.finished;
    f.stop();
    expect(f.got.map((r) => r.seq)).toEqual(range(1, 40));
    await w.closeAll();
    await reader.closeAll();
  });

  it('an archived generation that is gone ends the watch with an error, never with a skip', async () => {
    const root = tempDir();
    const id = await twiceCompacted(root);
    fs.rmSync(path.join(root, 'history', id, '1.jsonl'));
    const reader = store(root);
    // subscribing from before it: the records before the hole, then the end (error)
    const f = await follow(reader, id, 0, 30);
    await f.finished;
    expect(f.ended()).toBe('error');
    expect(f.got.map((r) => r.seq)).toEqual(range(1, 10));
    // subscribing from inside it: refused at once (Corrupt, naming the generation and the first seq missing)
    const err = await reader.watch(id, 10, () => true, () => {}).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).kind).toBe('Corrupt');
    expect((err as StoreError).details).toMatchObject({ reason: 'archiveMissing', generation: 1, seq: 11 });
    // after it: delivered as usual
    const after = await follow(reader, id, 20, 30);
    await after.finished;
    after.stop();
    expect(after.got.map((r) => r.seq)).toEqual(range(21, 30));
    await reader.closeAll();
  });

  it('a running watch that needs a generation removed meanwhile ends with an error after the records it could deliver', async () => {
    const root = tempDir();
    const w = store(root);
    const { sessionId: id } = await w.create({});
    for (const i of range(1, 5)) await w.append(id, [note(i)]);
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const reader = store(root);
    const f = await follow(reader, id, 0, 30, hold);
    for (const i of range(6, 20)) await w.append(id, [note(i)]);
    await w.compact(id, { summary: 'one', throughSeq: 20 });
    for (const i of range(21, 25)) await w.append(id, [note(i)]);
    await w.compact(id, { summary: 'two', throughSeq: 25 });
    fs.rmSync(path.join(root, 'history', id, '1.jsonl')); // it alone held 21..25
    release();
    await f.finished;
    expect(f.ended()).toBe('error');
    expect(f.got.map((r) => r.seq)).toEqual(range(1, 20)); // everything before the hole, nothing after it
    await w.closeAll();
    await reader.closeAll();
  });
});
