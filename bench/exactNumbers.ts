/**
 * What exact numbers (protocol §5.1, src/domain/exactJson.ts) cost: the frame decoder's parse of
 * ordinary append frames (parseExact: JSON.parse plus the number-token screen) and the writer's
 * stringifyExact (JSON.stringify plus a search for the marker), each over plain JSON.parse /
 * JSON.stringify of the same text; and, for scale, a frame holding 64-bit ids, which takes the
 * lossless parse. CPU time of this process, best of several rounds. Run alone with
 * `npx tsx bench/exactNumbers.ts`; `npm run bench` adds its rows (`--only exact`).
 */
import { parseExact, stringifyExact } from '../src/domain/exactJson.js';
import { ordinaryRecords } from './secretCost.js';
import type { Row } from './util.js';

function cpuMs(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(200, n); i++) f();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
}

const best = (rounds: number, f: () => number): number => Math.min(...Array.from({ length: rounds }, f));

export function exactNumberRows(quick = false): Row[] {
  const n = quick ? 2000 : 20000;
  const rounds = quick ? 3 : 7;
  const frame = (records: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/append', params: { sessionId: '01M8YDQDXT3BSXYRK39EHYYED7', records } });
  const ordinary = frame(ordinaryRecords());
  const big = ordinary.replace('"exitCode":0', '"exitCode":0,"providerId":12345678901234567,"amount":19.90');
  const value = JSON.parse(ordinary) as unknown;
  const parse = best(rounds, () => cpuMs(n, () => JSON.parse(ordinary)));
  const exact = best(rounds, () => cpuMs(n, () => parseExact(ordinary)));
  const lossless = best(rounds, () => cpuMs(n, () => parseExact(big)));
  const stringify = best(rounds, () => cpuMs(n, () => JSON.stringify(value)));
  const exactOut = best(rounds, () => cpuMs(n, () => stringifyExact(value)));
  const per = (ms: number) => (ms / n) * 1000;
  const note = `an append frame of the bench's 5 ordinary records (${(ordinary.length / 1024).toFixed(1)} KB), ${n} times`;
  return [
    { scenario: 'exact numbers: decode an ordinary frame (parseExact)', value: per(exact) / 1000, unit: 'ms', ratio: exact / parse, ratioTo: 'JSON.parse', note: `${per(exact).toFixed(1)} µs vs ${per(parse).toFixed(1)} µs; ${note}` },
    { scenario: 'exact numbers: encode an ordinary answer (stringifyExact)', value: per(exactOut) / 1000, unit: 'ms', ratio: exactOut / stringify, ratioTo: 'JSON.stringify', note: `${per(exactOut).toFixed(1)} µs vs ${per(stringify).toFixed(1)} µs` },
    { scenario: 'exact numbers: decode the frame with two numbers that do not round-trip (lossless parse)', value: per(lossless) / 1000, unit: 'ms', ratio: lossless / parse, ratioTo: 'JSON.parse', note: `${per(lossless).toFixed(1)} µs: only frames holding such a number pay it` },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of exactNumberRows(process.argv.includes('--quick'))) console.log(`${r.scenario}: ${r.ratio?.toFixed(2)} × ${r.ratioTo} (${r.note})`);
}
