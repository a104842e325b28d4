import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateMeta, generateSchema, renderJson, renderMethods, renderVocabulary } from '../../protocol/generate.js';
import { ErrorKindCode, methods } from '../../protocol/index.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../protocol');

describe('generated protocol files', () => {
  it('schema.json matches the zod source (run npm run gen:protocol after changing protocol/)', () => {
    expect(fs.readFileSync(path.join(dir, 'schema.json'), 'utf8')).toBe(renderJson(generateSchema()));
  });

  it('meta.json matches the method descriptors', () => {
    expect(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')).toBe(renderJson(generateMeta()));
  });

  it('vocabulary.generated.ts matches the schemas (the binary, built without .meta annotations, uses it)', () => {
    expect(fs.readFileSync(path.join(dir, 'vocabulary.generated.ts'), 'utf8')).toBe(renderVocabulary());
  });

  it('METHODS.md, the method reference, matches the descriptors and schemas', () => {
    expect(fs.readFileSync(path.join(dir, 'METHODS.md'), 'utf8')).toBe(renderMethods());
  });

  it('METHODS.md is complete: every method, every params and result member, every definition it links to', () => {
    const ref = renderMethods();
    const defs = (generateSchema().$defs ?? {}) as Record<string, { properties?: Record<string, unknown> }>;
    for (const m of methods) expect(ref, m.method).toContain(`\n## ${m.method}\n`);
    for (const [, target] of ref.matchAll(/\]\(#([a-z0-9-]+)\)/g)) {
      expect(ref, `link #${target!}`).toMatch(new RegExp(`^#{2,3} .*$`, 'm'));
      const headings = [...ref.matchAll(/^#{2,3} (.+)$/gm)].map((h) => h[1]!.toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-'));
      expect(headings, `link #${target!} has its heading`).toContain(target);
    }
    for (const [name, def] of Object.entries(defs)) {
      if (!ref.includes(`\n### ${name}\n`)) continue;
      for (const member of Object.keys(def.properties ?? {}).filter((k) => k !== '_meta')) expect(ref, `${name}.${member}`).toContain(`| \`${member}\` |`);
    }
  });

  it('every method and error kind is documented in protocol/README.md', () => {
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    for (const m of methods) expect(readme, m.method).toContain(`\`${m.method}\``);
    for (const [kind, code] of Object.entries(ErrorKindCode)) {
      expect(readme, kind).toContain(kind);
      expect(readme, `${kind} code`).toContain(String(code));
    }
  });

  it('domain error codes are distinct and outside the reserved JSON-RPC and LSP ranges', () => {
    const codes = Object.values(ErrorKindCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) {
      expect(c >= -32899 && c <= -32800, `${c} in LSP range`).toBe(false);
      expect(c >= -32768 && c <= -32000, `${c} in JSON-RPC range`).toBe(false);
    }
  });
});
