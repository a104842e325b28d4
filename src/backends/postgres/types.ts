/**
 * The types this backend speaks: the port's (src/core/port.ts), and the checksums it keeps.
 */
import { crc32 } from 'node:zlib';

export type {
  ArchivedGeneration, Fence, LeaseHolder, Position, ReadRangeOptions, ReadRangeResult, SealedHeader, SealedRecord, SessionBundle, SessionRow, Snapshot, StateEntry,
} from '../../core/port.js';

/** The checksum kept beside every stored text: crc32 over the identity and the exact text. */
export function recordCrc(sessionId: string, r: { seq: number; ts: string; kind: string; text: string }): string {
  return hex8(crc32(`${sessionId}\n${r.seq}\n${r.ts}\n${r.kind}\n${r.text}`));
}

export function textCrc(scope: string, text: string): string {
  return hex8(crc32(`${scope}\n${text}`));
}

function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}
