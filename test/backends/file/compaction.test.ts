import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreError } from '../../../src/domain/errors.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import type { RecordInput, StoredRecord } from '../../../src/domain/types.js';
import { snapshotTree, tempDir } from '../../helpers.js';
import { Rng } from '../../torture/rng.js';
import {
  eio, faultFs, indexOf, indexSettled, journalOf, lines, message, modeOf, note, RFC3339_MS, sealed, store, storeError, unsealed,
} from './storeHelpers.js';

/**
 * session/compact at the store level (protocol/README.md section 12, STORAGE.md): the rotation's
 * bytes, the checkpoint, history, reading generations, refusals, turns, context and the index.
 * Crashes and injected faults during a compaction are in compactionCrash.test.ts.
 */

const archiveOf = (root: string, id: string, generation: number) => path.join(root, 'history', id, `${generation}.jsonl`);
const historyDirOf = (root: string, id: string) => path.join(root, 'history', id);
const strip = ({ seq: _s, ts: _t, ...rest }: StoredRecord) => rest;

/** A clock that moves one second per call from a fixed instant: every ts is predictable and distinct. */
function steppingClock(start = Date.UTC(2026, 0, 2, 3, 4, 5, 678)) {
  let t = start - 1000;
  return () => (t += 1000);
}

/** Deterministic PRNG (mulberry32, the torture scenarios' Rng). */
function prng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

function seqOf(line: Buffer): number | undefined {
  const m = /^\{"seq":(\d+),/.exec(line.toString('latin1', 0, 40));
  return m ? Number(m[1]) : undefined;
}

/** Offset of the first record line with seq > `seq` in journal bytes (the end when none). */
function offsetAfterSeq(buf: Buffer, seq: number): number {
  let off = 0;
  for (const [i, line] of lines(buf).entries()) {
    if (i > 0 && (seqOf(line) ?? 0) > seq) return off;
    off += line.length;
  }
  return buf.length;
}

function parse(line: Buffer): Record<string, unknown> {
  return JSON.parse(line.toString('utf8')) as Record<string, unknown>;
}

/** Every record of the active journal (or of `generation`), paging with a small limit. */
async function readAll(s: FileSessionStore, id: string, generation?: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await s.read(id, { afterSeq, limit: 7, ...(generation === undefined ? {} : { generation }) });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    expect(page.nextAfterSeq).toBeGreaterThan(afterSeq);
    afterSeq = page.nextAfterSeq;
  }
}

/**
 * Every original (non-checkpoint) record of a session, by seq, gathered from the active journal
 * and every archived generation; a seq found in several generations must be identical in each.
 * Each generation's seqs must be gapless from its first line.
 */
async function everyRecord(s: FileSessionStore, id: string): Promise<{ bySeq: Map<number, StoredRecord>; generation: number }> {
  const active = await readAll(s, id);
  const generation = active[0]?.kind === 'checkpoint' ? Number(active[0].generation) : 0;
  const bySeq = new Map<number, StoredRecord>();
  for (let g = 0; g <= generation; g++) {
    const recs = g === generation ? active : await readAll(s, id, g);
    expect(recs.map((r) => r.seq), `generation ${g} gapless`).toEqual(recs.map((_, i) => (recs[0]?.seq ?? 0) + i));
    if (g > 0) expect(recs[0]?.kind, `generation ${g} starts with its checkpoint`).toBe('checkpoint');
    for (const r of recs) {
      if (r.kind === 'checkpoint') continue;
      const seen = bySeq.get(r.seq);
      if (seen) expect(r, `seq ${r.seq} in generation ${g} equals its earlier copy`).toEqual(seen);
      bySeq.set(r.seq, r);
    }
  }
  return { bySeq, generation };
}

function tmpFilesUnder(root: string): string[] {
  return Object.keys(snapshotTree(root)).filter((p) => p.endsWith('.tmp'));
}

/** A store with one session of `n` records: single appends, and one batch of four in the middle. */
async function session(opts: { n?: number; systemPrompt?: string; root?: string; fs?: FsLayer } = {}) {
  const root = opts.root ?? tempDir();
  const clock = steppingClock();
  const s = store(root, { clock, ...(opts.fs ? { fs: opts.fs } : {}) });
  const { sessionId } = await s.create({ title: 'compaction', ...(opts.systemPrompt ? { systemPrompt: opts.systemPrompt } : {}) });
  const appended = new Map<number, RecordInput>();
  const append = async (records: RecordInput[]) => {
    const r = await s.append(sessionId, records);
    records.forEach((rec, i) => appended.set(r.firstSeq + i, rec));
    return r;
  };
  const n = opts.n ?? 9;
  for (let i = 1; i <= n; ) {
    if (i === 4 && n >= 7) {
      await append([note(4), note(5), note(6), note(7)]);
      i = 8;
    } else await append([note(i++)]);
  }
  return { root, s, sessionId, clock, appended, append, journal: journalOf(root, sessionId) };
}

describe('compaction: the rotation', () => {
  it('archives the exact original bytes; the new journal is the same header, a checkpoint, then the suffix byte for byte', async () => {
    const t = await session({ n: 9 });
    const before = fs.readFileSync(t.journal);
    const inoBefore = fs.statSync(t.journal).ino;
    const readBefore = await readAll(t.s, t.sessionId);
    const res = await t.s.compact(t.sessionId, { summary: 'the first five', throughSeq: 5, provider: 'anthropic', model: 'claude-x' });
    expect(res).toEqual({ generation: 1, checkpointSeq: 5, archived: { generation: 0, records: 9, bytes: before.length } });

    const archive = archiveOf(t.root, t.sessionId, 0);
    expect(fs.readFileSync(archive).equals(before)).toBe(true);
    expect(modeOf(archive)).toBe(0o600);
    expect(modeOf(historyDirOf(t.root, t.sessionId))).toBe(0o700);
    expect(modeOf(path.join(t.root, 'history'))).toBe(0o700);

    const after = fs.readFileSync(t.journal);
    const [header, checkpoint] = lines(after) as [Buffer, Buffer];
    expect(header.equals(lines(before)[0] as Buffer)).toBe(true);
    const suffixAt = offsetAfterSeq(before, 5); // seq 5 is inside the batch 4..7: the suffix starts mid-batch
    expect(after.length).toBe(header.length + checkpoint.length + before.length - suffixAt);
    expect(after.subarray(header.length + checkpoint.length).equals(before.subarray(suffixAt))).toBe(true);
    expect(fs.statSync(t.journal).ino).not.toBe(inoBefore);
    expect(modeOf(t.journal)).toBe(0o600);

    // The checkpoint: members in the documented order, canonical and sealed like any line.
    const cp = parse(checkpoint);
    expect(Object.keys(cp)).toEqual(['seq', 'ts', 'kind', 'generation', 'throughSeq', 'turn', 'counters', 'archived', 'summary', 'provider', 'model', 'crc']);
    expect(cp).toMatchObject({
      seq: 5, kind: 'checkpoint', generation: 1, throughSeq: 5, turn: null, counters: { summarizedRecords: 5 },
      archived: { generation: 0, records: 9, bytes: before.length }, summary: 'the first five', provider: 'anthropic', model: 'claude-x',
    });
    expect(cp.ts).toMatch(RFC3339_MS);
    expect(sealed(unsealed(checkpoint)).equals(checkpoint)).toBe(true);
    expect(tmpFilesUnder(t.root)).toEqual([]);

    // Reading: the active journal starts at the checkpoint; generation 0 is the journal as it was.
    const active = await readAll(t.s, t.sessionId);
    expect(active.map((r) => r.seq)).toEqual([5, 6, 7, 8, 9]);
    const { crc: _crc, ...cpRecord } = cp;
    expect(active[0]).toEqual(cpRecord);
    expect(active.slice(1)).toEqual(readBefore.slice(5));
    expect(await readAll(t.s, t.sessionId, 0)).toEqual(readBefore);
    expect(await readAll(t.s, t.sessionId, 1)).toEqual(active); // the active generation by number

    // Appends continue after the checkpoint; a fresh store sees all of it.
    expect(await t.s.append(t.sessionId, [note(10)])).toEqual({ firstSeq: 10, lastSeq: 10 });
    await t.s.closeAll();
    const fresh = store(t.root);
    expect((await readAll(fresh, t.sessionId)).map((r) => r.seq)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(await readAll(fresh, t.sessionId, 0)).toEqual(readBefore);
    expect((await fresh.open(t.sessionId, 'write')).lastSeq).toBe(10);
    await fresh.closeAll();
  });

  it('each step is durable before the next: the file-system calls of a compaction, in order', async () => {
    const root = tempDir();
    const trace: string[] = [];
    const names = new Map<number, string>();
    const rel = (p: string) => path.relative(root, p) || '.';
    const tracing: FsLayer = {
      ...nodeFs,
      openSync: (p, flags, mode) => {
        const fd = nodeFs.openSync(p, flags, mode);
        names.set(fd, rel(p));
        return fd;
      },
      closeSync: (fd) => {
        names.delete(fd);
        nodeFs.closeSync(fd);
      },
      writeSync: (fd, buf, off, len, pos) => {
        const n = nodeFs.writeSync(fd, buf, off, len, pos);
        if (trace[trace.length - 1] !== `write ${names.get(fd)}`) trace.push(`write ${names.get(fd)}`);
        return n;
      },
      fsyncSync: (fd) => {
        nodeFs.fsyncSync(fd);
        trace.push(`fsync ${names.get(fd)}`);
      },
      fdatasync: async (fd) => {
        await nodeFs.fdatasync(fd);
        trace.push(`fdatasync ${names.get(fd)}`);
      },
      renameSync: (from, to) => {
        nodeFs.renameSync(from, to);
        for (const [fd, name] of names) if (name === rel(from)) names.set(fd, rel(to)); // an open file keeps its new name
        trace.push(`rename ${rel(from)} -> ${rel(to)}`);
      },
      mkdirSync: (p, mode) => {
        nodeFs.mkdirSync(p, mode);
        trace.push(`mkdir ${rel(p)}`);
      },
      unlinkSync: (p) => {
        nodeFs.unlinkSync(p);
        trace.push(`unlink ${rel(p)}`);
      },
    };
    const s = store(root, { fs: tracing });
    const { sessionId: id } = await s.create({});
    for (let i = 1; i <= 4; i++) await s.append(id, [note(i)]);
    const expected = (g: number, first: boolean) => [
      ...(first ? ['mkdir history', 'fsync .', `mkdir history/${id}`, 'fsync history'] : []),
      // the two big files are fdatasynced (in the thread pool): new files, written from offset 0
      `write history/${id}/${g}.jsonl.tmp`, `fdatasync history/${id}/${g}.jsonl.tmp`,
      `rename history/${id}/${g}.jsonl.tmp -> history/${id}/${g}.jsonl`, `fsync history/${id}`,
      `write sessions/${id}/journal.jsonl.tmp`, `fdatasync sessions/${id}/journal.jsonl.tmp`,
      `rename sessions/${id}/journal.jsonl.tmp -> sessions/${id}/journal.jsonl`, `fsync sessions/${id}`,
      // then the index entry, a cache: written and renamed, never synced (an append never waits for it)
      `write index/${id}.json.TMP`, `rename index/${id}.json.TMP -> index/${id}.json`,
    ];
    /** The trace with the index entry's random temp name made comparable. */
    const normalized = () => trace.map((t) => t.replace(/\.json\.[0-9a-f]{16}\.tmp/g, '.json.TMP'));
    trace.length = 0;
    await s.compact(id, { summary: 'one', throughSeq: 2 });
    expect(normalized()).toEqual(expected(0, true));
    await s.append(id, [note(5)]);
    trace.length = 0;
    await s.compact(id, { summary: 'two', throughSeq: 4 });
    expect(normalized()).toEqual(expected(1, false));
    // The next append goes to the new journal (the handle followed the rename).
    trace.length = 0;
    await s.append(id, [note(6)]);
    expect(trace).toEqual([`write sessions/${id}/journal.jsonl`, `fdatasync sessions/${id}/journal.jsonl`]);
    await s.closeAll();
  });

  it('copies a journal larger than one copy chunk exactly, even with short writes', async () => {
    // Short writes: every writeSync writes at most 4093 bytes; the copy loops must carry on.
    const shortWrites = faultFs({
      writeSync: (fd, buf, off, len, pos) => nodeFs.writeSync(fd, buf, off, Math.min(len, 4093), pos),
    });
    const root = tempDir();
    const s = store(root, { fs: shortWrites });
    const { sessionId } = await s.create({ blobThreshold: 1 << 30 }); // kept in the journal, not as blobs
    const big = 'x'.repeat(300_000);
    for (let i = 1; i <= 8; i++) await s.append(sessionId, [note(i, { big })]);
    const before = fs.readFileSync(journalOf(root, sessionId));
    expect(before.length).toBeGreaterThan(2 << 20);
    await s.compact(sessionId, { summary: 'big', throughSeq: 3 });
    expect(fs.readFileSync(archiveOf(root, sessionId, 0)).equals(before)).toBe(true);
    const after = fs.readFileSync(journalOf(root, sessionId));
    const [header, cp] = lines(after) as [Buffer, Buffer];
    expect(after.subarray(header.length + cp.length).equals(before.subarray(offsetAfterSeq(before, 3)))).toBe(true);
    await s.closeAll();
    const fresh = store(root);
    expect((await readAll(fresh, sessionId)).map((r) => r.seq)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('throughSeq = lastSeq leaves header + checkpoint only; appends continue and the index vouches for the checkpoint line', async () => {
    const t = await session({ n: 3 });
    const header = lines(fs.readFileSync(t.journal))[0] as Buffer;
    await t.s.compact(t.sessionId, { summary: 'all of it', throughSeq: 3 });
    const after = fs.readFileSync(t.journal);
    const cp = lines(after)[1] as Buffer;
    expect(after.length).toBe(header.length + cp.length);
    await indexSettled(t.s);
    const entry = JSON.parse(fs.readFileSync(indexOf(t.root, t.sessionId), 'utf8'));
    expect(entry).toMatchObject({ lastSeq: 3, records: 1, bytes: after.length, ino: fs.statSync(t.journal).ino });
    expect(entry.lastCrc).toBe(parse(cp).crc);

    expect(await t.s.append(t.sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    const before2 = fs.readFileSync(t.journal);
    expect(before2.subarray(0, after.length).equals(after)).toBe(true); // appended after the checkpoint line
    // Compacting only the checkpoint itself: a new generation standing for the same records.
    const again = await t.s.compact(t.sessionId, { summary: 'again', throughSeq: 3 });
    expect(again).toEqual({ generation: 2, checkpointSeq: 3, archived: { generation: 1, records: 2, bytes: before2.length } });
    expect(fs.readFileSync(archiveOf(t.root, t.sessionId, 1)).equals(before2)).toBe(true);
    expect(parse(lines(fs.readFileSync(t.journal))[1] as Buffer)).toMatchObject({ seq: 3, generation: 2, counters: { summarizedRecords: 3 }, summary: 'again' });
    await t.s.closeAll();
    const fresh = store(t.root);
    expect((await readAll(fresh, t.sessionId)).map((r) => [r.seq, r.kind])).toEqual([[3, 'checkpoint'], [4, 'note']]);
    expect((await fresh.history(t.sessionId)).map((h) => h.generation)).toEqual([0, 1]);
  });

  it('20 compactions of a growing session: active = header + checkpoint + suffix exactly; every record readable from some generation; history exact', async () => {
    const rnd = prng(20261129);
    const root = tempDir();
    const clock = steppingClock();
    const s = store(root, { clock });
    const { sessionId } = await s.create({ title: 'growing' });
    const journal = journalOf(root, sessionId);
    const appended = new Map<number, RecordInput>();
    const expectedHistory: Array<{ generation: number; throughSeq: number; records: number; bytes: number; createdAt: string }> = [];
    const header = lines(fs.readFileSync(journal))[0] as Buffer;
    let firstSeq = 1;
    let lastSeq = 0;
    let sawBigSuffix = false;
    for (let k = 1; k <= 20; k++) {
      const appends = 5 + Math.floor(rnd() * 20);
      for (let a = 0; a < appends; a++) {
        const n = rnd() < 0.3 ? 2 + Math.floor(rnd() * 4) : 1;
        const records = Array.from({ length: n }, () => note(lastSeq + 1, { pad: 'p'.repeat(Math.floor(rnd() * 2500)), round: k }));
        const r = await s.append(sessionId, records);
        records.forEach((rec, i) => appended.set(r.firstSeq + i, rec));
        lastSeq = r.lastSeq;
      }
      const choice = rnd();
      const throughSeq = choice < 0.15 ? firstSeq : choice < 0.3 ? lastSeq : firstSeq + Math.floor(rnd() * (lastSeq - firstSeq + 1));
      const before = fs.readFileSync(journal);
      const summary = `summary ${k}: ${'s'.repeat(k * 10)}`;
      const res = await s.compact(sessionId, { summary, throughSeq });
      expect(res).toEqual({ generation: k, checkpointSeq: throughSeq, archived: { generation: k - 1, records: lines(before).length - 1, bytes: before.length } });
      expect(fs.readFileSync(archiveOf(root, sessionId, k - 1)).equals(before), `archive ${k - 1}`).toBe(true);

      const after = fs.readFileSync(journal);
      const all = lines(after);
      const cpLine = all[1] as Buffer;
      const suffixAt = offsetAfterSeq(before, throughSeq);
      const suffixBytes = before.length - suffixAt;
      if (suffixBytes > 70_000) sawBigSuffix = true;
      expect((all[0] as Buffer).equals(header)).toBe(true);
      expect(after.length, `round ${k}: header + checkpoint + suffix`).toBe(header.length + cpLine.length + suffixBytes);
      expect(after.subarray(header.length + cpLine.length).equals(before.subarray(suffixAt))).toBe(true);
      expect(all.length).toBe(2 + lastSeq - throughSeq);
      // The checkpoint does not grow with the history it stands for.
      expect(cpLine.length).toBeLessThan(400 + summary.length);
      const cp = parse(cpLine);
      expect(cp).toMatchObject({
        seq: throughSeq, kind: 'checkpoint', generation: k, throughSeq, turn: null, counters: { summarizedRecords: throughSeq },
        archived: { generation: k - 1, records: lines(before).length - 1, bytes: before.length }, summary,
      });
      expectedHistory.push({ generation: k - 1, throughSeq, records: lines(before).length - 1, bytes: before.length, createdAt: cp.ts as string });
      expect(await s.history(sessionId)).toEqual(expectedHistory);
      firstSeq = throughSeq;
    }
    expect(sawBigSuffix, 'some suffix is large enough that the seek bisects').toBe(true);

    const check = async (reader: FileSessionStore) => {
      const { bySeq, generation } = await everyRecord(reader, sessionId);
      expect(generation).toBe(20);
      expect([...bySeq.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
      for (const [seq, rec] of appended) expect(strip(bySeq.get(seq) as StoredRecord), `seq ${seq}`).toEqual(rec);
      expect(await reader.history(sessionId)).toEqual(expectedHistory);
      const err = await storeError(reader.read(sessionId, { generation: 21 }), 'OutOfRange');
      expect(err.details.path).toBe('generation');
    };
    await check(s);
    await s.closeAll();
    await check(store(root));
  });

  it('many compactions never re-append history: the active journal stays small while the session grows', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    const sizes: number[] = [];
    let lastSeq = 0;
    for (let k = 1; k <= 30; k++) {
      for (let i = 0; i < 10; i++) lastSeq = (await s.append(sessionId, [note(lastSeq + 1, { pad: 'q'.repeat(1000) })])).lastSeq;
      await s.compact(sessionId, { summary: 'rolling summary', throughSeq: lastSeq - 2 });
      sizes.push(fs.statSync(journalOf(root, sessionId)).size);
    }
    // Header + checkpoint + two records, whatever the number of compactions so far.
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(64);
    expect(Math.max(...sizes)).toBeLessThan(4000);
    await s.closeAll();
  });
});

describe('compaction: history and generations', () => {
  it('an uncompacted session has no history; unknown and malformed ids are refused', async () => {
    const t = await session({ n: 2 });
    expect(await t.s.history(t.sessionId)).toEqual([]);
    await storeError(t.s.history('01ZZZZZZZZZZZZZZZZZZZZZZZZ'), 'SessionNotFound');
    await storeError(t.s.history('../etc'), 'InvalidSessionId');
    await storeError(t.s.read('01ZZZZZZZZZZZZZZZZZZZZZZZZ', { generation: 0 }), 'SessionNotFound');
    expect((await readAll(t.s, t.sessionId, 0)).map((r) => r.seq)).toEqual([1, 2]); // generation 0 = the active journal
    const err = await storeError(t.s.read(t.sessionId, { generation: 1 }), 'OutOfRange');
    expect(err.details.path).toBe('generation');
    await t.s.closeAll();
  });

  it('a fork of a compacted session starts at generation 0; compacting the fork archives only the fork', async () => {
    const t = await session({ n: 6 });
    await t.s.compact(t.sessionId, { summary: 'source summary', throughSeq: 3 });
    await t.s.append(t.sessionId, [note(7)]);
    const { sessionId: forkId } = await t.s.fork(t.sessionId);
    expect(await t.s.history(forkId)).toEqual([]);
    const forked = await readAll(t.s, forkId);
    expect(forked.map((r) => r.seq)).toEqual([3, 4, 5, 6, 7]);
    expect(forked[0]).toMatchObject({ kind: 'checkpoint', generation: 0, summary: 'source summary' });
    await t.s.open(forkId, 'write');
    const before = fs.readFileSync(journalOf(t.root, forkId));
    const res = await t.s.compact(forkId, { summary: 'fork summary', throughSeq: 5 });
    expect(res).toEqual({ generation: 1, checkpointSeq: 5, archived: { generation: 0, records: 5, bytes: before.length } });
    expect(fs.readFileSync(archiveOf(t.root, forkId, 0)).equals(before)).toBe(true);
    expect((await t.s.history(forkId)).map((h) => [h.generation, h.throughSeq, h.records, h.bytes])).toEqual([[0, 5, 5, before.length]]);
    expect(await readAll(t.s, forkId, 0)).toEqual(forked);
    expect((await readAll(t.s, forkId))[0]).toMatchObject({ seq: 5, generation: 1, counters: { summarizedRecords: 5 } });
    // The source is untouched.
    expect((await t.s.history(t.sessionId)).map((h) => h.generation)).toEqual([0]);
    expect((await readAll(t.s, t.sessionId)).map((r) => r.seq)).toEqual([3, 4, 5, 6, 7]);
    await t.s.closeAll();
  });

  it('reads of a generation page, filter by kind and verify their lines', async () => {
    const t = await session({ n: 9 });
    await t.s.compact(t.sessionId, { summary: 'x', throughSeq: 6 });
    const page = await t.s.read(t.sessionId, { generation: 0, afterSeq: 2, limit: 3 });
    expect(page.records.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(page.lastSeq).toBe(9);
    expect(page.nextAfterSeq).toBe(5);
    expect((await t.s.read(t.sessionId, { generation: 1, kinds: ['checkpoint'] })).records.map((r) => r.seq)).toEqual([6]);
    // A damaged archive line is Corrupt when read, naming its line; the active journal is unaffected.
    const archive = archiveOf(t.root, t.sessionId, 0);
    const buf = fs.readFileSync(archive);
    const at = buf.indexOf('"i":3');
    buf[at + 4] = '7'.charCodeAt(0);
    fs.writeFileSync(archive, buf);
    const err = await storeError(t.s.read(t.sessionId, { generation: 0 }), 'Corrupt');
    expect(err.details.line).toBe(4);
    expect((await readAll(t.s, t.sessionId)).map((r) => r.seq)).toEqual([6, 7, 8, 9]);
    await t.s.closeAll();
  });
});

describe('compaction: refusals change nothing', () => {
  async function settled(t: Awaited<ReturnType<typeof session>>) {
    await indexSettled(t.s);
    return snapshotTree(t.root);
  }

  it('expectedLastSeq that does not match → Conflict (stage preCommit); matching → compacted', async () => {
    const t = await session({ n: 5 });
    const snap = await settled(t);
    const err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 3, expectedLastSeq: 4 }), 'Conflict');
    expect(err.details).toMatchObject({ expectedLastSeq: 4, lastSeq: 5, stage: 'preCommit' });
    await indexSettled(t.s);
    expect(snapshotTree(t.root)).toEqual(snap);
    expect(await t.s.compact(t.sessionId, { summary: 's', throughSeq: 3, expectedLastSeq: 5 })).toMatchObject({ generation: 1, checkpointSeq: 3 });
    await t.s.closeAll();
  });

  it('a journal appended to from outside the writer → Conflict (journalChanged, preCommit), nothing changed', async () => {
    const t = await session({ n: 5 });
    await indexSettled(t.s);
    fs.appendFileSync(t.journal, sealed('{"seq":6,"ts":"2026-01-01T00:00:00.000Z","kind":"note","i":6}'));
    const snap = snapshotTree(t.root);
    const err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 3 }), 'Conflict');
    expect(err.details).toMatchObject({ reason: 'journalChanged', stage: 'preCommit' });
    await indexSettled(t.s);
    expect(snapshotTree(t.root)).toEqual(snap);
  });

  it('a journal replaced under the writer (another inode at its path) → Conflict, nothing changed', async () => {
    const t = await session({ n: 5 });
    await indexSettled(t.s);
    const copy = `${t.journal}.other`;
    fs.copyFileSync(t.journal, copy);
    fs.chmodSync(copy, 0o600);
    fs.renameSync(copy, t.journal); // same bytes, another file: what another process's compaction leaves
    const snap = snapshotTree(t.root);
    const err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 3 }), 'Conflict');
    expect(err.details).toMatchObject({ reason: 'journalChanged', stage: 'preCommit' });
    await indexSettled(t.s);
    expect(snapshotTree(t.root)).toEqual(snap);
  });

  it('a writer whose journal another writer compacted meanwhile: its compaction is refused and loses nothing the other acknowledged', async () => {
    const t = await session({ n: 5 });
    await t.s.closeAll();
    const b = store(t.root);
    await b.open(t.sessionId, 'write');
    // b stalls and a takes the session over (leases are off in these unit tests: the journal's
    // identity check alone must refuse b; with leases, LeaseLost would come first).
    const a = store(t.root);
    await a.open(t.sessionId, 'write');
    await a.compact(t.sessionId, { summary: 'by a', throughSeq: 3 });
    expect(await a.append(t.sessionId, [note(6, { by: 'a' })])).toEqual({ firstSeq: 6, lastSeq: 6 });
    const snap = snapshotTree(path.join(t.root, 'sessions'));
    const historyBefore = snapshotTree(path.join(t.root, 'history'));
    let err: unknown;
    await b.compact(t.sessionId, { summary: 'by b', throughSeq: 4 }).catch((e: unknown) => (err = e));
    expect(err).toBeInstanceOf(StoreError);
    expect(['Conflict', 'LeaseLost']).toContain((err as StoreError).kind);
    expect(snapshotTree(path.join(t.root, 'sessions'))).toEqual(snap);
    expect(snapshotTree(path.join(t.root, 'history'))).toEqual(historyBefore);
    await a.closeAll();
    const fresh = store(t.root);
    const { bySeq } = await everyRecord(fresh, t.sessionId);
    expect(strip(bySeq.get(6) as StoredRecord)).toEqual(note(6, { by: 'a' }));
    expect((await fresh.history(t.sessionId)).map((h) => h.generation)).toEqual([0]);
  });

  it('an unsafe history directory (a symlink, or writable by others) → UnsafeStore (preCommit), nothing written anywhere', async () => {
    const t = await session({ n: 4 });
    await indexSettled(t.s);
    const elsewhere = tempDir('sidecar-elsewhere-');
    fs.chmodSync(elsewhere, 0o700);
    fs.mkdirSync(path.join(t.root, 'history'), { mode: 0o700 });
    fs.symlinkSync(elsewhere, historyDirOf(t.root, t.sessionId));
    // (snapshotTree does not follow symlinks: the journal and index directories are compared.)
    const state = () => ({ sessions: snapshotTree(path.join(t.root, 'sessions')), index: snapshotTree(path.join(t.root, 'index')) });
    const snap = state();
    let err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 2 }), 'UnsafeStore');
    expect(err.details).toMatchObject({ reason: 'is a symbolic link', stage: 'preCommit' });
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    await indexSettled(t.s);
    expect(state()).toEqual(snap);

    fs.rmSync(historyDirOf(t.root, t.sessionId));
    fs.mkdirSync(historyDirOf(t.root, t.sessionId), { mode: 0o700 });
    fs.chmodSync(historyDirOf(t.root, t.sessionId), 0o777);
    err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 2 }), 'UnsafeStore');
    expect(err.details).toMatchObject({ reason: 'is writable by group or others', stage: 'preCommit' });
    expect(fs.readdirSync(historyDirOf(t.root, t.sessionId))).toEqual([]);
    // Once the directory is private again, the compaction goes through.
    fs.chmodSync(historyDirOf(t.root, t.sessionId), 0o700);
    expect(await t.s.compact(t.sessionId, { summary: 's', throughSeq: 2 })).toMatchObject({ generation: 1 });
    await t.s.closeAll();
  });

  it('throughSeq outside [firstSeq, lastSeq] → OutOfRange (path throughSeq, min, max), nothing changed', async () => {
    const t = await session({ n: 5 });
    for (const throughSeq of [0, -1, 6, 100]) {
      const snap = await settled(t);
      const err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq }), 'OutOfRange');
      expect(err.details).toEqual({ path: 'throughSeq', min: 1, max: 5 });
      expect(snapshotTree(t.root)).toEqual(snap);
    }
    await t.s.compact(t.sessionId, { summary: 's', throughSeq: 3 });
    const snap = await settled(t);
    // Below the current checkpoint: those records are already summarized.
    for (const throughSeq of [1, 2]) {
      const err = await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq }), 'OutOfRange');
      expect(err.details).toEqual({ path: 'throughSeq', min: 3, max: 5 });
    }
    expect(snapshotTree(t.root)).toEqual(snap);
    // An empty session has nothing to compact.
    const { sessionId } = await t.s.create({});
    await storeError(t.s.compact(sessionId, { summary: 's', throughSeq: 1 }), 'OutOfRange');
    await t.s.closeAll();
  });

  it('empty or whitespace-only summaries (also after removing control characters) → InvalidArgument (path summary), nothing changed', async () => {
    const t = await session({ n: 3 });
    const snap = await settled(t);
    for (const summary of ['', '   ', '\n\t \n', '\u0000\u0001\u001b', ' \r\n\u007f ']) {
      const err = await storeError(t.s.compact(t.sessionId, { summary, throughSeq: 2 }), 'InvalidArgument');
      expect(err.details.path).toBe('summary');
    }
    await indexSettled(t.s);
    expect(snapshotTree(t.root)).toEqual(snap);
    await t.s.closeAll();
  });

  it('a registered secret in the summary, provider or model → SecretRejected, nothing changed', async () => {
    const root = tempDir();
    const s = store(root);
    const secret = 'Zq8kP3vWm7xRt2n-sidecar';
    const { sessionId } = await s.create({}, { values: [secret] });
    for (let i = 1; i <= 3; i++) await s.append(sessionId, [note(i)]);
    await indexSettled(s);
    const snap = snapshotTree(root);
    const cases = [
      { summary: `the key is ${secret}.` },
      { summary: `encoded: ${Buffer.from(secret).toString('base64')}` },
      { summary: 'fine', provider: `p-${secret}` },
      { summary: 'fine', model: secret },
    ];
    for (const c of cases) {
      const err = await storeError(s.compact(sessionId, { throughSeq: 2, ...c }), 'SecretRejected');
      expect(JSON.stringify(err.details)).not.toContain(secret);
      expect(err.message).not.toContain(secret);
    }
    await indexSettled(s);
    expect(snapshotTree(root)).toEqual(snap);
    // A secret registered for another session is refused too (no journal may hold any of them).
    const other = 'Other-secret-9f8e7d6c';
    await s.create({}, { values: [other] });
    await storeError(s.compact(sessionId, { summary: `x ${other}`, throughSeq: 2 }), 'SecretRejected');
    await s.closeAll();
  });
});

describe('compaction: the summary', () => {
  it('control characters other than newline and tab are removed; the summary is stored and replayed sanitized', async () => {
    const t = await session({ n: 3, systemPrompt: 'be brief' });
    const raw = 'a\u0000b\u0007c\td\ne\r\u001bf\u007fg\u0085h\u009fi\u2028j é 🙂';
    const clean = 'abc\td\nefghi\u2028j é 🙂';
    await t.s.compact(t.sessionId, { summary: raw, throughSeq: 2 });
    const cp = parse(lines(fs.readFileSync(t.journal))[1] as Buffer);
    expect(cp.summary).toBe(clean);
    expect((await t.s.read(t.sessionId)).records[0]?.summary).toBe(clean);
    const { messages } = await t.s.context(t.sessionId);
    expect(messages[1]).toEqual({ role: 'user', content: clean });
    await t.s.closeAll();
  });

  it('a well-known credential in the summary is redacted before it reaches the disk', async () => {
    const t = await session({ n: 3 });
    const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    await t.s.compact(t.sessionId, { summary: `the user pasted ${token} earlier`, throughSeq: 2 });
    const bytes = fs.readFileSync(t.journal, 'utf8');
    expect(bytes).not.toContain(token);
    expect(parse(lines(fs.readFileSync(t.journal))[1] as Buffer).summary).toMatch(/^the user pasted <redacted:github-token> earlier$/);
    await t.s.closeAll();
  });
});

describe('compaction: turns, context, index', () => {
  it('a pending turn started before throughSeq is still pending after compaction and after reopen; it can finish', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1), note(2)]);
    const { turnId } = await s.startTurn(sessionId, 'user'); // seq 3
    await s.append(sessionId, [message('user', 'hi')]); // 4
    await s.transitionTurn(sessionId, turnId, { event: 'phase', phase: 'providerStream' }); // 5
    await s.append(sessionId, [message('assistant', 'partial'), note(7)]); // 6, 7
    await s.transitionTurn(sessionId, turnId, { event: 'phase', phase: 'executingTools' }); // 8
    const head = (await s.read(sessionId, { limit: 8 })).records;
    expect(head.map((r) => [r.seq, r.kind])).toEqual([[1, 'note'], [2, 'note'], [3, 'turn'], [4, 'message'], [5, 'turn'], [6, 'message'], [7, 'note'], [8, 'turn']]);
    expect(head[4]).toMatchObject({ event: 'phase', phase: 'providerStream' });
    const turnBefore = await s.getTurn(sessionId);
    expect(turnBefore).toMatchObject({ turnId, status: 'active', phase: 'executingTools', firstSeq: 3 });

    await s.compact(sessionId, { summary: 'mid-turn', throughSeq: 5 });
    const cp = parse(lines(fs.readFileSync(journalOf(root, sessionId)))[1] as Buffer);
    expect(cp.turn).toMatchObject({ turnId, status: 'active', phase: 'providerStream', firstSeq: 3 });
    expect(await s.getTurn(sessionId)).toEqual(turnBefore);
    await s.closeAll();

    const fresh = store(root);
    const opened = await fresh.open(sessionId, 'write');
    expect(opened.turn).toEqual(turnBefore);
    // Refused like before compaction: a turn is pending.
    await storeError(fresh.startTurn(sessionId, 'user'), 'InvalidTurnTransition');
    await fresh.transitionTurn(sessionId, turnId, { event: 'finish', outcome: 'completed' });
    expect(await fresh.getTurn(sessionId)).toMatchObject({ turnId, status: 'completed' });
    // Compacting through the end: the checkpoint alone carries the finished turn.
    const last = (await fresh.read(sessionId, { afterSeq: 8 })).lastSeq;
    await fresh.compact(sessionId, { summary: 'done', throughSeq: last });
    await fresh.closeAll();
    const again = store(root);
    expect((await again.open(sessionId, 'read')).turn).toMatchObject({ turnId, status: 'completed' });
    await again.closeAll();
  });

  it('context after compaction: the system prompt, then the latest summary as a user message, then the suffix', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ systemPrompt: 'You are terse.' });
    const msgs = ['q1', 'a1', 'q2', 'a2', 'q3', 'a3'].map((c, i) => message(i % 2 === 0 ? 'user' : 'assistant', c));
    for (const m of msgs) await s.append(sessionId, [m]);
    await s.compact(sessionId, { summary: 'we talked about q1 and q2', throughSeq: 4 });
    expect((await s.context(sessionId)).messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'we talked about q1 and q2' },
      { role: 'user', content: 'q3' },
      { role: 'assistant', content: 'a3' },
    ]);
    await s.append(sessionId, [message('user', 'q4')]);
    await s.compact(sessionId, { summary: 'up to a3', throughSeq: 6 });
    const expected = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'up to a3' },
      { role: 'user', content: 'q4' },
    ];
    expect((await s.context(sessionId)).messages).toEqual(expected);
    await s.closeAll();
    expect((await store(root).context(sessionId)).messages).toEqual(expected);
  });

  it('the index is rewritten (lastSeq, records, bytes, inode, last checksum) and an open that trusts it works', async () => {
    const t = await session({ n: 9 });
    await indexSettled(t.s); // no index write of the appends is still pending
    await t.s.compact(t.sessionId, { summary: 'idx', throughSeq: 4 });
    // Rewritten before the compaction is answered.
    const after = fs.readFileSync(t.journal);
    const all = lines(after);
    const entry = JSON.parse(fs.readFileSync(indexOf(t.root, t.sessionId), 'utf8'));
    expect(entry).toMatchObject({
      sessionId: t.sessionId, lastSeq: 9, records: 6, bytes: after.length, ino: fs.statSync(t.journal).ino,
      lastCrc: parse(all[all.length - 1] as Buffer).crc,
    });
    await t.s.closeAll();

    // Damage a record line in the middle: only an open that trusts the index (and so does not
    // verify the bytes it vouches for) succeeds.
    const mid = all[3] as Buffer;
    const at = all[0]!.length + all[1]!.length + all[2]!.length + mid.indexOf('"i":');
    const damaged = Buffer.from(after);
    damaged[at + 4] = damaged[at + 4] === 0x39 ? 0x38 : damaged[at + 4]! + 1;
    fs.writeFileSync(t.journal, damaged);
    const trusting = store(t.root);
    const opened = await trusting.open(t.sessionId, 'write');
    expect(opened.lastSeq).toBe(9);
    expect(await trusting.append(t.sessionId, [note(10)])).toEqual({ firstSeq: 10, lastSeq: 10 });
    await trusting.closeAll();
    // Control: without the index the same journal is verified from the start and refused.
    fs.rmSync(indexOf(t.root, t.sessionId));
    await storeError(store(t.root).open(t.sessionId, 'read'), 'Corrupt');
  });
});

describe('compaction: ordering and write mode', () => {
  it('runs after every append sent before it and before every append sent after it', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    const before = Array.from({ length: 12 }, (_, i) => s.append(sessionId, [note(2 + i)]));
    const compaction = s.compact(sessionId, { summary: 'ordered', throughSeq: 10, expectedLastSeq: 13 });
    const afterward = Array.from({ length: 12 }, (_, i) => s.append(sessionId, [note(14 + i)]));
    const res = await compaction;
    expect(res.archived.records).toBe(13);
    expect((await Promise.all(before)).map((r) => r.firstSeq)).toEqual(Array.from({ length: 12 }, (_, i) => 2 + i));
    expect((await Promise.all(afterward)).map((r) => r.firstSeq)).toEqual(Array.from({ length: 12 }, (_, i) => 14 + i));
    const archive = fs.readFileSync(archiveOf(root, sessionId, 0));
    expect(lines(archive).length).toBe(14);
    await s.closeAll();
    const fresh = store(root);
    const { bySeq } = await everyRecord(fresh, sessionId);
    expect([...bySeq.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    for (const [seq, rec] of bySeq) expect(strip(rec)).toEqual(note(seq));
  });

  it('ReadOnly unless open for writing in this store; SessionNotFound and InvalidSessionId', async () => {
    const t = await session({ n: 3 });
    await t.s.closeAll();
    const s = store(t.root);
    let err = await storeError(s.compact(t.sessionId, { summary: 's', throughSeq: 2 }), 'ReadOnly');
    expect(err.details.reason).toBe('notOpen');
    await s.open(t.sessionId, 'read');
    err = await storeError(s.compact(t.sessionId, { summary: 's', throughSeq: 2 }), 'ReadOnly');
    expect(err.details.reason).toBe('openedReadOnly');
    await storeError(s.compact('01ZZZZZZZZZZZZZZZZZZZZZZZZ', { summary: 's', throughSeq: 1 }), 'SessionNotFound');
    await storeError(s.compact('a/b', { summary: 's', throughSeq: 1 }), 'InvalidSessionId');
    expect(fs.existsSync(path.join(t.root, 'history'))).toBe(false);
    await s.closeAll();
  });

  it('after a fail-stop (a failed sync) compaction is refused too', async () => {
    let failSync = false;
    const layer = faultFs({
      fdatasync: (fd) => (failSync ? Promise.reject(eio()) : nodeFs.fdatasync(fd)),
    });
    const t = await session({ n: 3, fs: layer });
    failSync = true;
    await storeError(t.s.append(t.sessionId, [note(4)]), 'Uncertain');
    failSync = false;
    await storeError(t.s.compact(t.sessionId, { summary: 's', throughSeq: 2 }), 'ReadOnly');
    expect(fs.existsSync(path.join(t.root, 'history'))).toBe(false);
  });
});
