/**
 * Secret-safety cost, in process: the guard (known-secret scan + redaction) of a typical 2 KB
 * message record against an in-process durable append of it; scan throughput on a large tool
 * output; and the time of hostile 1 MB inputs built to make patterns backtrack.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileSessionStore } from '../src/stores/fileStore.js';
import { guardValue } from '../src/domain/secrets/gate.js';
import { SecretSet } from '../src/domain/secrets/knownSecrets.js';

export interface SecretBenchRow { scenario: string; value: string }

function timeIt(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(200, n); i++) f();
  const t = performance.now();
  for (let i = 0; i < n; i++) f();
  return ((performance.now() - t) * 1000) / n; // µs per call
}

const prose = 'The build failed because the linker could not find libssl; install it and re-run make. ';
function typicalRecord(): Record<string, unknown> {
  return {
    kind: 'message',
    message: {
      role: 'assistant',
      content: prose.repeat(16).slice(0, 1500),
      toolCalls: [{ id: 'call_8f2a', name: 'bash', arguments: JSON.stringify({ cmd: 'apt-get install -y libssl-dev && make', timeout: 120 }) }],
      usage: { input_tokens: 1843, output_tokens: 212, cache_read_input_tokens: 1024 },
    },
  };
}

export async function secretBench(dir: string): Promise<SecretBenchRow[]> {
  const secrets = new SecretSet();
  for (const s of ['sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c', 'hunter2-correct-horse-battery', 'S3cr3t-Canary-7f3a9b2c1d']) secrets.add(s);
  const record = typicalRecord();
  const bytes = Buffer.byteLength(JSON.stringify(record));
  // A new record each call: a text found clean is vouched for (knownSecrets.ts).
  const variants = Array.from({ length: 5200 }, (_, i) => ({ ...record, n: i }));
  let k = 0;
  const guardUs = timeIt(5000, () => guardValue(variants[k++ % variants.length], secrets, 'records[0]'));
  const stringifyUs = timeIt(5000, () => JSON.stringify(record));

  const root = fs.mkdtempSync(path.join(dir, 'secrets-'));
  const store = new FileSessionStore(root);
  const { sessionId } = await store.create({}, { values: ['hunter2-correct-horse-battery'] });
  const n = 2000;
  const t = performance.now();
  for (let i = 0; i < n; i++) await store.append(sessionId, [record as { kind: string }]);
  const appendUs = ((performance.now() - t) * 1000) / n;
  await store.closeAll();
  fs.rmSync(root, { recursive: true, force: true });

  const big = { kind: 'event', type: 'tool.output', payload: { stdout: `${prose}\n`.repeat(Math.ceil((16 << 20) / prose.length)) } };
  const bigMB = Buffer.byteLength(JSON.stringify(big)) / (1 << 20);
  const bigMs = timeIt(3, () => guardValue(big, secrets, 'records[0]')) / 1000;

  const hostile: Array<[string, string]> = [
    ['1 MB of token characters', 'A'.repeat(1 << 20)],
    ['1 MB of "Bearer " repeated', 'Bearer '.repeat((1 << 20) / 7)],
    ['1 MB of "-----BEGIN PRIVATE KEY-----"', '-----BEGIN PRIVATE KEY-----'.repeat((1 << 20) / 27)],
    ['1 MB of "x://a:"', 'x://a:'.repeat((1 << 20) / 6)],
    ['1 MB of "eyJ" fragments', 'eyJabcde.'.repeat((1 << 20) / 9)],
    ['1 MB of "%4" and "\\\\u00"', '%4\\u00'.repeat((1 << 20) / 6)],
    ['1 MB of "sk-" and "_" runs', 'sk-_'.repeat((1 << 20) / 4)],
  ];
  const rows: SecretBenchRow[] = [
    { scenario: `guard of a ${bytes} B message record (3 secrets)`, value: `${guardUs.toFixed(1)} µs (JSON.stringify alone: ${stringifyUs.toFixed(1)} µs)` },
    { scenario: 'durable append of that record, in process', value: `${appendUs.toFixed(0)} µs` },
    { scenario: 'guard share of the append', value: `${((guardUs / appendUs) * 100).toFixed(1)} % (budget 20 %)` },
    { scenario: `guard of a ${bigMB.toFixed(0)} MB tool output`, value: `${(bigMB / (bigMs / 1000)).toFixed(0)} MB/s (budget ≥ 50 MB/s)` },
  ];
  for (const [name, text] of hostile) {
    const ms = timeIt(3, () => guardValue({ kind: 'event', type: 'x', payload: text }, secrets, 'records[0]')) / 1000;
    rows.push({ scenario: `hostile input: ${name}`, value: `${ms.toFixed(1)} ms (budget 100 ms)` });
  }
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const rows = await secretBench(os.tmpdir());
  process.stdout.write(`| secret safety | measured |\n| --- | --- |\n${rows.map((r) => `| ${r.scenario} | ${r.value} |`).join('\n')}\n`);
}
