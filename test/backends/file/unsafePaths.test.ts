import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { refOf } from '../../../src/domain/blobRefs.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';
import { type Plant, PLANTS, plant, stillPlanted, victim, watchingFs } from './fileSafety.js';
import { indexOf, indexSettled, journalOf, note, sessionWith, store, storeError, toolCall } from './storeHelpers.js';

/**
 * Issue 14, hole 4, as a class: a symlink (to a file outside the store, or dangling) or a FIFO
 * planted at each path the store creates or opens. The file outside is never opened for writing
 * and never changed, nothing blocks on a FIFO, and the request is refused with UnsafeStore
 * (the planted entry is left in place for the operator). Where the store writes through a
 * temporary name, the name is random: it cannot be planted (shown by the names it uses).
 */

const BIG = 'x'.repeat(2048); // past a 1024-byte blob threshold: stored as a blob at a BlobRef position (tool-call arguments)

/** A store with leases on (the lock and holder paths are part of the class) over a watching layer. */
function watched(root: string) {
  const { fsl, opens } = watchingFs();
  const s = store(root, { leases: true, fs: fsl, leaseStaleMs: 5000 });
  return { s, opens };
}

afterEach(() => {
  vi.restoreAllMocks();
});

async function closeAll(s: FileSessionStore): Promise<void> {
  await s.closeAll();
}

describe('a planted symlink or FIFO is refused with UnsafeStore, never followed', { timeout: 20_000 }, () => {
  it.each(PLANTS)('the lease holder record locks/<id>.lock.holder.json (%s): session/open and a create are refused', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const holder = path.join(root, 'locks', `${id}.lock.holder.json`);
    plant(kind, holder, v);
    const { s, opens } = watched(root);
    const err = await storeError(s.open(id, 'write'), 'UnsafeStore');
    expect(err.details.reason).toMatch(kind === 'fifo' ? /not a regular file/ : /symbolic link/);
    stillPlanted(kind, holder);
    expect(fs.existsSync(path.join(root, 'locks', `${id}.lock`)), 'the lock was not given back').toBe(false);
    // read-only opens take no lease: unaffected
    expect((await s.open(id, 'read')).lastSeq).toBe(1);
    await closeAll(s);
    v.untouched(opens);
    // once the planted entry is gone, the session opens for writing again
    fs.rmSync(holder);
    const again = watched(root);
    expect((await again.s.open(id, 'write')).lastSeq).toBe(1);
    await closeAll(again.s);
  });

  it('the lock directory locks/<id>.lock (a symlink to a directory outside): refused, the outside directory untouched', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const lockDir = path.join(root, 'locks', `${id}.lock`);
    const before = fs.statSync(v.dir);
    plant('symlink', lockDir, v, v.dir);
    const { s, opens } = watched(root);
    expect((await storeError(s.open(id, 'write'), 'UnsafeStore')).details.reason).toBe('is a symbolic link');
    await closeAll(s);
    stillPlanted('symlink', lockDir);
    expect(fs.statSync(v.dir).mtimeMs).toBe(before.mtimeMs); // proper-lockfile's utimes is lutimes here
    expect(fs.statSync(v.dir).atimeMs).toBe(before.atimeMs);
    v.untouched(opens);
  });

  it.each(PLANTS)('a state value sessions/<id>/state/<key>.json (%s): state/set and state/get are refused', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const value = path.join(root, 'sessions', id, 'state', 'k.json');
    plant(kind, value, v);
    const { s, opens } = watched(root);
    await s.open(id, 'write');
    await storeError(s.setState(id, 'k', 'new value'), 'UnsafeStore');
    await storeError(s.getState(id, 'k'), 'UnsafeStore');
    await s.setState(id, 'other', 1); // the session is not fail-stopped: nothing was written
    await closeAll(s);
    stillPlanted(kind, value);
    v.untouched(opens);
  });

  it('the state directory sessions/<id>/state (a symlink to a directory outside): state/set is refused', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const dir = path.join(root, 'sessions', id, 'state');
    plant('symlink', dir, v, v.dir);
    const { s, opens } = watched(root);
    await s.open(id, 'write');
    await storeError(s.setState(id, 'k', 1), 'UnsafeStore');
    await closeAll(s);
    v.untouched(opens);
  });

  it.each(PLANTS)('a blob blobs/sha256/<hh>/<hex> (%s): an append that would store it and blob/get are refused', async (kind: Plant) => {
    const root = tempDir();
    const v = victim();
    const { s, opens } = watched(root);
    const { sessionId } = await s.create({ blobThreshold: 1024 });
    const hex = refOf(Buffer.from(BIG)).slice('sha256:'.length);
    const blob = path.join(root, 'blobs', 'sha256', hex.slice(0, 2), hex);
    plant(kind, blob, v);
    await storeError(s.append(sessionId, [toolCall(BIG)]), 'UnsafeStore');
    await storeError(s.getBlob(sessionId, `sha256:${hex}`), 'UnsafeStore');
    expect((await s.append(sessionId, [note(2)])).lastSeq).toBe(1); // nothing was appended, the writer goes on
    await closeAll(s);
    stillPlanted(kind, blob);
    v.untouched(opens);
  });

  it.each(PLANTS)('a journal sessions/<id>/journal.jsonl (%s): open (both modes) and read are refused', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    plant(kind, journalOf(root, id), v);
    const { s, opens } = watched(root);
    await storeError(s.open(id, 'write'), 'UnsafeStore');
    await storeError(s.open(id, 'read'), 'UnsafeStore');
    await storeError(s.read(id), 'UnsafeStore');
    await closeAll(s);
    stillPlanted(kind, journalOf(root, id));
    v.untouched(opens);
  });

  it.each(PLANTS)('recovery evidence recovery/<id>/<ms>-<offset>.torn (%s, at the predicted name): the torn tail is not cut', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const journal = journalOf(root, id);
    const valid = fs.statSync(journal).size;
    fs.appendFileSync(journal, '{"seq":2,"ts":"2024-'); // a torn tail: never acknowledged
    const torn = fs.readFileSync(journal);
    const v = victim();
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000); // the evidence name is predictable only so
    const evidence = path.join(root, 'recovery', id, `1700000000000-${valid}.torn`);
    plant(kind, evidence, v);
    const { s, opens } = watched(root);
    const err = await storeError(s.open(id, 'write'), 'UnsafeStore');
    expect(err.details.reason).toMatch(kind === 'fifo' ? /not a regular file/ : /symbolic link/);
    await closeAll(s);
    expect(fs.readFileSync(journal).equals(torn)).toBe(true); // not cut: its bytes were not kept anywhere
    stillPlanted(kind, evidence);
    v.untouched(opens);
  });

  it('the recovery directory recovery/<id> (a symlink to a directory outside): the torn tail is not cut', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    fs.appendFileSync(journalOf(root, id), '{"seq":2');
    const v = victim();
    plant('symlink', path.join(root, 'recovery', id), v, v.dir);
    const { s, opens } = watched(root);
    await storeError(s.open(id, 'write'), 'UnsafeStore');
    await closeAll(s);
    v.untouched(opens);
  });

  it.each(PLANTS)('the scratch directory sessions/<id>/scratch (%s): tool/allocateScratch is refused', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const scratch = path.join(root, 'sessions', id, 'scratch');
    plant(kind, scratch, v, v.dir);
    const { s, opens } = watched(root);
    await s.open(id, 'write');
    await storeError(s.allocateScratch(id, 'r1'), 'UnsafeStore');
    await closeAll(s);
    stillPlanted(kind, scratch);
    v.untouched(opens);
  });

  it('a scratch run directory scratch/tool-000001 (a symlink to a directory outside) is skipped, never entered', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const v = victim();
    const run = path.join(root, 'sessions', id, 'scratch', 'tool-000001');
    plant('symlink', run, v, v.dir);
    const { s, opens } = watched(root);
    await s.open(id, 'write');
    const got = await s.allocateScratch(id, 'r1');
    expect(got.toolSeq).toBe(2);
    expect(path.basename(got.dir)).toBe('tool-000002');
    await closeAll(s);
    stillPlanted('symlink', run);
    v.untouched(opens);
  });

  it.each(PLANTS)('an index entry index/<id>.json (%s) is never trusted nor written through; the journal answers', async (kind: Plant) => {
    const root = tempDir();
    const id = await sessionWith(root, 2);
    const v = victim();
    plant(kind, indexOf(root, id), v);
    const warnings: string[] = [];
    const { fsl, opens } = watchingFs();
    const s = store(root, { fs: fsl, warn: (m) => warnings.push(m) });
    expect((await s.list()).sessions.map((x) => [x.sessionId, x.lastSeq])).toEqual([[id, 2]]);
    expect((await s.open(id, 'write')).lastSeq).toBe(2);
    await s.append(id, [note(3)]);
    await indexSettled(s);
    await closeAll(s);
    expect(warnings).toContain(`index entry of session ${id} not written; it will be rebuilt from the journal`);
    stillPlanted(kind, indexOf(root, id));
    v.untouched(opens);
  });
});

describe('temporary names are random: they cannot be planted', () => {
  it('index entries, state values and the holder record are written through <name>.<16 random hex>.tmp, created O_EXCL|O_NOFOLLOW', async () => {
    const root = tempDir();
    const { s, opens } = watched(root);
    const { sessionId } = await s.create({});
    await s.setState(sessionId, 'k', 1);
    await s.setState(sessionId, 'k', 2);
    await s.append(sessionId, [note(1)]);
    await indexSettled(s);
    await closeAll(s);
    const { O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
    const created = opens.filter((o) => (o.flags & O_CREAT) !== 0);
    for (const o of created) expect(o.flags & (O_EXCL | O_NOFOLLOW), `${o.path} created without O_EXCL|O_NOFOLLOW`).toBe(O_EXCL | O_NOFOLLOW);
    const temps = created.map((o) => path.relative(root, o.path)).filter((p) => p.endsWith('.tmp') && !p.endsWith('journal.jsonl.tmp'));
    const shape = (base: string) => new RegExp(`^${base.replace(/[.]/g, '\\.')}\\.[0-9a-f]{16}\\.tmp$`);
    const of = (base: string) => temps.filter((t) => shape(base).test(t));
    expect(of(`locks/${sessionId}.lock.holder.json`)).toHaveLength(1);
    expect(of(`sessions/${sessionId}/state/k.json`)).toHaveLength(2);
    expect(of(`index/${sessionId}.json`).length).toBeGreaterThanOrEqual(1);
    expect(new Set(temps).size).toBe(temps.length); // never the same name twice
    // every temporary name is accounted for: none predictable
    expect(temps.filter((t) => !/\.[0-9a-f]{12,16}\.tmp$/.test(t))).toEqual([]);
    // nothing is left behind under a temporary name
    expect(temps.filter((t) => fs.existsSync(path.join(root, t)))).toEqual([]);
  });
});
