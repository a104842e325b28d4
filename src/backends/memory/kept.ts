/**
 * What the memory backend keeps of one session: its sealed header, its generations (the
 * active one last; the others archived by compactions), the snapshot beside the records,
 * state values, the highest reserved toolSeq, and whether it is in the trash. Records are kept
 * frozen, exactly as they were handed over.
 */
import { StoreError } from '../../domain/errors.js';
import type { ArchivedGeneration, ReadRangeOptions, ReadRangeResult, SealedHeader, SealedRecord, SessionRow, Snapshot } from '../../core/port.js';

export interface Kept {
  header: Readonly<SealedHeader>;
  createdAt: string;
  /** When the session last changed (any write). */
  updatedAt: string;
  generations: Generation[];
  snapshot: Snapshot;
  toolSeq: number;
  state: Map<string, string>;
  /** When it was moved to the trash. */
  trashedAt?: string;
}

/** One generation's records, in seq order from firstSeq (a checkpoint's seq after a compaction). */
export class Generation {
  readonly records: SealedRecord[] = [];
  storedBytes = 0;
  /** Archived: the seq the next generation's checkpoint stands for. */
  throughSeq: number | undefined;

  constructor(readonly generation: number, readonly firstSeq: number) {}

  get lastSeq(): number {
    return this.records[this.records.length - 1]?.seq ?? this.firstSeq - 1;
  }

  /** Refuses (InvalidArgument, nothing kept) records whose seqs do not follow this generation's one by one. */
  mustFollow(records: readonly SealedRecord[]): void {
    const at = records.findIndex((r, i) => r.seq !== this.lastSeq + 1 + i);
    if (at >= 0) throw new StoreError('InvalidArgument', 'record seqs must follow the session\'s last seq one by one', { path: `records[${at}].seq` });
  }

  add(records: readonly SealedRecord[]): void {
    for (const r of records) {
      this.records.push(Object.freeze({ seq: r.seq, ts: r.ts, kind: r.kind, text: r.text }));
      this.storedBytes += Buffer.byteLength(r.text, 'utf8');
    }
  }

  archived(): ArchivedGeneration {
    return {
      generation: this.generation, firstSeq: this.firstSeq, lastSeq: this.lastSeq, throughSeq: this.throughSeq ?? this.lastSeq,
      records: this.records.length, storedBytes: this.storedBytes,
    };
  }

  /**
   * Records after `afterSeq`, at most `limit` (of `kinds`), stopping once `maxBytes` of text were
   * gathered (at least one record is); `scannedSeq`: every seq up to it was looked at.
   */
  read(o: ReadRangeOptions): ReadRangeResult {
    const after = Math.max(o.afterSeq ?? 0, this.firstSeq - 1);
    const kinds = o.kinds && new Set(o.kinds);
    // The active records are contiguous by seq from firstSeq: the first after `after` is at its offset.
    const candidates = this.records.slice(Math.max(0, after - this.firstSeq + 1)).filter((r) => !kinds || kinds.has(r.kind));
    const rows = candidates.slice(0, o.limit);
    const records: SealedRecord[] = [];
    let bytes = 0;
    for (const r of rows) {
      const size = Buffer.byteLength(r.text, 'utf8');
      if (o.maxBytes !== undefined && records.length > 0 && bytes + size > o.maxBytes) break;
      records.push(r);
      bytes += size;
    }
    const all = rows.length < o.limit && records.length === rows.length;
    const lastSeq = this.lastSeq;
    const scannedSeq = all ? Math.max(lastSeq, after) : records.length > 0 ? (records[records.length - 1] as SealedRecord).seq : after;
    return { generation: this.generation, records, scannedSeq, lastSeq };
  }
}

/** The session's updatedAt as session/list orders it: the later of its last record's ts and its creation. */
export function updatedAtOf(k: Kept): string {
  const active = k.generations[k.generations.length - 1] as Generation;
  const lastTs = active.records[active.records.length - 1]?.ts ?? null;
  return lastTs !== null && lastTs > k.createdAt ? lastTs : k.createdAt;
}

export function rowOf(k: Kept): SessionRow {
  const active = k.generations[k.generations.length - 1] as Generation;
  return {
    sessionId: k.header.sessionId, headerText: k.header.text, createdAt: k.createdAt, updatedAt: k.updatedAt,
    generation: active.generation, firstSeq: active.firstSeq, lastSeq: active.lastSeq,
    lastTs: active.records[active.records.length - 1]?.ts ?? null, records: active.records.length, storedBytes: active.storedBytes,
    snapshot: { ...k.snapshot }, trashed: k.trashedAt !== undefined, toolSeq: k.toolSeq,
  };
}
