import { StoreError } from './errors.js';
import { type BlobSink, encodeLargeStrings, extractBlobs, mayHoldBlobs } from './blobRefs.js';
import { checkBytes } from './secrets/finalGate.js';
import { guardValue, secretAt } from './secrets/gate.js';
import { type SecretSet, SLICED_SCAN_CHARS } from './secrets/knownSecrets.js';
import { namesCredential, type Redaction, type RedactionScan } from './secrets/redact.js';
import { tokenKeywordsSliced } from './secrets/tokenRules.js';
import type { RecordInput } from './types.js';
import { stringifyExact } from './exactJson.js';

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
  pre?: Prechecked,
): { value: unknown; text: string; redactions: Redaction[]; plain: unknown } {
  for (const key of ENVELOPE_KEYS) {
    if (Object.hasOwn(record, key)) throw new TypeError(`record ${index} uses the reserved member name ${key}`);
  }
  checkRuntimeRecord(record, index);
  if (record.kind === 'toolStream' && typeof record.dataBase64 === 'string' && secrets.size > 0 && !pre?.bytesChecked) {
    // The bytes a tool printed, carried as base64: checked as the bytes they are (a secret, or any
    // encoding of it, in a tool's raw output), not only as base64 text.
    checkBytes(secrets, Buffer.from(record.dataBase64, 'base64'), `records[${index}].dataBase64<bytes>`);
  }
  const { kind, ...members } = record;
  const guarded = guardValue({ kind, ...members }, secrets, `records[${index}]`, pre?.original, pre?.scan);
  if (blobs && mayHoldBlobs(guarded.text, blobs.threshold)) {
    const value = extractBlobs(guarded.value, blobs, `records[${index}]`);
    return sized({ value, text: stringifyExact(value), redactions: guarded.redactions, plain: guarded.value }, index, maxBytes);
  }
  return sized({ ...guarded, plain: guarded.value }, index, maxBytes);
}

/** What prepareRecordSliced did already before prepareRecord runs (it is not done again). */
export interface Prechecked {
  /** The record's JSON text, kind first: prepareRecord's walk starts from it. */
  original: string;
  /** Its dataBase64's bytes were found clean. */
  bytesChecked: boolean;
  /** The redaction's first passes over `original`. */
  scan?: RedactionScan;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * prepareRecord without holding the event loop for long, whatever the record's size: a record
 * whose text is SLICED_SCAN_CHARS or longer is serialized, searched for registered secrets in
 * slices (SecretSet.findInTextSliced, which vouches for a text found clean, so prepareRecord's
 * own search of it is a lookup), redacted and split into blobs, yielding between those steps,
 * so that other sessions' requests are read and answered meanwhile. A secret found there
 * refuses the record naming the member, found by a walk that searches long strings in slices
 * too (SecretSet.locateSliced). A smaller record is prepareRecord's, unchanged.
 */
export async function prepareRecordSliced(
  record: RecordInput,
  index: number,
  secrets: SecretSet,
  maxBytes: number,
  blobs?: BlobSink,
): Promise<ReturnType<typeof prepareRecord>> {
  const { kind, ...members } = record;
  const original = JSON.stringify({ kind, ...members });
  if (original.length < SLICED_SCAN_CHARS) return prepareRecord(record, index, secrets, maxBytes, blobs, { original, bytesChecked: false });
  await nextTurn();
  let bytesChecked = false;
  if (secrets.size > 0 && record.kind === 'toolStream' && typeof record.dataBase64 === 'string') {
    const rule = await secrets.findInBytesSliced(Buffer.from(record.dataBase64, 'base64'));
    if (rule !== undefined) throw largeRefused(index, `records[${index}].dataBase64<bytes>`, rule);
    bytesChecked = true;
  }
  const hit = await secrets.locateSliced({ kind, ...members }, original);
  if (hit !== undefined) throw secretAt(hit, `records[${index}]`, secrets);
  await nextTurn();
  const keywords = await tokenKeywordsSliced(original);
  await nextTurn();
  const scan = { keywords, named: namesCredential(original) };
  await nextTurn();
  // The blobs' bytes and digests, made in slices too (extractBlobs takes them).
  const encoded = new Map<string, Buffer>();
  if (blobs) await encodeLargeStrings(record, blobs.threshold, encoded);
  const prepared = prepareRecord(record, index, secrets, maxBytes, blobs && { ...blobs, encoded }, { original, bytesChecked, scan });
  await nextTurn();
  // Redaction changed the text: the new one is searched in slices too (the final gate then finds it vouched for).
  if (prepared.text !== original && (await secrets.findInTextSliced(prepared.text)) !== undefined) throw largeRefused(index, `records[${index}]`, 'raw');
  return prepared;
}

function largeRefused(index: number, path: string, rule: string): StoreError {
  return new StoreError('SecretRejected', `record ${index} contains a registered secret (rule: ${rule}); nothing was written`, { path, rule });
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
