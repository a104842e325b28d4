import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateMeta, generateSchema, renderJson, renderVocabulary } from '../../protocol/generate.js';
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
