/**
 * Row 5, the non-durable reference: fs.appendFileSync of each ~1 KB record line with no fsync
 * at all — what many agent CLIs do. Fast, and a crash or power loss can lose or tear any of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendLine } from './appends.js';
import type { Row } from './util.js';

export function appendFileNoSync(work: string, n: number, limit: number): Row {
  const file = path.join(work, 'appendFile.jsonl');
  const line = appendLine();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fs.appendFileSync(file, line, { mode: 0o600 });
  const ms = performance.now() - t0;
  fs.rmSync(file);
  const perSec = (n * 1000) / ms;
  return {
    scenario: 'non-durable reference: fs.appendFileSync, no fsync (what many agent CLIs do)', value: perSec, unit: 'appends/s',
    ratio: perSec / limit, ratioTo: 'limit', note: `${n} appends`,
  };
}
