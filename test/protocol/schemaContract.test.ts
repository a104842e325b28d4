import { describe, expect, it } from 'vitest';
import { generateSchema } from '../../protocol/generate.js';
import { methods } from '../../protocol/index.js';

/**
 * schema.json as a contract a client's types can be generated from (issue 29): what the server
 * sends is typed as tightly as the protocol means it.
 */
const defs = generateSchema().$defs as Record<string, unknown>;

/** Every integer node below `node`, with its path. */
function integers(node: unknown, at: string, out: Array<{ at: string; node: Record<string, unknown> }>): void {
  if (Array.isArray(node)) return node.forEach((x, i) => integers(x, `${at}[${i}]`, out));
  if (!node || typeof node !== 'object') return;
  const n = node as Record<string, unknown>;
  if (n.type === 'integer') out.push({ at, node: n });
  for (const [k, v] of Object.entries(n)) integers(v, `${at}.${k}`, out);
}

describe('schema.json: what the server sends', () => {
  it('no count, size, limit or generation the server sends is typed as a signed integer', () => {
    const found: Array<{ at: string; node: Record<string, unknown> }> = [];
    for (const [name, def] of Object.entries(defs)) if (!name.endsWith('Params')) integers(def, name, found);
    // Signed on purpose: a tool's exit code (negative on some platforms for a signal), and the
    // versions a client offered, echoed as sent in UnsupportedProtocolVersion, and the JSON-RPC
    // error code (negative by JSON-RPC's definition) of ErrorResponse.
    const signed = found.filter((f) => !(typeof f.node.minimum === 'number' && f.node.minimum >= 0)
      && !/\.(exitCode|offered\.items)$|^ErrorResponse\.code$/.test(f.at.replace(/\.properties/g, '')));
    expect(found.length).toBeGreaterThan(30);
    expect(signed.map((f) => f.at)).toEqual([]);
  });

  it('results are open (§7): no result, and nothing only a result reaches, closes its objects; params stay strict', () => {
    const closed: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${at}[${i}]`));
      if (!node || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.additionalProperties === false) closed.push(at);
      for (const [k, v] of Object.entries(n)) walk(v, `${at}.${k}`);
    };
    const resultIds = new Set(Object.keys(defs).filter((id) => id.endsWith('Result') || id.endsWith('ErrorData') || id.endsWith('Data')));
    for (const id of resultIds) walk(defs[id], id);
    expect(resultIds.size).toBeGreaterThan(25);
    expect(closed).toEqual([]);
    for (const m of methods.filter((x) => x.direction === 'clientToServer')) {
      const id = (m.params.meta() as { id?: string } | undefined)?.id;
      if (id && id !== 'EmptyParams') expect((defs[id] as { additionalProperties?: unknown }).additionalProperties, id).toBe(false);
    }
  });
});

describe('schema.json: unions a code generator can type', () => {
  it('every union of objects on `kind` names each variant and carries a discriminator mapping every kind to it', () => {
    const unions = Object.entries(defs).filter(([, d]) => Array.isArray((d as { oneOf?: unknown }).oneOf));
    expect(unions.map(([id]) => id)).toEqual(expect.arrayContaining(['Record', 'StoredRecord']));
    for (const [id, d] of unions) {
      const u = d as { oneOf: Array<{ $ref?: string }>; discriminator?: { propertyName: string; mapping: Record<string, string> } };
      expect(u.oneOf.every((v) => typeof v.$ref === 'string'), `${id}: every variant is a named definition`).toBe(true);
      expect(u.discriminator?.propertyName, id).toBe('kind');
      const kinds = u.oneOf.map((v) => {
        const target = defs[v.$ref!.slice('#/$defs/'.length)] as { properties: { kind: { const: string } } };
        return [target.properties.kind.const, v.$ref];
      });
      expect(Object.entries(u.discriminator!.mapping).sort(), id).toEqual(kinds.sort());
    }
  });
});
