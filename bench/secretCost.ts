/**
 * What secret safety costs per record, against what any JSON store pays anyway: the write path's
 * secret work for an ordinary record (the walk and the redaction of prepareRecord, the core's
 * final gate, the backend's second net) over JSON.parse + JSON.stringify of the same record,
 * with no registered secret and with five; and the detector on hostile inputs
 * (test/domain/secrets/corpus/detectorHostile.ts) over the same size of `"x"` repeated. Times are
 * CPU time of this process. Run alone with `npx tsx bench/secretCost.ts [--quick]`; `npm run
 * bench` adds its rows to the secret table.
 */
import path from 'node:path';
import { FinalGate } from '../src/core/gate.js';
import { SecretSet } from '../src/domain/secrets/knownSecrets.js';
import { prepareRecord } from '../src/domain/serialize.js';
import type { RecordInput } from '../src/domain/types.js';
import { HOSTILE_SECRETS, hostileClasses } from '../test/domain/secrets/corpus/detectorHostile.js';

export interface SecretCostRow { scenario: string; value: string }

/** Mean CPU µs per call after a warm-up (user + system: other processes' load does not count). */
function cpuUs(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(50, n); i++) f();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / n;
}

/** The best of `rounds` measurements: a shared machine only ever adds time. */
function best(rounds: number, f: () => number): number {
  let b = Infinity;
  for (let i = 0; i < rounds; i++) b = Math.min(b, f());
  return b;
}

const prose = 'The build failed because the linker could not find libssl; install it and re-run make. ';
const text = (n: number) => prose.repeat(Math.ceil(n / prose.length)).slice(0, n);

/** The bench's mix of ordinary records, 1-4 KB each as journal text. */
export function ordinaryRecords(): RecordInput[] {
  const packageJson = `${JSON.stringify({
    name: 'web-app', version: '3.14.0', private: true,
    scripts: { build: 'vite build', test: 'vitest run', lint: 'eslint . --ext .ts,.tsx' },
    dependencies: { react: '^18.3.1', 'react-dom': '^18.3.1', zod: '^3.23.8', '@tanstack/react-query': '^5.51.1' },
    devDependencies: { vite: '^5.3.4', vitest: '^2.0.4', typescript: '^5.5.4', eslint: '^9.7.0' },
    engines: { node: '>=20' }, price: 19.9, build: 12345678901234567890,
  }, null, 2)}\n`;
  return [
    { kind: 'message', message: { role: 'user', content: text(900) } },
    {
      kind: 'message',
      message: {
        role: 'assistant', content: text(1300),
        toolCalls: [{ id: 'call_8f2a', name: 'bash', arguments: JSON.stringify({ cmd: 'apt-get install -y libssl-dev && make', timeout: 120 }) }],
        usage: { input_tokens: 1843, output_tokens: 212, cache_read_input_tokens: 1024 },
      },
    },
    { kind: 'message', message: { role: 'tool', toolCallId: 'call_8f2a', content: [{ type: 'text', text: packageJson + text(1200) }] } },
    { kind: 'message', message: { role: 'assistant', content: `${text(2000)}\n\n\`\`\`ts\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n\`\`\`\n${text(1800)}` } },
    { kind: 'event', type: 'tool.output', payload: { exitCode: 0, durationMs: 5321, stdout: text(1500), files: ['src/a.ts', 'src/b.ts'], stats: { lines: 1204, ratio: 0.25 } } } as RecordInput,
  ];
}

/** The write path's secret work for one record: prepareRecord, the core's final gate, the backend's second net. */
function writePath(record: RecordInput, secrets: SecretSet, gate: FinalGate): void {
  const { text: t } = prepareRecord(record, 0, secrets, 1 << 30);
  const sealed = gate.records([t], [record.kind], 1, '2026-01-01T00:00:00.000Z');
  if (!('sealed' in sealed)) throw new Error('an ordinary record was refused');
  if (secrets.size > 0 && secrets.findInText(t) !== undefined) throw new Error('an ordinary record was refused');
}

export function secretCostBench(quick = false): SecretCostRow[] {
  const base = ordinaryRecords();
  const n = quick ? 2000 : 10000;
  const rounds = quick ? 3 : 5;
  // Every record measured is a new one (a member `n` differs): the vouching of texts already
  // checked (knownSecrets.ts) must not turn the measure into a map lookup.
  let serial = 0;
  const fresh = (count: number) => Array.from({ length: count }, () => base.map((r) => ({ ...r, n: serial++ }) as RecordInput));
  const records = base;
  const texts = records.map((r) => JSON.stringify(r));
  const none = new SecretSet();
  const five = new SecretSet();
  for (const s of HOSTILE_SECRETS) five.add(s);
  const perRecord = (f: (batch: RecordInput[]) => void) => best(rounds, () => {
    const batches = fresh(n + 50);
    let k = 0;
    return cpuUs(n, () => f(batches[k++]!));
  });
  const json = best(rounds, () => {
    const batches = fresh(n + 50).map((b) => b.map((r) => JSON.stringify(r)));
    let k = 0;
    return cpuUs(n, () => { for (const t of batches[k++]!) JSON.stringify(JSON.parse(t)); });
  });
  const gNone = new FinalGate(none);
  const gFive = new FinalGate(five);
  const costNone = perRecord((batch) => { for (const r of batch) writePath(r, none, gNone); });
  const costFive = perRecord((batch) => { for (const r of batch) writePath(r, five, gFive); });
  const sizes = texts.map((t) => `${(t.length / 1024).toFixed(1)}`).join(', ');
  const rows: SecretCostRow[] = [
    { scenario: `ordinary records (${records.length}: ${sizes} KB): JSON.parse + JSON.stringify`, value: `${(json / records.length).toFixed(1)} µs per record` },
    { scenario: 'the same, write-path secret work, no registered secret', value: `${(costNone / records.length).toFixed(1)} µs per record = ${(costNone / json).toFixed(2)} × JSON (budget 3 ×)` },
    { scenario: 'the same, write-path secret work, five registered secrets', value: `${(costFive / records.length).toFixed(1)} µs per record = ${(costFive / json).toFixed(2)} × JSON (budget 5 ×)` },
  ];

  const size = quick ? 256 << 10 : 1 << 20;
  const classes = hostileClasses(size);
  let variant = 0;
  const timeOf = (t: string) => {
    // A new text each time (one character appended): a text found clean is vouched for.
    const bufs = Array.from({ length: 2 * rounds + 2 }, () => Buffer.from(`${t}${variant++ % 10}`, 'utf8'));
    let k = 0;
    return best(rounds, () => cpuUs(1, () => five.findInBytes(bufs[k++]!)));
  };
  const times = classes.map((k) => timeOf(k.text));
  // The reference measured again last (the first measure also pays for warming up), the better one kept.
  const reference = Math.min(times[0]!, timeOf(classes[0]!.text));
  let worst = 0;
  let worstName = '';
  for (const [i, k] of classes.entries()) {
    const us = times[i]!;
    const ratio = us / reference;
    if (ratio > worst && k !== classes[0]) [worst, worstName] = [ratio, k.name];
    rows.push({ scenario: `detector, hostile ${size >> 10} KB: ${k.name}`, value: `${(us / 1000).toFixed(1)} ms = ${ratio.toFixed(1)} × "x" (budget 10 ×)` });
  }
  rows.push({ scenario: 'detector, hostile: worst class', value: `${worst.toFixed(1)} × "x" (${worstName})` });

  const numeric = new SecretSet();
  numeric.add(HOSTILE_SECRETS[1]);
  const bigMB = quick ? 1 : 8;
  const big = { kind: 'message', message: { role: 'tool', content: '1e5 '.repeat((bigMB << 20) / 4) } } as RecordInput;
  const gate = new FinalGate(numeric);
  const bigMs = best(1, () => cpuUs(1, () => writePath(big, numeric, gate))) / 1000;
  rows.push({ scenario: `a ${bigMB} MB message of "1e5 " repeated, numeric secret registered (write path)`, value: `${(bigMs / 1000).toFixed(2)} s` });
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const rows = secretCostBench(process.argv.includes('--quick'));
  process.stdout.write(`| secret cost | measured |\n| --- | --- |\n${rows.map((r) => `| ${r.scenario} | ${r.value} |`).join('\n')}\n`);
}
