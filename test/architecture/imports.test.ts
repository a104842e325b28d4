/**
 * The layers, enforced: a static reading of every import under src/.
 *
 * - The core (src/core/**) knows nothing of a backend, of files, SQL or JSON-RPC: it imports
 *   no module of src/backends, src/durable, src/server, src/framing, src/cli, src/migrate,
 *   src/adapters or src/client, and neither `pg` nor `node:fs`.
 * - A backend (src/backends/**) reaches into the core only for the port's types: `import type`
 *   from src/core/port.ts or src/core/gate.ts, nothing else of the core.
 * - The layers below the core (src/domain, src/scratch) import neither the core nor
 *   a backend nor anything above them.
 * - `Gated` values are made by the final gate alone: no module but src/core/gate.ts writes
 *   `as Gated<` (the brand's symbol is not exported; a cast is the only way to forge one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Source {
  /** Repository-relative path, with forward slashes. */
  file: string;
  text: string;
}

interface Import {
  /** Resolved repository-relative path for a relative specifier, else the bare specifier. */
  target: string;
  typeOnly: boolean;
  line: number;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

export function importsOf(src: Source): Import[] {
  const out: Import[] = [];
  for (const m of src.text.matchAll(IMPORT)) {
    const spec = (m[3] ?? m[4]) as string;
    const line = src.text.slice(0, m.index).split('\n').length;
    const target = spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(src.file), spec)).replace(/\.js$/, '.ts') : spec;
    out.push({ target, typeOnly: m[2] !== undefined, line });
  }
  return out;
}

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
const ABOVE_CORE = ['src/backends', 'src/durable', 'src/server', 'src/framing', 'src/cli', 'src/migrate', 'src/adapters', 'src/client'];
const ABOVE_LOWER = ['src/core', 'src/backends', 'src/server', 'src/framing', 'src/cli', 'src/migrate', 'src/adapters', 'src/client'];
const PORT_TYPES = new Set(['src/core/port.ts', 'src/core/gate.ts']);

/** Every rule broken by `sources`, one line each ("file:line: why"). */
export function violations(sources: Source[]): string[] {
  const out: string[] = [];
  for (const src of sources) {
    const at = (i: Import, why: string) => out.push(`${src.file}:${i.line}: ${why} (${i.target})`);
    for (const i of importsOf(src)) {
      if (under(src.file, 'src/core')) {
        if (ABOVE_CORE.some((d) => under(i.target, d)) || i.target === 'src/cli.ts') at(i, 'the core imports a backend or a layer above it');
        if (i.target === 'pg' || i.target === 'node:fs' || i.target === 'fs') at(i, 'the core imports a driver or the file system');
      }
      if (under(src.file, 'src/backends') && under(i.target, 'src/core')) {
        if (!PORT_TYPES.has(i.target)) at(i, 'a backend imports the core beyond the port');
        else if (!i.typeOnly) at(i, 'a backend imports the port for more than its types');
      }
      if (['src/domain', 'src/scratch'].some((d) => under(src.file, d))) {
        if (ABOVE_LOWER.some((d) => under(i.target, d)) || i.target === 'src/cli.ts') at(i, 'a lower layer imports the core, a backend or a layer above it');
      }
    }
    if (src.file !== 'src/core/gate.ts' && /\bas\s+Gated\s*</.test(src.text)) out.push(`${src.file}: forges a Gated value (only src/core/gate.ts makes them)`);
  }
  return out;
}

function sourcesUnder(dir: string): Source[] {
  const out: Source[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourcesUnder(rel));
    else if (e.name.endsWith('.ts')) out.push({ file: rel, text: fs.readFileSync(path.join(ROOT, rel), 'utf8') });
  }
  return out;
}

describe('architecture: imports follow the layers', () => {
  it('src/ breaks no rule', () => {
    const sources = sourcesUnder('src');
    expect(sources.some((s) => s.file === 'src/core/sessions/sessions.ts')).toBe(true);
    expect(violations(sources)).toEqual([]);
  });

  it('the check itself fails on an upward import, a backend reaching past the port, and a forged Gated value', () => {
    expect(violations([{ file: 'src/core/sessions/x.ts', text: "import { PostgresBackend } from '../../backends/postgres/backend.js';\n" }]))
      .toEqual(['src/core/sessions/x.ts:1: the core imports a backend or a layer above it (src/backends/postgres/backend.ts)']);
    expect(violations([{ file: 'src/core/x.ts', text: "const m = await import('../durable/fsLayer.js');\nimport fs from 'node:fs';\n" }])).toHaveLength(2);
    expect(violations([{ file: 'src/backends/memory/x.ts', text: "import { Core } from '../../core/sessions/context.js';\n" }])).toHaveLength(1);
    expect(violations([{ file: 'src/backends/memory/x.ts', text: "import { FinalGate } from '../../core/gate.js';\n" }]))
      .toEqual(['src/backends/memory/x.ts:1: a backend imports the port for more than its types (src/core/gate.ts)']);
    expect(violations([{ file: 'src/backends/memory/x.ts', text: "import type { Backend } from '../../core/port.js';\n" }])).toEqual([]);
    expect(violations([{ file: 'src/domain/x.ts', text: "export { Sessions } from '../core/sessions/sessions.js';\n" }])).toHaveLength(1);
    expect(violations([{ file: 'src/backends/postgres/x.ts', text: 'const r = rec as Gated<SealedRecord>;\n' }])).toHaveLength(1);
  });
});
