import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compile } from 'json-schema-to-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMeta, generateSchema } from '../../protocol/generate.js';
import * as protocol from '../../protocol/index.js';

/**
 * schema.json is good enough to generate a client's types from (issue 29): json-schema-to-
 * typescript turns every definition into a TypeScript type, and the TypeScript compiler checks
 * each method's generated params and result types against the zod types the server itself is
 * typed with, BOTH ways: what a client builds from the generated params type is accepted by the
 * server's params type, what the server's params type accepts can be written with the
 * generated type (so a loose schema — an untyped `{}`, a missing member — fails here), and the
 * same for every result.
 */
const ROOT = path.resolve(__dirname, '../..');
const dir = fs.mkdtempSync(path.join(ROOT, '.generated-types-'));
afterAll(() => process.env.KEEP_GEN ? undefined : fs.rmSync(dir, { recursive: true, force: true }));

const refId = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** Keywords that constrain a value; a node with none of them (only annotations) accepts any JSON value. */
const ASSERTIONS = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const', 'enum', 'properties', 'items', 'additionalProperties', 'if'];

/**
 * json-schema-to-typescript reads a node that carries only annotations (`{"description": ...}`)
 * as an object, where JSON Schema means "any value"; its own `tsType` keyword says what JSON
 * Schema means (`unknown`). Nothing else of the schema is touched.
 */
function anyValueAsUnknown(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anyValueAsUnknown);
  if (!node || typeof node !== 'object') return node;
  const n = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'properties' || k === '$defs'
    ? Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, anyValueAsUnknown(pv)])) : anyValueAsUnknown(v)]));
  return Object.keys(n).length > 0 && !ASSERTIONS.some((k) => k in n) ? { ...n, tsType: 'unknown' } : n;
}

describe('types generated from schema.json', () => {
  it('compile, and agree both ways with the server\'s own types for every params and result', async () => {
    const schema = generateSchema() as { $defs: Record<string, unknown> };
    const root = {
      title: 'Protocol', type: 'object', additionalProperties: false, $defs: anyValueAsUnknown(schema.$defs),
      properties: Object.fromEntries(Object.keys(schema.$defs).map((k) => [k, { $ref: `#/$defs/${k}` }])),
    };
    const generated = await compile(root as never, 'Protocol', { bannerComment: '', unreachableDefinitions: true, additionalProperties: false, ignoreMinAndMaxItems: true, format: false });
    fs.writeFileSync(path.join(dir, 'generated.ts'), generated);
    const meta = generateMeta() as { methods: Array<{ method: string; params: { $ref: string }; result?: { $ref?: string } }> };
    const pairs: Array<[string, string]> = [];
    for (const m of meta.methods) {
      pairs.push([m.method, refId(m.params.$ref)]);
      if (m.result?.$ref) pairs.push([m.method, refId(m.result.$ref)]);
    }
    const ids = [...new Set(pairs.map(([, id]) => id))];
    // Every id is exported under its own name by protocol/index.ts (the zod schema), so its type is z.input/z.output of it.
    for (const id of ids) expect(protocol, `protocol/index.ts exports ${id}`).toHaveProperty(id);
    const rel = path.relative(dir, path.join(ROOT, 'protocol/index.js')).split(path.sep).join('/');
    const lines = [
      "import type * as z from 'zod';",
      `import type * as P from '${rel}';`,
      "import type * as G from './generated.js';",
      'type Assignable<A, B> = [A] extends [B] ? true : false;',
      'const yes = <T extends true>(): T | undefined => undefined;',
      ...ids.flatMap((id) => [
        `yes<Assignable<G.${id}, z.input<typeof P.${id}>>>(); // a client's ${id} is accepted`,
        `yes<Assignable<z.output<typeof P.${id}>, G.${id}>>(); // the server's ${id} fits the client's type`,
        `yes<Assignable<z.input<typeof P.${id}>, G.${id}>>(); // the generated ${id} is not looser than the server's`,
      ]),
      'export {};',
    ];
    fs.writeFileSync(path.join(dir, 'check.ts'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      files: ['check.ts'],
    }));
    let out = '';
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      out = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    }
    const failing = [...out.matchAll(/check\.ts\((\d+),\d+\)/g)].map((m) => lines[Number(m[1]) - 1]!.replace(/^.*\/\/ /, ''));
    expect(failing, out.slice(0, 4000)).toEqual([]);
    expect(out).toBe('');
  }, 120_000);
});
