import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate } from '../../../clients/typescript/generate.js';
import { HEADER, memberName, handlerName } from '../../../clients/typescript/gen/common.js';
import { Client } from '../../../clients/typescript/src/index.js';
import { tempDir } from '../../helpers.js';

/**
 * The TypeScript client's generated files are what the generator makes of the committed
 * protocol/schema.json and meta.json, byte for byte; the generator reads nothing but those
 * (it imports no server code and no zod schema); the client compiles under the strictest
 * settings; `Client` has a member for every method of meta.json; the README's example compiles.
 */
const ROOT = path.resolve(__dirname, '../../..');
const CLIENT = path.join(ROOT, 'clients/typescript');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const meta = JSON.parse(fs.readFileSync(path.join(ROOT, 'protocol/meta.json'), 'utf8')) as {
  methods: Array<{ method: string; kind: string; direction: string }>;
  baseProtocol: Array<{ method: string }>;
};

function tsc(project: string): string {
  try {
    execFileSync(process.execPath, [TSC, '--noEmit', '-p', project], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  }
}

describe('clients/typescript', () => {
  it('the generated files are the generator\'s output for the committed protocol, each with the DO NOT EDIT header', async () => {
    const files = await generate();
    expect(Object.keys(files).sort()).toEqual(fs.readdirSync(path.join(CLIENT, 'src/generated')).sort());
    for (const [name, text] of Object.entries(files)) {
      expect(text.startsWith(HEADER), name).toBe(true);
      expect(fs.readFileSync(path.join(CLIENT, 'src/generated', name), 'utf8'), `${name}: run npx tsx clients/typescript/generate.ts`).toBe(text);
    }
  });

  it('the generator imports only node:, json-schema-to-typescript and its own files', () => {
    const sources = ['generate.ts', ...fs.readdirSync(path.join(CLIENT, 'gen')).map((f) => `gen/${f}`)];
    for (const f of sources) {
      const specs = [...fs.readFileSync(path.join(CLIENT, f), 'utf8').matchAll(/^import [^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
      expect(specs.length, f).toBeGreaterThan(0);
      for (const s of specs) expect(s.startsWith('node:') || s === 'json-schema-to-typescript' || /^\.\/[\w/]+\.js$/.test(s), `${f} imports ${s}`).toBe(true);
    }
  });

  it('Client has a helper for every request and client notification, a handler for every server notification', () => {
    const members = new Set(Object.getOwnPropertyNames(Client.prototype));
    const expected = [
      ...meta.methods.map((m) => (m.direction === 'serverToClient' ? handlerName(m.method) : memberName(m.method))),
      ...meta.baseProtocol.map((m) => memberName(m.method)),
    ];
    expect(expected.length).toBe(meta.methods.length + meta.baseProtocol.length);
    for (const name of expected) expect(members.has(name), name).toBe(true);
    expect([...members].filter((m) => m !== 'constructor').sort()).toEqual([...expected].sort());
  });

  it('compiles with strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
    expect(tsc(CLIENT)).toBe('');
  }, 120_000);

  it('the README\'s example compiles against the client', () => {
    const readme = fs.readFileSync(path.join(CLIENT, 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'example.ts'), example!);
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true,
        types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')],
        paths: { 'session-sidecar/client': [path.join(CLIENT, 'src/index.ts')] }, allowImportingTsExtensions: true,
      },
      files: ['example.ts'],
    }));
    expect(tsc(dir)).toBe('');
  }, 120_000);
});
