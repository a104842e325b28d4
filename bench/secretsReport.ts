/**
 * npm run secrets:report — the redaction rule table measured on the credential corpus of
 * test/domain/secrets/corpus: recall per family (families x positions redacted exactly: message
 * content, tool-call arguments, tool result), false positives per precision class (cases
 * altered), alterations of random base64 / base64url / hex strings, and the time of
 * redactTokens on 1 MB inputs: plain, the hostile list, and one built from each rule (best of 5;
 * per rule, best of 2, the slowest listed). Never part of the tests; no test asserts on a
 * timing. Flags: --random N (random strings, default 300), --families (print every family's
 * line, not only the misses).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { redactValue } from '../src/domain/secrets/redact.js';
import { placeholder, redactTokens, TOKEN_RULES } from '../src/domain/secrets/tokenRules.js';
import { FAMILIES, TABLE_FAMILIES } from '../test/domain/secrets/corpus/families.js';
import { HOSTILE, hostileFor, MB } from '../test/domain/secrets/corpus/hostile.js';
import { PRECISION } from '../test/domain/secrets/corpus/precision.js';

const { values } = parseArgs({ options: { random: { type: 'string' }, families: { type: 'boolean' } } });
const randomCount = Number(values.random ?? 300);

const wrap: Array<[string, (t: string) => unknown]> = [
  ['content', (t) => ({ kind: 'message', message: { role: 'user', content: t } })],
  ['tool arguments', (t) => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c', name: 'sh', arguments: JSON.stringify({ command: t }) }] } })],
  ['tool result', (t) => ({ kind: 'message', message: { role: 'tool', content: [{ type: 'text', text: t }] } })],
];

let fn = 0;
const misses: string[] = [];
const perFamily: Array<[string, string, number]> = [];
for (const f of FAMILIES) {
  let ok = 0;
  for (const [where, build] of wrap) {
    const rec = build(f.text);
    const want = JSON.stringify(build(f.text.split(f.secret).join(placeholder(f.rule))));
    if (JSON.stringify(redactValue(rec, JSON.stringify(rec)).value) !== want) {
      fn++;
      misses.push(`${f.family} (${where})`);
    } else ok++;
  }
  perFamily.push([f.family, f.rule, ok]);
}
/** A precision case's class: its label up to the first `:` (issue 27's corpus names them so), or what it is. */
const classOf = (label: string, payload: unknown) =>
  /^[a-z][a-z0-9 -]{2,40}:/.test(label) ? label.slice(0, label.indexOf(':')) : /^random /.test(label) ? 'random ciphertext' : typeof payload === 'string' ? 'other text' : 'json value';
let fp = 0;
const altered: string[] = [];
const perClass = new Map<string, [number, number]>();
for (const [label, payload] of PRECISION) {
  const rec = { kind: 'event', type: 'p', payload };
  const cls = classOf(label, payload);
  const [n, bad] = perClass.get(cls) ?? [0, 0];
  const changed = redactValue(rec, JSON.stringify(rec)).redactions.length > 0;
  perClass.set(cls, [n + 1, bad + (changed ? 1 : 0)]);
  if (changed) {
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
const ids = [...new Set(TOKEN_RULES.map((r) => r.id))];
console.log(`rules: ${TOKEN_RULES.length} patterns, ${ids.length} rule ids; families: ${families} (${TABLE_FAMILIES.length} of issue 13's table, ${families - TABLE_FAMILIES.length} added by issue 27)`);
console.log('');
console.log('| measure | value |');
console.log('|---|---|');
console.log(`| recall (${families} families x 3 positions redacted exactly) | ${FAMILIES.length * 3 - fn} / ${FAMILIES.length * 3} = ${pct(FAMILIES.length * 3 - fn, FAMILIES.length * 3)} |`);
console.log(`| false positives (precision cases altered) | ${fp} / ${PRECISION.length} = ${pct(fp, PRECISION.length)} |`);
console.log(`| random base64/base64url/hex strings altered (1 KB-1 MB, ${(randomBytesTotal / MB).toFixed(0)} MB) | ${randomAltered} / ${randomCount} |`);
if (misses.length) console.log(`missed: ${misses.join('; ')}`);
if (altered.length) console.log(`altered: ${altered.join('; ')}`);
console.log('');
console.log('| precision class | cases | altered |');
console.log('|---|---|---|');
for (const [cls, [n, bad]] of [...perClass].sort((a, b) => a[0].localeCompare(b[0]))) console.log(`| ${cls} | ${n} | ${bad} |`);
console.log('');
const byRule = new Map<string, [number, number]>();
for (const [, rule, ok] of perFamily) {
  const [n, good] = byRule.get(rule) ?? [0, 0];
  byRule.set(rule, [n + 1, good + (ok === 3 ? 1 : 0)]);
}
console.log('| rule | families | fully redacted |');
console.log('|---|---|---|');
for (const [rule, [n, good]] of [...byRule].sort((a, b) => a[0].localeCompare(b[0]))) console.log(`| ${rule} | ${n} | ${good} |`);
if (values.families) {
  console.log('');
  console.log('| family | rule | positions redacted |');
  console.log('|---|---|---|');
  for (const [family, rule, ok] of perFamily) console.log(`| ${family.replace(/\|/g, '\\|')} | ${rule} | ${ok} / 3 |`);
}

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

/** Best of 2 on a 1 MB input built from each rule (corpus/hostile.ts hostileFor); the slowest 10. */
const perRule = TOKEN_RULES.map((r, i) => {
  const input = hostileFor(r, i);
  let b = Infinity;
  for (let k = 0; k < 2; k++) {
    const t = performance.now();
    redactTokens(input);
    b = Math.min(b, performance.now() - t);
  }
  return [`${r.id} (${r.keywords[0]})`, b] as const;
}).sort((a, b) => b[1] - a[1]);
console.log('');
console.log(`| redactTokens on a 1 MB input built from each of the ${TOKEN_RULES.length} patterns (best of 2), slowest 10 | ms |`);
console.log('|---|---|');
for (const [label, ms] of perRule.slice(0, 10)) console.log(`| ${label.replace(/\|/g, '\\|')} | ${ms.toFixed(1)} |`);
const sorted = perRule.map(([, ms]) => ms).sort((a, b) => a - b);
console.log(`| median of all | ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} |`);
