import { StoreError } from './errors.js';
import { type BlobSink, extractBlobs, mayHoldBlobs } from './blobRefs.js';
import { checkBytes } from './secrets/finalGate.js';
import { guardValue } from './secrets/gate.js';
import type { SecretSet } from './secrets/knownSecrets.js';
import type { Redaction } from './secrets/redact.js';
import type { RecordInput } from './types.js';

/** The members a stored record's envelope adds (seq, ts, batch marker, checksum): a client's record may not carry them. */
export const ENVELOPE_KEYS = ['seq', 'ts', 'batchEnd', 'crc'] as const;

/**
 * A record as it will stand in its journal line: refused if it holds a registered secret,
 * well-known credentials redacted, its large strings and attachments stored as blobs (durably,
 * before the line that references them is written), refused if still larger than `maxBytes`.
 * `kind` is always the first member, so a reader can skip lines by kind without parsing them.
 * Nothing is appended for a batch until every record of it passed.
 */
export function prepareRecord(
  record: RecordInput,
  index: number,
  secrets: SecretSet,
  maxBytes: number,
  blobs?: BlobSink,
): { value: unknown; text: string; redactions: Redaction[]; plain: unknown } {
  for (const key of ENVELOPE_KEYS) {
    if (Object.hasOwn(record, key)) throw new TypeError(`record ${index} uses the reserved member name ${key}`);
  }
  checkRuntimeRecord(record, index);
  if (record.kind === 'toolStream' && typeof record.dataBase64 === 'string' && secrets.size > 0) {
    // The bytes a tool printed, carried as base64: checked as the bytes they are (a secret, or any
    // encoding of it, in a tool's raw output), not only as base64 text.
    checkBytes(secrets, Buffer.from(record.dataBase64, 'base64'), `records[${index}].dataBase64<bytes>`);
  }
  const { kind, ...members } = record;
  const guarded = guardValue({ kind, ...members }, secrets, `records[${index}]`);
  if (blobs && mayHoldBlobs(guarded.text, blobs.threshold)) {
    const value = extractBlobs(guarded.value, blobs, `records[${index}]`);
    return sized({ value, text: JSON.stringify(value), redactions: guarded.redactions, plain: guarded.value }, index, maxBytes);
  }
  return sized({ ...guarded, plain: guarded.value }, index, maxBytes);
}

function sized<T extends { text: string }>(prepared: T, index: number, maxBytes: number): T {
  if (prepared.text.length > maxBytes || Buffer.byteLength(prepared.text) > maxBytes) {
    throw new StoreError('PayloadTooLarge', `record ${index} is larger than ${maxBytes} bytes`, { index, maxBytes });
  }
  return prepared;
}

/** What the params schema cannot say about runtime records. */
function checkRuntimeRecord(record: RecordInput, index: number): void {
  if (record.kind === 'toolStream' && (record.text === undefined) === (record.dataBase64 === undefined)) {
    throw new StoreError('InvalidArgument', `record ${index}: a toolStream chunk has exactly one of text and dataBase64`, { path: `records[${index}]` });
  }
  if (record.kind === 'toolStream' && typeof record.dataBase64 === 'string') {
    const b64 = record.dataBase64;
    if (b64.length % 4 !== 0 || Buffer.from(b64, 'base64').toString('base64') !== b64) {
      throw new StoreError('InvalidArgument', `record ${index}: dataBase64 is not canonical base64`, { path: `records[${index}].dataBase64` });
    }
  }
}
