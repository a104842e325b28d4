import { crc32 } from 'node:zlib';

/**
 * The journal line format (protocol/STORAGE.md is the reference):
 *   line     = json-object "\n"
 *   header   = {"format":"session-sidecar/journal","version":1,"sessionId":...,...,"crc":"xxxxxxxx"}
 *   record   = {"seq":N,"ts":"...",["batchEnd":M,]<record members>,"crc":"xxxxxxxx"}
 * `crc` is the CRC-32 (hex, 8 digits) of the line's UTF-8 bytes before `,"crc":`. Every line
 * is exactly what JSON.stringify produces for its parsed value, so a duplicate key, stray
 * whitespace or any re-encoding is detected as damage. `batchEnd` marks the lines of a batch
 * of more than one record with the batch's last seq: a batch cut short is a torn tail.
 */
export const JOURNAL_FORMAT = 'session-sidecar/journal';
export const JOURNAL_VERSION = 1;
export { ENVELOPE_KEYS } from '../../../domain/serialize.js';

const CRC_SUFFIX_LENGTH = ',"crc":"00000000"}'.length;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Seals a JSON object text (ending in `}`) with its checksum and a newline. */
export function sealLine(objectText: string): Buffer {
  const body = objectText.slice(0, -1);
  return Buffer.from(`${body},"crc":"${hex8(crc32(body))}"}\n`, 'utf8');
}

/** One record line. `recordText` is JSON.stringify of the record (a non-empty object). */
export function encodeRecordLine(seq: number, ts: string, batchEnd: number | undefined, recordText: string): Buffer {
  const batch = batchEnd === undefined ? '' : `,"batchEnd":${batchEnd}`;
  return sealLine(`{"seq":${seq},"ts":${JSON.stringify(ts)}${batch},${recordText.slice(1)}`);
}

export type DecodedLine = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Verifies and parses one line (without its newline). Never throws. */
export function decodeLine(line: Buffer): DecodedLine {
  if (line.length < CRC_SUFFIX_LENGTH + 2) return { ok: false, reason: 'too short' };
  const bodyEnd = line.length - CRC_SUFFIX_LENGTH;
  const suffix = line.toString('latin1', bodyEnd);
  if (!suffix.startsWith(',"crc":"') || !suffix.endsWith('"}')) return { ok: false, reason: 'no checksum' };
  if (suffix.slice(8, 16) !== hex8(crc32(line.subarray(0, bodyEnd)))) return { ok: false, reason: 'checksum mismatch' };
  const text = line.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not an object' };
  if (JSON.stringify(value) !== text) return { ok: false, reason: 'not canonical (duplicate keys or re-encoded)' };
  delete (value as Record<string, unknown>).crc;
  return { ok: true, value: value as Record<string, unknown> };
}

const ENVELOPE = /^\{"seq":(\d{1,16}),"ts":"[^"\\]{1,40}",("batchEnd":\d{1,16},)?/;

/**
 * The stored record's JSON bytes from a line whose checksum was verified: the line without its
 * checksum member and without `batchEnd` (which follows `ts` in the envelope), as session/read
 * returns records — as slices of the line, less its closing brace (the caller adds it). Undefined
 * when the envelope is not the writer's (then the caller parses the line).
 */
export function recordBytesOfLine(line: Buffer): { seq: number; parts: Buffer[] } | undefined {
  const m = ENVELOPE.exec(line.toString('latin1', 0, Math.min(line.length, 96)));
  if (!m) return undefined;
  const end = line.length - CRC_SUFFIX_LENGTH;
  const seq = Number(m[1]);
  if (!m[2]) return { seq, parts: [line.subarray(0, end)] };
  const cut = m[0].length - m[2].length;
  return { seq, parts: [line.subarray(0, cut - 1), line.subarray(m[0].length - 1, end)] }; // drops `,"batchEnd":M`
}

/** Whether a line (without its newline) carries the checksum of its bytes. */
export function checksumOk(line: Buffer): boolean {
  if (line.length < CRC_SUFFIX_LENGTH + 2) return false;
  const bodyEnd = line.length - CRC_SUFFIX_LENGTH;
  const suffix = line.toString('latin1', bodyEnd);
  return suffix.startsWith(',"crc":"') && suffix.endsWith('"}') && suffix.slice(8, 16) === hex8(crc32(line.subarray(0, bodyEnd)));
}

const KIND_PREFIX = /^\{"seq":\d{1,16},"ts":"[^"\\]{1,40}",(?:"batchEnd":\d{1,16},)?(?:"turnId":"[^"\\]{1,128}",)?"kind":"([A-Za-z]{1,64})"[,}]/;

/**
 * The kind of a record line from its prefix (records are written with `kind` first, after the
 * envelope and turnId), or undefined when the prefix does not show it (a checkpoint, a line of
 * an older writer): the caller then parses the line.
 */
export function peekKind(line: Buffer): string | undefined {
  return KIND_PREFIX.exec(line.toString('latin1', 0, Math.min(line.length, 320)))?.[1];
}

/** The seq of a record line from its fixed prefix, without verifying it (used to seek). */
export function peekSeq(prefix: Buffer): number | undefined {
  const m = /^\{"seq":(\d{1,16}),/.exec(prefix.toString('latin1', 0, Math.min(prefix.length, 32)));
  return m ? Number(m[1]) : undefined;
}
