/**
 * npm run secrets:report — the redaction rule table measured on the credential corpus of
 * test/domain/secrets/corpus: false-negative rate (families x positions not redacted exactly),
 * false-positive rate (precision cases altered), alterations of random base64 / base64url / hex
 * strings, and the time of redactTokens on the hostile 1 MB inputs (best of 5). Never part of
 * the tests; no test asserts on a timing. Flags: --random N (random strings, default 300).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { redactValue } from '../src/domain/secrets/redact.js';
import { placeholder, redactTokens, TOKEN_RULES } from '../src/domain/secrets/tokenRules.js';
import { FAMILIES } from '../test/domain/secrets/corpus/families.js';
import { HOSTILE, MB } from '../test/domain/secrets/corpus/hostile.js';
import { PRECISION } from '../test/domain/secrets/corpus/precision.js';

const { values } = parseArgs({ options: { random: { type: 'string' } } });
const randomCount = Number(values.random ?? 300);

const wrap: Array<[string, (t: string) => unknown]> = [
  ['content', (t) => ({ kind: 'message', message: { role: 'user', content: t } })],
  ['tool arguments', (t) => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c', name: 'sh', arguments: JSON.stringify({ command: t }) }] } })],
  ['tool result', (t) => ({ kind: 'message', message: { role: 'tool', content: [{ type: 'text', text: t }] } })],
];

let fn = 0;
const misses: string[] = [];
for (const f of FAMILIES) {
  for (const [where, build] of wrap) {
    const rec = build(f.text);
    const want = JSON.stringify(build(f.text.split(f.secret).join(placeholder(f.rule))));
    if (JSON.stringify(redactValue(rec, JSON.stringify(rec)).value) !== want) {
      fn++;
      misses.push(`${f.family} (${where})`);
    }
  }
}
let fp = 0;
const altered: string[] = [];
for (const [label, payload] of PRECISION) {
  const rec = { kind: 'event', type: 'p', payload };
  if (redactValue(rec, JSON.stringify(rec)).redactions.length > 0) {
    fp++;
    altered.push(label);
  }
}
let randomAltered = 0;
let randomBytesTotal = 0;
for (let i = 0; i < randomCount; i++) {
  const size = Math.round(1024 * 1024 ** ((i % 100) / 99));
  const enc = (['base64', 'base64url', 'hex'] as const)[i % 3]!;
  const s = randomBytes(size).toString(enc).slice(0, size);
  randomBytesTotal += s.length;
  if (redactTokens(s) !== s) randomAltered++;
}

const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(2)} %`;
const families = new Set(FAMILIES.map((f) => f.family)).size;
console.log(`rules: ${TOKEN_RULES.length} patterns, ${new Set(TOKEN_RULES.map((r) => r.id)).size} rule ids: ${[...new Set(TOKEN_RULES.map((r) => r.id))].join(', ')}`);
console.log('');
console.log('| measure | value |');
console.log('|---|---|');
console.log(`| false negatives (${families} families x 3 positions) | ${fn} / ${FAMILIES.length * 3} = ${pct(fn, FAMILIES.length * 3)} |`);
console.log(`| false positives (precision cases altered) | ${fp} / ${PRECISION.length} = ${pct(fp, PRECISION.length)} |`);
console.log(`| random base64/base64url/hex strings altered (1 KB-1 MB, ${(randomBytesTotal / MB).toFixed(0)} MB) | ${randomAltered} / ${randomCount} |`);
if (misses.length) console.log(`missed: ${misses.join('; ')}`);
if (altered.length) console.log(`altered: ${altered.join('; ')}`);

/** Best of 5 runs: the machine's other load only ever adds time. */
function best(f: () => unknown): number {
  let b = Infinity;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    f();
    b = Math.min(b, performance.now() - t);
  }
  return b;
}
const plain: Array<[string, string]> = [
  ['1 MB of prose (no keyword)', 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(MB / 45)).slice(0, MB)],
  ['1 MB random base64url', randomBytes(MB).toString('base64url').slice(0, MB)],
  ['1 MB random base64', randomBytes(MB).toString('base64').slice(0, MB)],
  ['1 MB random hex', randomBytes(MB).toString('hex').slice(0, MB)],
];
console.log('');
console.log('| redactTokens on 1 MB (best of 5) | ms |');
console.log('|---|---|');
let worst = 0;
for (const [label, input] of [...plain, ...HOSTILE]) {
  const ms = best(() => redactTokens(input));
  worst = Math.max(worst, ms);
  console.log(`| ${label.replace(/\|/g, '\\|')} | ${ms.toFixed(1)} |`);
}
console.log(`| worst | ${worst.toFixed(1)} |`);
