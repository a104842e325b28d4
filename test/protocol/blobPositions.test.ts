import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BLOB_POSITIONS } from '../../protocol/blobPositions.js';

/**
 * Issue 29, findings 6/8: a BlobRef stands only where the schema says. The server's write path
 * (src/domain/blobRefs.ts, extractBlobs) stores blobs only at protocol/blobPositions.ts's
 * BLOB_POSITIONS; this walks the committed schema.json and fails when the positions it marks
 * `string | BlobRef` differ from that list, so the two cannot drift. (That the server keeps to the
 * list is storeContract/runtime.test.ts and the conformance check runtime/blob-positions.)
 */
type Node = Record<string, unknown>;
const schema = JSON.parse(fs.readFileSync(new URL('../../protocol/schema.json', import.meta.url), 'utf8')) as { $defs: Record<string, Node> };
const defs = schema.$defs;
const BLOB_REF = '#/$defs/BlobRef';
const idOf = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** The record-relative paths below `node` at which a BlobRef may stand (`[]`: every element of an array). */
function positions(node: unknown, at: string, into: Set<string>, seen: ReadonlySet<string> = new Set()): Set<string> {
  if (!node || typeof node !== 'object') return into;
  if (Array.isArray(node)) {
    for (const n of node) positions(n, at, into, seen);
    return into;
  }
  const n = node as Node;
  if (n.$ref === BLOB_REF) into.add(at);
  else if (typeof n.$ref === 'string' && !seen.has(n.$ref)) positions(defs[idOf(n.$ref)], at, into, new Set([...seen, n.$ref]));
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(n[key])) positions(n[key], at, into, seen);
  if (n.items) positions(n.items, `${at}[]`, into, seen);
  if (n.properties && typeof n.properties === 'object') {
    for (const [k, v] of Object.entries(n.properties as Node)) positions(v, at ? `${at}.${k}` : k, into, seen);
  }
  if (n.additionalProperties && typeof n.additionalProperties === 'object') positions(n.additionalProperties, `${at}.*`, into, seen);
  return into;
}

/** kind → its BlobRef positions, for each branch of the union definition `id`. */
function byKind(id: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const branch of (defs[id]?.oneOf ?? defs[id]?.anyOf) as Node[]) {
    const def = defs[idOf(branch.$ref as string)] as Node;
    const kind = ((def.properties as Node).kind as Node).const as string;
    const found = [...positions(def, '', new Set())].sort();
    if (found.length > 0) out[kind] = found;
  }
  return out;
}

const listed = Object.fromEntries(Object.entries(BLOB_POSITIONS).map(([k, v]) => [k, [...v].sort()]));

describe('BlobRef positions: schema.json and protocol/blobPositions.ts agree', () => {
  it('the stored records (StoredRecord) mark a BlobRef exactly at BLOB_POSITIONS', () => {
    expect(byKind('StoredRecord')).toEqual(listed);
  });

  it('a record a client appends (Record) takes a BlobRef only at one of BLOB_POSITIONS', () => {
    const input = byKind('Record');
    expect(Object.keys(input).length).toBeGreaterThan(0);
    for (const [kind, paths] of Object.entries(input)) expect(listed[kind], kind).toEqual(expect.arrayContaining(paths));
  });

  it('no definition holds a BlobRef that the records do not reach (no position outside the list)', () => {
    const reached = new Set<string>();
    const reach = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(reach);
      for (const [k, v] of Object.entries(node as Node)) {
        if (k === '$ref' && typeof v === 'string' && !reached.has(idOf(v))) {
          reached.add(idOf(v));
          reach(defs[idOf(v)]);
        } else reach(v);
      }
    };
    reach(defs.StoredRecord);
    reach(defs.Record);
    const holders = Object.entries(defs).filter(([, d]) => JSON.stringify(d).includes(`"${BLOB_REF}"`)).map(([id]) => id).sort();
    expect(holders).toEqual(['InterruptionRecord', 'StoredInterruptionRecord', 'StoredToolStreamRecord', 'ToolCall']);
    for (const id of holders) expect(reached.has(id), id).toBe(true);
  });
});
