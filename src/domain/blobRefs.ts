import { createHash } from 'node:crypto';
import { BLOB_POSITIONS, blobPositionsOf } from '../../protocol/blobPositions.js';
import { StoreError } from './errors.js';

/** A blob's name: the sha256 of its bytes, as `sha256:<64 hex>`. */
export const REF_PREFIX = 'sha256:';
export const HEX64 = /^[0-9a-f]{64}$/;

export function refOf(bytes: Buffer): string {
  return known.get(bytes) ?? REF_PREFIX + createHash('sha256').update(bytes).digest('hex');
}

/** Refs computed ahead by encodeLargeStrings, by the buffer they are the digest of (never changed after). */
const known = new WeakMap<Buffer, string>();

/** Characters encoded and hashed between two yields (encodeLargeStrings). */
const ENCODE_SLICE = 64 << 10;

/**
 * The UTF-8 bytes (and their ref) of each string of `record` that extractBlobs will store as a
 * blob (the large strings at its BLOB_POSITIONS), made in slices that yield to the event loop
 * between them (a string of megabytes takes tens of milliseconds to encode and to hash):
 * extractBlobs then takes them from `into`.
 */
export async function encodeLargeStrings(record: unknown, threshold: number, into: Map<string, Buffer>): Promise<void> {
  const strings: string[] = [];
  if (isPlainObject(record)) collectAtPositions(record, positionsOf(record.kind), strings);
  for (const value of strings) {
    if (value.length < ENCODE_SLICE || into.has(value) || !bigString(value, threshold)) continue;
    const parts: Buffer[] = [];
    const hash = createHash('sha256');
    for (let at = 0; at < value.length; ) {
      let end = Math.min(value.length, at + ENCODE_SLICE);
      const last = value.charCodeAt(end - 1);
      if (end < value.length && last >= 0xd800 && last <= 0xdbff) end++; // a surrogate pair stays whole
      const part = Buffer.from(value.slice(at, end), 'utf8');
      hash.update(part);
      parts.push(part);
      at = end;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const bytes = Buffer.concat(parts);
    known.set(bytes, REF_PREFIX + hash.digest('hex'));
    into.set(value, bytes);
  }
}

/** The strings standing at the positions of `node` (below `value`). */
function collectAtPositions(value: unknown, node: PositionTree, into: string[]): void {
  if (node.leaf) {
    if (typeof value === 'string') into.push(value);
    return;
  }
  if (Array.isArray(value)) {
    if (node.each) for (const v of value) collectAtPositions(v, node.each, into);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [k, next] of node.members) if (Object.hasOwn(value, k)) collectAtPositions(value[k], next, into);
}

/** BLOB_POSITIONS of one kind as a tree: `members` by name, `each` for the elements of an array. */
interface PositionTree {
  leaf: boolean;
  members: Map<string, PositionTree>;
  each?: PositionTree;
}

const trees = new Map<string, PositionTree>();
const NO_POSITIONS: PositionTree = { leaf: false, members: new Map() };

function positionsOf(kind: unknown): PositionTree {
  if (typeof kind !== 'string') return NO_POSITIONS;
  let tree = trees.get(kind);
  if (!tree) {
    tree = { leaf: false, members: new Map() };
    for (const position of blobPositionsOf(kind)) {
      let node = tree;
      for (const step of position.replace(/\[\]/g, '.[]').split('.')) {
        if (step === '[]') node = node.each ??= { leaf: false, members: new Map() };
        else {
          let next = node.members.get(step);
          if (!next) node.members.set(step, (next = { leaf: false, members: new Map() }));
          node = next;
        }
      }
      node.leaf = true;
    }
    trees.set(kind, tree);
  }
  return tree;
}

/** The hex digest of a well-formed ref, or undefined. */
export function digestOf(ref: string): string | undefined {
  const hex = ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : '';
  return HEX64.test(hex) ? hex : undefined;
}


/**
 * The reference that stands in a record for a string stored as a blob:
 *   {"$blob":"sha256:<hex>","bytes":N[,"mediaType":"..."]}
 * The server writes one only at the BLOB_POSITIONS of the record's kind (where the schema says
 * `string | BlobRef`): a string there longer than the threshold, an attachment
 * {"$attach":"<string>"[,"mediaType":"..."]} there, or a BlobRef a client read back and appends
 * there again (the blob must exist). An attachment or a BlobRef anywhere else is refused, as is
 * any other object using the member `$blob` or `$attach`, so a reference is never ambiguous on
 * read and stands only where the schema says. Readers still take a BlobRef anywhere (journals
 * written before the positions were enforced hold them at any depth).
 */
export interface BlobRefValue {
  $blob: string;
  bytes: number;
  mediaType?: string;
}

export interface BlobSink {
  /** Strings of more UTF-8 bytes than this become blobs. */
  threshold: number;
  /** Stores the bytes durably and returns their ref. */
  put(bytes: Buffer): string;
  /** UTF-8 bytes of large strings made ahead (encodeLargeStrings), by string. */
  encoded?: ReadonlyMap<string, Buffer>;
  /** Size of an existing blob, or undefined. */
  size(ref: string): number | undefined;
  /**
   * A blob a client references: read, checked against its digest and against this store's
   * secrets (it may have been written before a secret was registered). Throws when refused.
   */
  vouch(ref: string): void;
}

const invalid = (path: string, message: string) => new StoreError('InvalidArgument', `${path}: ${message}`, { path });

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function onlyKeys(o: Record<string, unknown>, required: string, optional: string): boolean {
  return Object.keys(o).every((k) => k === required || k === optional || k === 'bytes');
}

export function isBlobRef(v: unknown): v is BlobRefValue {
  return isPlainObject(v) && typeof v.$blob === 'string' && typeof v.bytes === 'number'
    && (v.mediaType === undefined || typeof v.mediaType === 'string') && onlyKeys(v, '$blob', 'mediaType');
}

/** Whether a serialized record may hold anything to extract (a cheap test before the walk). */
export function mayHoldBlobs(text: string, threshold: number): boolean {
  return text.length * 3 > threshold || text.includes('"$attach"') || text.includes('"$blob"');
}

/** No lone surrogates (String.prototype.isWellFormed, Node 20). */
function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function bigString(s: string, threshold: number): boolean {
  if (s.length * 3 <= threshold) return false;
  // A lone surrogate has no UTF-8 form: such a string stays in the journal (JSON escapes it).
  return Buffer.byteLength(s) > threshold && wellFormed(s);
}

/**
 * `record` (kind first) with the large strings and attachments at its kind's BLOB_POSITIONS
 * stored as blobs and replaced by refs; every other member as it is (an attachment or a BlobRef
 * there is refused: InvalidArgument naming its path).
 */
export function extractBlobs(record: unknown, sink: BlobSink, path: string): unknown {
  if (!isPlainObject(record)) return record;
  return extractAt(record, positionsOf(record.kind), sink, path);
}

function extractAt(value: unknown, node: PositionTree, sink: BlobSink, path: string): unknown {
  if (node.leaf) return atPosition(value, sink, path);
  if (Array.isArray(value)) {
    const each = node.each;
    return each ? value.map((v, i) => extractAt(v, each, sink, `${path}[${i}]`)) : unmarked(value, path);
  }
  if (!isPlainObject(value)) return value;
  if (node.members.size === 0) return unmarked(value, path);
  refuseReserved(value, path);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const next = node.members.get(k);
    out[k] = next ? extractAt(v, next, sink, `${path}.${k}`) : unmarked(v, `${path}.${k}`);
  }
  return out;
}

/** A value at a BlobRef position: a large string becomes a blob, an attachment is stored, a BlobRef is checked. */
function atPosition(value: unknown, sink: BlobSink, path: string): unknown {
  if (typeof value === 'string') {
    if (!bigString(value, sink.threshold)) return value;
    const bytes = sink.encoded?.get(value) ?? Buffer.from(value, 'utf8');
    return { $blob: sink.put(bytes), bytes: bytes.length };
  }
  if (isPlainObject(value) && Object.hasOwn(value, '$attach')) return attachment(value, sink, path);
  if (isPlainObject(value) && Object.hasOwn(value, '$blob')) return existingRef(value, sink, path);
  return unmarked(value, path);
}

const POSITIONS_TEXT = Object.entries(BLOB_POSITIONS).map(([kind, paths]) => `${kind}: ${paths.join(', ')}`).join('; ');

/** An object using `$attach` or `$blob` outside a BlobRef position is refused. */
function refuseReserved(o: Record<string, unknown>, path: string): void {
  if (Object.hasOwn(o, '$attach')) {
    throw invalid(path, `an attachment ($attach) may stand only where the schema allows a BlobRef (${POSITIONS_TEXT}); send the value itself here`);
  }
  if (Object.hasOwn(o, '$blob')) {
    throw invalid(path, `a blob reference ($blob) may stand only where the schema allows a BlobRef (${POSITIONS_TEXT}); read the record with inline: true to copy it`);
  }
}

/** `value`, unchanged, after checking that no object in it uses `$attach` or `$blob`. */
function unmarked(value: unknown, path: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    value.forEach((v, i) => unmarked(v, `${path}[${i}]`));
    return value;
  }
  const o = value as Record<string, unknown>;
  refuseReserved(o, path);
  for (const [k, v] of Object.entries(o)) unmarked(v, `${path}.${k}`);
  return value;
}

function attachment(o: Record<string, unknown>, sink: BlobSink, path: string): BlobRefValue {
  if (typeof o.$attach !== 'string' || (o.mediaType !== undefined && typeof o.mediaType !== 'string') || Object.keys(o).some((k) => k !== '$attach' && k !== 'mediaType')) {
    throw invalid(path, 'an attachment is {"$attach": string, "mediaType"?: string}');
  }
  if (!wellFormed(o.$attach)) throw invalid(path, 'an attachment must be well-formed Unicode (send bytes as base64)');
  const bytes = Buffer.from(o.$attach, 'utf8');
  return { $blob: sink.put(bytes), bytes: bytes.length, ...(typeof o.mediaType === 'string' ? { mediaType: o.mediaType } : {}) };
}

function existingRef(o: Record<string, unknown>, sink: BlobSink, path: string): BlobRefValue {
  if (!isBlobRef(o)) throw invalid(path, 'a blob reference is {"$blob": "sha256:<hex>", "bytes": n, "mediaType"?: string}');
  const size = sink.size(o.$blob);
  if (size === undefined) throw invalid(path, `blob ${o.$blob} does not exist in this store`);
  if (size !== o.bytes) throw invalid(path, `blob ${o.$blob} has ${size} bytes, not ${o.bytes}`);
  sink.vouch(o.$blob);
  return o;
}

/** `value` with every BlobRef replaced by the string it stands for (read, verified, by `load`); the same value when it holds none. */
export function inlineBlobs(value: unknown, load: (ref: string) => string): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (isBlobRef(value)) return load(value.$blob);
  const entries = Object.entries(value);
  let changed = false;
  const next = entries.map(([k, v]) => {
    const w = inlineBlobs(v, load);
    if (w !== v) changed = true;
    return [k, w] as const;
  });
  if (!changed) return value;
  return Array.isArray(value) ? next.map(([, v]) => v) : Object.fromEntries(next);
}
