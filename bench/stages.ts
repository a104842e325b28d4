/**
 * Per-record CPU of a durable append, by stage, in process (issue 17 target 2): what one ~1 KB
 * `session/append` of one message record costs between the bytes arriving on stdin and the
 * answer leaving on stdout, apart from the write + fdatasync. Each stage runs alone in a loop;
 * times are CPU µs (user + system of this process) per record after a warm-up, so they hold on
 * a shared machine. Run alone with `npx tsx bench/stages.ts`; `npm run bench` adds the rows.
 *
 * The secret stages run twice: with no registered secret (the common case: well-known
 * credentials are still redacted) and with three registered secrets (every encoding checked).
 */
import { decodeMessage } from '../src/framing/decodeMessage.js';
import { SessionAppendParams } from '../protocol/methods/session.append.js';
import { encodeRecordLine } from '../src/backends/file/journal/format.js';
import { SecretSet } from '../src/domain/secrets/knownSecrets.js';
import { prepareRecord } from '../src/domain/serialize.js';
import { appendRecord } from './appends.js';

export interface StageRow { stage: string; us: number }

function cpuUs(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(200, n); i++) f();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / n;
}

export function stageBench(n = 20_000): StageRow[] {
  const request = { jsonrpc: '2.0', id: 17, method: 'session/append', params: { sessionId: '01M8K1WKJG45Z9A5127JYCS0QA', records: [appendRecord] } };
  const frame = Buffer.from(JSON.stringify(request));
  const params = request.params;
  const none = new SecretSet();
  const three = new SecretSet();
  for (const s of ['Qu"ot\\e+/=Wk9!x-Canary', '564629869386547', 'hunter2-correct-horse-battery']) three.add(s);
  const text = prepareRecord(appendRecord as never, 0, none, 1 << 30).text;
  const line = encodeRecordLine(41, new Date().toISOString(), undefined, text);
  // New lines (each its own seq): a text found clean is vouched for, and a measure of one line would be a map lookup.
  const lines = Array.from({ length: n + 200 }, (_, i) => encodeRecordLine(41 + i, new Date().toISOString(), undefined, text));
  const variants = Array.from({ length: n + 200 }, (_, i) => ({ ...appendRecord, message: { ...appendRecord.message, content: `${i} ${appendRecord.message.content}` } }));
  let k = 0;
  const response = { jsonrpc: '2.0', id: 17, result: { firstSeq: 41, lastSeq: 41 } };
  const rows: StageRow[] = [
    { stage: 'frame decode + JSON.parse of the request (decodeMessage)', us: cpuUs(n, () => decodeMessage(frame)) },
    { stage: 'params validation (zod, session/append)', us: cpuUs(n, () => SessionAppendParams.safeParse(params)) },
    { stage: 'prepare: serialize, secret walk, credential redaction (no registered secret)', us: cpuUs(n, () => prepareRecord(appendRecord as never, 0, none, 1 << 30)) },
    { stage: 'prepare, with 3 registered secrets', us: cpuUs(n, () => prepareRecord(variants[k++ % variants.length] as never, 0, three, 1 << 30)) },
    { stage: 'journal line: envelope + CRC-32 + UTF-8 (encodeRecordLine)', us: cpuUs(n, () => encodeRecordLine(41, '2026-12-01T00:00:00.000Z', undefined, text)) },
    { stage: 'final gate over the line bytes, 3 registered secrets (per check)', us: cpuUs(n, () => three.findInBytes(lines[k++ % lines.length]!)) },
    { stage: 'response encode (JSON.stringify)', us: cpuUs(n, () => JSON.stringify(response)) },
  ];
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of stageBench()) process.stdout.write(`${r.us.toFixed(1).padStart(7)} µs  ${r.stage}\n`);
}
