#!/usr/bin/env node
// npm run man: writes man/session-sidecar.1 from the help texts of the BUILT binary
// (dist/src/cli/manPage.js; `npm run man` builds first). Its date is kept while the text is the
// same, and becomes today's when it changes. test/cli/man.test.ts checks the checked-in page is
// what this writes, byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { manPage, dateOf } = await import(path.join(root, 'dist/src/cli/manPage.js'));
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const out = path.join(root, 'man/session-sidecar.1');
const old = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
const kept = dateOf(old);
let page = kept ? await manPage(version, kept) : '';
if (page !== old) page = await manPage(version, new Date().toISOString().slice(0, 10));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, page);
process.stdout.write(`${page === old ? 'unchanged' : 'wrote'} ${path.relative(root, out)}\n`);
