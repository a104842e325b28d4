import { crc32 } from 'node:zlib';
import { headerAad, type JournalCipher, keyMismatch, recordAad, sealGated, type StoreCipher } from './cipher.js';
import { parseExact, stringifyExact } from '../../../domain/exactJson.js';

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

/**
 * One record line. `recordText` is JSON.stringify of the record (a non-empty object). With a
 * cipher (encryption at rest) the record's bytes are sealed into `enc` and only the envelope
 * stays readable: `{"seq":N,"ts":"…",["batchEnd":M,]"enc":"<base64>","crc":"…"}`, the
 * associated data binding the sealed bytes to the session id, seq, ts and batchEnd.
 */
export function encodeRecordLine(seq: number, ts: string, batchEnd: number | undefined, recordText: string, cipher?: JournalCipher): Buffer {
  const batch = batchEnd === undefined ? '' : `,"batchEnd":${batchEnd}`;
  if (cipher) {
    const enc = sealGated(cipher, recordAad(cipher.sessionId, seq, ts, batchEnd), Buffer.from(recordText, 'utf8'));
    return sealLine(`{"seq":${seq},"ts":${JSON.stringify(ts)}${batch},"enc":"${enc}"}`);
  }
  return sealLine(`{"seq":${seq},"ts":${JSON.stringify(ts)}${batch},${recordText.slice(1)}`);
}

/**
 * A header line. With a cipher the members after format, version and sessionId are sealed into
 * `enc`, and `key` names the key (its check value): `{"format":…,"version":1,"sessionId":…,"key":"<id>","enc":"…","crc":"…"}`.
 */
export function encodeHeaderLine(header: Record<string, unknown> & { sessionId: string }, cipher?: JournalCipher): Buffer {
  if (!cipher) return sealLine(JSON.stringify(header));
  const { format, version, sessionId, ...rest } = header;
  const enc = sealGated(cipher, headerAad(sessionId), Buffer.from(JSON.stringify(rest), 'utf8'));
  return sealLine(JSON.stringify({ format, version, sessionId, key: cipher.key.id, enc }));
}

/**
 * The header's plaintext members. `key`: the store's key (undefined: a plaintext store). A
 * header sealed under another key, a sealed header without a key, or a plaintext header in an
 * encrypted store is KeyMismatch (thrown); a sealed header that does not authenticate under the
 * right key (altered, or moved from another session) is damage (ok: false).
 */
export function openHeader(value: Record<string, unknown>, store: StoreCipher | undefined): DecodedLine & { cipher?: JournalCipher } {
  const key = store?.key;
  // A sealed header shows only format, version, sessionId, key and enc (a plaintext one always has createdAt).
  const sealed = typeof value.enc === 'string' && value.createdAt === undefined;
  const sessionId = String(value.sessionId);
  if (!key && sealed) throw keyMismatch(`session ${sessionId} is encrypted: give its key (--encryption-key-env or --encryption-key-file)`, 'keyRequired', { sessionId });
  if (!key) return { ok: true, value };
  if (!sealed) throw keyMismatch(`session ${sessionId} is not encrypted but a key was given: encrypt the store with session-sidecar rekey`, 'notEncrypted', { sessionId });
  if (!key.names(value.key)) throw keyMismatch(`session ${sessionId} is encrypted with another key`, 'wrongKey', { sessionId });
  const plain = key.open(headerAad(sessionId), value.enc as string);
  if (!plain) return { ok: false, reason: 'does not authenticate (altered, or moved from another session)', fatal: true };
  const rest = parseObject(plain.toString('utf8'));
  if (!rest) return { ok: false, reason: 'sealed members are not a canonical JSON object', fatal: true };
  return { ok: true, value: { format: value.format, version: value.version, sessionId: value.sessionId, ...rest }, cipher: { ...(store as StoreCipher), sessionId } };
}

/** A plaintext record line (one this process encoded, checked by the gates) sealed with `cipher`. */
export function sealPlainLine(line: Buffer, cipher: JournalCipher): Buffer {
  const d = decodePlainLine(line.subarray(0, line.length - 1));
  if (!d.ok) throw new Error(`sealPlainLine: ${d.reason}`);
  const { seq, ts, batchEnd, ...rec } = d.value;
  return encodeRecordLine(seq as number, ts as string, batchEnd as number | undefined, stringifyExact(rec), cipher);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = parseExact(text);
    if (v === null || typeof v !== 'object' || Array.isArray(v) || stringifyExact(v) !== text) return undefined;
    return v as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * `fatal`: the line's checksum holds, so it is not a torn write: it was altered or moved
 * (it fails authentication under the journal's key), or it is plaintext where the journal is
 * encrypted. Never a torn tail.
 */
export type DecodedLine = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string; fatal?: boolean };

/**
 * Verifies and parses one line (without its newline); with `cipher`, opens its sealed record.
 * Never throws except KeyMismatch: a sealed line read without a key.
 */
export function decodeLine(line: Buffer, cipher?: JournalCipher): DecodedLine {
  const d = decodePlainLine(line);
  if (!d.ok || (d.value.format !== undefined && d.value.seq === undefined)) return d; // a header is opened by openHeader
  const v = d.value;
  // A sealed line's envelope has no `kind` (every record has one): a record's own `enc` member is not a seal.
  const sealed = typeof v.enc === 'string' && v.kind === undefined;
  if (!cipher) {
    if (sealed) throw keyMismatch('the journal line is encrypted: give the store key', 'keyRequired');
    return d;
  }
  const keys = Object.keys(v);
  if (!sealed || keys[keys.length - 1] !== 'enc' || keys.length > 4) return { ok: false, reason: 'a plaintext line in an encrypted journal', fatal: true };
  const { seq, ts, batchEnd } = v;
  const plain = cipher.key.open(recordAad(cipher.sessionId, Number(seq), String(ts), typeof batchEnd === 'number' ? batchEnd : undefined), v.enc as string);
  if (!plain) return { ok: false, reason: 'line does not authenticate (altered, or moved from another seq or session)', fatal: true };
  const rec = parseObject(plain.toString('utf8'));
  if (!rec || 'seq' in rec || 'ts' in rec || 'batchEnd' in rec) return { ok: false, reason: 'sealed record is not a canonical JSON object', fatal: true };
  return { ok: true, value: { seq, ts, ...(batchEnd !== undefined ? { batchEnd } : {}), ...rec } };
}

function decodePlainLine(line: Buffer): DecodedLine {
  if (line.length < CRC_SUFFIX_LENGTH + 2) return { ok: false, reason: 'too short' };
  const bodyEnd = line.length - CRC_SUFFIX_LENGTH;
  const suffix = line.toString('latin1', bodyEnd);
  if (!suffix.startsWith(',"crc":"') || !suffix.endsWith('"}')) return { ok: false, reason: 'no checksum' };
  if (suffix.slice(8, 16) !== hex8(crc32(line.subarray(0, bodyEnd)))) return { ok: false, reason: 'checksum mismatch' };
  const text = line.toString('utf8');
  let value: unknown;
  try {
    value = parseExact(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not an object' };
  if (stringifyExact(value) !== text) return { ok: false, reason: 'not canonical (duplicate keys or re-encoded)' };
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
