/**
 * The TypeScript client's generator: reads protocol/schema.json and protocol/meta.json and
 * writes src/generated/types.ts and src/generated/methods.ts (DO NOT EDIT files; a drift test
 * regenerates them and fails on any difference). Run: `npx tsx clients/typescript/generate.ts`,
 * or with `--out DIR` to write elsewhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readInputs } from './gen/common.js';
import { renderMethods } from './gen/methods.js';
import { renderTypes } from './gen/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The generated files, by name. */
export async function generate(protocolDir = path.join(here, '../../protocol')): Promise<Record<string, string>> {
  const inputs = readInputs(protocolDir);
  return { 'types.ts': await renderTypes(inputs), 'methods.ts': renderMethods(inputs) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = i === -1 ? path.join(here, 'src/generated') : path.resolve(process.argv[i + 1] ?? '.');
  fs.mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(await generate())) fs.writeFileSync(path.join(out, name), text);
  process.stderr.write(`clients/typescript: ${path.relative(process.cwd(), out) || '.'}/types.ts and methods.ts written\n`);
}
