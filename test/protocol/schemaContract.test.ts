import { describe, expect, it } from 'vitest';
import { generateSchema } from '../../protocol/generate.js';

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
    // Signed on purpose: a tool's exit code (negative on some platforms for a signal).
    const signed = found.filter((f) => !(typeof f.node.minimum === 'number' && f.node.minimum >= 0) && !/\.exitCode$/.test(f.at.replace(/\.properties/g, '')));
    expect(found.length).toBeGreaterThan(30);
    expect(signed.map((f) => f.at)).toEqual([]);
  });
});
