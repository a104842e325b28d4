/**
 * `session-sidecar repair SESSION`: a journal damaged in its middle (a line that does not verify,
 * followed by lines that do — the store refuses it, as nothing is ever skipped silently) rewritten
 * as a journal the store opens, keeping every byte of evidence (STORAGE.md, "Repair"):
 *
 * 1. The session's writer lease is taken (a sidecar holding the session refuses the repair).
 * 2. The journal is salvaged (journal/salvage.ts): every line that verifies on its own, and the
 *    damaged spans between them. Nothing damaged: nothing is done.
 * 3. The new journal is written to `journal.jsonl.rekey.tmp` (O_CREAT|O_EXCL|O_NOFOLLOW, 0600):
 *    the header line and every intact line byte for byte (their seqs, checksums and seals stay
 *    what they were: a client's afterSeq still means the same record); each seq lost in a gap is
 *    taken by an `event` record of type `session-sidecar.repair` saying what was removed (seq
 *    continuity and the batches of the intact lines hold, so verify and the store accept it);
 *    then one more such event at the end, listing every damaged span and the evidence file.
 *    Then fdatasynced.
 * 4. The damaged journal is hard-linked into `recovery/<id>/<ms>-damaged-journal.jsonl` (its
 *    bytes untouched, not copied) and that directory fsynced: the evidence exists before
 *    anything is replaced.
 * 5. The new journal is renamed over journal.jsonl and the session directory fsynced: the commit
 *    point. The index entry (a cache) is removed first and written again by the caller's open.
 * A crash before 5 leaves the damaged journal in place (a rerun starts over: the temp file is
 * removed first, a second evidence link is harmless); after it, the repaired one.
 */
import path from 'node:path';
import { ensurePrivateDir, fsyncDir } from '../../durable/durableFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { StoreError } from '../../domain/errors.js';
import { checkBytes } from '../../domain/secrets/finalGate.js';
import { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { attachKey } from './journal/cipher.js';
import { encodeRecordLine } from './journal/format.js';
import { type DamagedSpan, salvageJournal } from './journal/salvage.js';
import type { StoreLayout } from './layout.js';
import { SessionLease } from './leases.js';
import { removeCache, TempFile } from './rekeyFiles.js';

export const REPAIR_EVENT = 'session-sidecar.repair';

export interface RepairResult {
  sessionId: string;
  /** False when the journal had nothing damaged (nothing was changed). */
  repaired: boolean;
  kept: number;
  damaged: DamagedSpan[];
  /** Seqs taken by a repair event in place of a lost record. */
  lostSeqs: number[];
  /** The damaged journal, relative to the store root. */
  evidence?: string;
}

const NL = Buffer.from('\n');

export async function repairSession(fsl: FsLayer, layout: StoreLayout, id: string, o: { key?: StoreKey; leaseStaleMs?: number } = {}): Promise<RepairResult> {
  const secrets = new SecretSet();
  o.key?.registerWith(secrets);
  if (o.key) attachKey(fsl, { key: o.key, gate: (plain: Buffer) => checkBytes(secrets, plain) });
  const journal = layout.journal(id);
  if (!fsl.lstatSync(journal)) throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
  const lease = await SessionLease.acquire(fsl, layout, id, o.leaseStaleMs ?? 10_000);
  try {
    const salvage = salvageJournal(fsl, journal);
    const damaged = salvage.entries.flatMap((e) => ('damaged' in e ? [e.damaged] : []));
    const kept = salvage.entries.length - damaged.length;
    if (damaged.length === 0) return { sessionId: id, repaired: false, kept, damaged, lostSeqs: [] };
    const evidenceName = `${Date.now()}-damaged-journal.jsonl`;
    const evidence = path.join(path.relative(layout.root, layout.recoverySessionDir(id)), evidenceName);
    const out = new TempFile(fsl, journal);
    const lostSeqs: number[] = [];
    try {
      out.write(Buffer.concat([salvage.headerBytes, NL]));
      let expected = 1; // the next seq
      let open: number | undefined; // the end seq of a batch the copied lines left open
      let ts = typeof salvage.header.createdAt === 'string' ? salvage.header.createdAt : new Date().toISOString();
      // Each seq in [expected, upTo) was lost: an event takes it, in the batch it belonged to
      // (one left open before the gap, or the one the next intact line is in the middle of).
      const fill = (upTo: number, nextBatchEnd: number | undefined) => {
        for (let seq = expected; seq < upTo; seq++) {
          const batchEnd = open !== undefined && seq <= open ? open : nextBatchEnd;
          out.write(encodeRecordLine(seq, ts, batchEnd, eventText({ lost: seq, evidence }), salvage.cipher));
          lostSeqs.push(seq);
          if (open !== undefined && seq >= open) open = undefined;
        }
        if (upTo > expected) expected = upTo; // the lost seqs are taken: the next record (or the closing event) comes after them
      };
      for (const e of salvage.entries) {
        if (!('record' in e)) continue;
        const seq = e.record.seq as number;
        if (seq < expected) throw new StoreError('Corrupt', `session ${id}: line ${e.line} repeats seq ${seq} (after seq ${expected - 1}): repair cannot order it; nothing was changed`, { sessionId: id });
        if (e.record.kind === 'checkpoint') expected = seq; // a compacted journal starts at its checkpoint
        fill(seq, e.batchEnd);
        out.write(Buffer.concat([salvage.lineBytes.get(e.line) as Buffer, NL]));
        if (typeof e.record.ts === 'string') ts = e.record.ts;
        open = e.batchEnd !== undefined && e.batchEnd > seq ? e.batchEnd : undefined;
        expected = seq + 1;
      }
      if (open !== undefined) fill(open + 1, undefined); // a batch whose last lines were lost
      out.write(encodeRecordLine(expected, new Date().toISOString(), undefined, eventText({ removed: damaged.map(spanOf), kept, lostSeqs, evidence }), salvage.cipher));
      // 4: the evidence, before anything is replaced.
      ensurePrivateDir(fsl, layout.recoveryDir);
      ensurePrivateDir(fsl, layout.recoverySessionDir(id));
      fsl.linkSync(journal, path.join(layout.root, evidence));
      fsyncDir(fsl, layout.recoverySessionDir(id));
      removeCache(fsl, layout.indexEntry(id));
      // 5: the commit point.
      out.commit();
    } catch (err) {
      out.abort();
      throw err;
    }
    return { sessionId: id, repaired: true, kept, damaged, lostSeqs, evidence };
  } finally {
    await lease.release();
  }
}

function spanOf(d: DamagedSpan): Record<string, unknown> {
  return { lines: d.firstLine === d.lastLine ? `${d.firstLine}` : `${d.firstLine}-${d.lastLine}`, offset: d.offset, bytes: d.bytes, reason: d.reason };
}

/** The record text of a repair event (no seq, no ts: encodeRecordLine adds them). */
function eventText(payload: Record<string, unknown>): string {
  return JSON.stringify({ kind: 'event', type: REPAIR_EVENT, payload });
}
