/**
 * The final byte gate of registered secrets (SecretSet.findInBytes), in process: its cost per
 * ordinary ~1.6 KB journal line (the append path runs it on every record), and on 1 MB inputs
 * built of near-misses of a registered secret in each of the encodings the detector undoes.
 * Times are CPU time. Run alone with `npx tsx bench/secretGate.ts`; `npm run bench` adds its rows to the secret table.
 */
import path from 'node:path';
import { SecretSet } from '../src/domain/secrets/knownSecrets.js';

export interface SecretGateRow { scenario: string; value: string }

const MB = 1 << 20;
const fill = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

/**
 * Mean µs of CPU time (user + system of this process) per call, after a warm-up: on a shared
 * machine the wall clock also counts the time other processes held the CPU.
 */
function timeIt(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(50, n); i++) f();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / n;
}

const prose = 'The build failed because the linker could not find libssl; install it and re-run make. ';

/** A journal line of about 1.6 KB: prose, a tool call with stringified arguments, usage counters. */
function ordinaryLine(): Buffer {
  const record = {
    seq: 41, ts: '2025-01-01T00:00:00.000Z', kind: 'message',
    message: {
      role: 'assistant',
      content: prose.repeat(16).slice(0, 1300),
      toolCalls: [{ id: 'call_8f2a', name: 'bash', arguments: JSON.stringify({ cmd: 'apt-get install -y libssl-dev && make', timeout: 120 }) }],
      usage: { input_tokens: 1843, output_tokens: 212, cache_read_input_tokens: 1024 },
    },
  };
  return Buffer.from(`${JSON.stringify(record)}\n`);
}

export function secretGateBench(): SecretGateRow[] {
  const secret = 'Qu"ot\\e+/=Wk9!x-Canary';
  const numeric = '564629869386547';
  const set = new SecretSet();
  for (const s of [secret, numeric, 'hunter2-correct-horse-battery']) set.add(s);

  const line = ordinaryLine();
  // A new line each call (its seq differs): a text found clean is vouched for (knownSecrets.ts).
  const lines = Array.from({ length: 20100 }, (_, i) => Buffer.from(line.toString('utf8').replace('"seq":41', `"seq":${i}`)));
  let k = 0;
  const perLineUs = timeIt(20000, () => set.findInBytes(lines[k++ % lines.length]!));
  const texts = lines.map((l) => l.toString('utf8'));
  const perTextUs = timeIt(20000, () => set.findInText(texts[k++ % texts.length]!));

  const miss = secret.slice(0, -1); // the secret minus its last character
  const bytes = Buffer.from(miss, 'utf8');
  const hostile: Array<[string, string]> = [
    ['the secret minus its last character, repeated', fill(`${miss} `)],
    ['its JSON escape, minus the last character, repeated', fill(`${JSON.stringify(miss).slice(1, -1)} `)],
    ['its base64, wrapped every 76 characters', fill(Buffer.from(fill(miss, 3 * MB / 4)).toString('base64').replace(/.{76}/g, '$&\r\n'))],
    ['its hex with ":" separators', fill(`${bytes.toString('hex').replace(/../g, '$&:')} `)],
    ['its double percent-encoding', fill(`${encodeURIComponent(encodeURIComponent(miss))}+`)],
    ['its UTF-16LE as \\u0000 text', fill(`${[...Buffer.from(miss, 'utf16le')].map((b) => `\\u00${b.toString(16).padStart(2, '0')}`).join('')} `)],
    ['its HTML entities', fill(`${[...miss].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('')} `)],
    ['numbers near the numeric secret', fill('5.6462986938654e14 ')],
    ['a run of backslashes', fill('\\')],
    ['"\\u005c" escapes chained (each pass makes the next)', `\\u005c${fill('u005c', MB - 6)}`],
  ];
  const rows: SecretGateRow[] = [
    { scenario: `secret gate per ${(line.length / 1024).toFixed(1)} KB record (findInBytes, 3 secrets)`, value: `${perLineUs.toFixed(1)} µs` },
    { scenario: 'the same line as text (findInText, what guardValue runs before the walk)', value: `${perTextUs.toFixed(1)} µs` },
  ];
  for (const [name, text] of hostile) {
    const bufs = Array.from({ length: 6 }, (_, i) => Buffer.from(`${text}${i}`));
    let found: string | undefined;
    let j = 0;
    const ms = timeIt(3, () => { found = set.findInBytes(bufs[j++]!); }) / 1000;
    rows.push({ scenario: `secret gate, hostile 1 MB of near-misses: ${name}`, value: `${ms.toFixed(1)} ms${found ? ` (refused: ${found})` : ''}` });
  }
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const rows = secretGateBench();
  process.stdout.write(`| secret gate | measured |\n| --- | --- |\n${rows.map((r) => `| ${r.scenario} | ${r.value} |`).join('\n')}\n`);
}
