import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachKey } from '../../../src/backends/file/journal/cipher.js';
import { readHeader, scanRecords } from '../../../src/backends/file/journal/scan.js';
import { readMarker } from '../../../src/backends/file/encryptionMarker.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { rekeyStore } from '../../../src/backends/file/rekey.js';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { tempDir } from '../../helpers.js';
import { killingLayer } from './killingLayer.js';
import { journalOf, message, note, store, storeError } from './storeHelpers.js';

/**
 * A crash mid-rekey loses nothing (issue 18 §5): the k-th write, rename or fsync of a rekey
 * "kills the process", for every k. After each crash every journal and archive is whole under
 * exactly one of the two keys (its header names which, and it reads back under that key), the
 * store is refused by a server until the rekey is finished, and the repeated rekey finishes it:
 * every acknowledged record, state value and blob reads back under the new key.
 */

const A = new StoreKey(randomBytes(32));
const B = new StoreKey(randomBytes(32));

/** Two sessions (one compacted, with a state value and a blob) and one in the trash, under `key` (or plaintext). */
async function fixture(root: string, key?: StoreKey) {
  const s = store(root, key ? { encryptionKey: key } : {});
  const a = (await s.create({ title: 'a', blobThreshold: 1024 })).sessionId;
  await s.append(a, [message('user', 'one'), message('assistant', 'x'.repeat(5000))]);
  for (let i = 3; i <= 5; i++) await s.append(a, [note(i)]);
  await s.compact(a, { summary: 'first two', throughSeq: 2 });
  await s.append(a, [note(6)]);
  await s.setState(a, 'k', { v: 'state' });
  const b = (await s.create({ title: 'b' })).sessionId;
  await s.append(b, [note(1), note(2)]);
  const c = (await s.create({ title: 'c' })).sessionId;
  await s.append(c, [note(1)]);
  await s.delete(c);
  await s.closeAll();
  return { a, b, c };
}

type Ids = Awaited<ReturnType<typeof fixture>>;

/** Everything acknowledged, read through the store under `key`. */
async function everything(root: string, ids: Ids, key?: StoreKey) {
  const s = store(root, key ? { encryptionKey: key } : {});
  await s.restore(ids.c);
  const out = {
    a: (await s.read(ids.a, { inline: true })).records,
    a0: (await s.read(ids.a, { generation: 0, inline: true })).records,
    b: (await s.read(ids.b)).records,
    c: (await s.read(ids.c)).records,
    state: await s.getState(ids.a, 'k'),
    titles: (await s.list()).sessions.map((x) => x.title).sort(),
  };
  await s.closeAll();
  return out;
}

/** Every journal file of the store: which key its header names, and its records read back under that key. */
function journalsByKey(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.jsonl$/.test(e.name)) {
        const first = fs.readFileSync(p, 'utf8').split('\n')[0] as string;
        const keyId = (JSON.parse(first) as { key?: string }).key;
        const key = keyId === A.id ? A : keyId === B.id ? B : undefined;
        expect(key, `${p} is under a known key`).toBeDefined();
        const fsl = { ...nodeFs };
        attachKey(fsl, { key: key as StoreKey, gate: () => {} });
        const fd = fs.openSync(p, 'r');
        try {
          const size = fs.fstatSync(fd).size;
          const { line, cipher } = readHeader(fsl, fd, size);
          const scan = scanRecords(fsl, fd, { bytes: line.end, lastSeq: 0, records: 0, lastCrc: '' }, size, undefined, {}, cipher);
          expect(scan.tail, `${p} whole`).toBeUndefined();
          expect(scan.position.bytes).toBe(size);
        } finally {
          fs.closeSync(fd);
        }
        found.set(path.relative(root, p), key === A ? 'A' : 'B');
      }
    }
  };
  walk(root);
  return found;
}

describe('rekey', () => {
  it('round trip: plaintext → A → B → plaintext, everything reads back the same; the old key no longer opens the store', async () => {
    const root = tempDir('sidecar-rekey-');
    const ids = await fixture(root);
    const before = await everything(root, ids);
    const layout = new StoreLayout(root);
    // (everything() restored c: delete it again, so the trash is rekeyed too)
    const s0 = store(root);
    await s0.delete(ids.c);
    await s0.closeAll();
    expect((await rekeyStore(layout, { fs: { ...nodeFs }, to: A })).sessions).toBe(3);
    expect(readMarker(nodeFs, layout)).toEqual({ keyId: A.id });
    expect(fs.readFileSync(journalOf(root, ids.a), 'utf8')).not.toContain('"title":"a"');
    await rekeyStore(layout, { fs: { ...nodeFs }, from: A, to: B });
    await storeError(async () => store(root, { encryptionKey: A }), 'KeyMismatch');
    const underB = await everything(root, ids, B);
    expect(underB).toEqual(before);
    const s1 = store(root, { encryptionKey: B });
    await s1.delete(ids.c);
    await s1.closeAll();
    expect(await rekeyStore(layout, { fs: { ...nodeFs }, from: A, to: B })).toMatchObject({ rewritten: 0, skipped: 0 }); // done already: nothing to do
    await storeError(rekeyStore(layout, { fs: { ...nodeFs }, from: A, to: new StoreKey(randomBytes(32)) }), 'KeyMismatch'); // A is not the store's key now
    await rekeyStore(layout, { fs: { ...nodeFs }, from: B });
    expect(readMarker(nodeFs, layout)).toBeUndefined();
    expect(await everything(root, ids)).toEqual(before);
  });

  it('a torn tail is kept in recovery/ as a write open keeps it, and the rewritten journal ends at the last complete batch', async () => {
    const root = tempDir('sidecar-rekey-');
    const ids = await fixture(root, A);
    const journal = journalOf(root, ids.a);
    const whole = fs.readFileSync(journal);
    fs.writeFileSync(journal, whole.subarray(0, whole.length - 7)); // the last line (seq 6) cut short
    await rekeyStore(new StoreLayout(root), { fs: { ...nodeFs }, from: A, to: B });
    const evidence = fs.readdirSync(path.join(root, 'recovery', ids.a));
    expect(evidence).toHaveLength(1);
    const s = store(root, { encryptionKey: B });
    expect((await s.read(ids.a)).records.map((r) => r.seq)).toEqual([2, 3, 4, 5]); // the checkpoint (2), then 3..5
    await s.closeAll();
  });

  it('a running writer (a held lease) refuses the rekey before anything changes', async () => {
    const root = tempDir('sidecar-rekey-');
    const ids = await fixture(root, A);
    const s = store(root, { encryptionKey: A, leases: true });
    await s.open(ids.b, 'write');
    const before = fs.readFileSync(journalOf(root, ids.b));
    await storeError(rekeyStore(new StoreLayout(root), { fs: { ...nodeFs }, from: A, to: B }), 'SessionLocked');
    expect(fs.readFileSync(journalOf(root, ids.b))).toEqual(before);
    expect(readMarker(nodeFs, new StoreLayout(root))).toEqual({ keyId: A.id });
    await s.closeAll();
  });

  it('a crash at every write, rename and fsync: each file whole under exactly one key, the store refused until the repeated rekey finishes; nothing lost', async () => {
    const template = tempDir('sidecar-rekey-');
    const ids = await fixture(template, A);
    const expected = await everything(template, ids, A);
    const s0 = store(template, { encryptionKey: A });
    await s0.delete(ids.c);
    await s0.closeAll();
    let points = 0;
    const mixed: number[] = [];
    for (let k = 1; ; k++) {
      const root = tempDir('sidecar-rekey-');
      fs.cpSync(template, root, { recursive: true });
      const { layer, state } = killingLayer(k, { writes: true });
      state.armed = true;
      try {
        await rekeyStore(new StoreLayout(root), { fs: layer, from: A, to: B });
      } catch (err) {
        if (!state.killed) throw err; // a kill inside a lease acquisition comes back wrapped (NotWritten): nothing changed
      }
      if (!state.killed) break;
      points += 1;
      const where = `rekey killed at write/rename/fsync ${k}`;
      fs.rmSync(path.join(root, 'locks'), { recursive: true, force: true }); // the killed holder's leases, as if gone stale
      const keys = journalsByKey(root);
      if (new Set(keys.values()).size === 2) mixed.push(k);
      const marker = readMarker(nodeFs, new StoreLayout(root));
      // Once any file is under the new key, and until the marker names it, the store is refused under every key.
      if ([...keys.values()].includes('B') && marker?.keyId !== B.id) expect(marker?.rekey, where).toEqual({ fromKeyId: A.id, toKeyId: B.id });
      if (marker?.rekey) {
        for (const key of [A, B, undefined]) await storeError(async () => store(root, key ? { encryptionKey: key } : {}), 'KeyMismatch');
      }
      // The repeated command finishes the job (or, killed before its marker, does all of it).
      await rekeyStore(new StoreLayout(root), { fs: { ...nodeFs }, from: A, to: B });
      expect([...journalsByKey(root).values()].every((v) => v === 'B'), where).toBe(true);
      // verify finds nothing wrong: archives keep the journal's header line byte for byte, also
      // when the run that rewrote the journal was not the one that rewrote the archive.
      const report = await verifyStore(root, { encryptionKey: B });
      expect(report.sessions.flatMap((x) => x.findings).filter((f) => f.severity === 'error'), where).toEqual([]);
      expect(await everything(root, ids, B), where).toEqual(expected);
    }
    expect(points).toBeGreaterThan(20);
    expect(mixed.length).toBeGreaterThan(3); // crashes did fall between files of different keys
  });
});
