import type { UsageReport } from '../domain/types.js';
import type { ShownCounts } from '../domain/usage.js';

type Totals = Omit<UsageReport, 'lastSeq'>;

const ZERO: ShownCounts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, requests: 0 };

function add(a: ShownCounts, b: ShownCounts): ShownCounts {
  const reasoning = (a.reasoning ?? 0) + (b.reasoning ?? 0);
  return {
    input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite,
    ...(reasoning > 0 ? { reasoning } : {}), total: a.total + b.total, requests: a.requests + b.requests,
  };
}

/** The usage totals of several sessions (stats): counts and models summed. */
export function sumUsage(reports: readonly Totals[]): Totals {
  const byModel: Record<string, ShownCounts> = {};
  let total = ZERO;
  let records = 0;
  for (const r of reports) {
    records += r.records;
    total = add(total, r.total);
    for (const [m, c] of Object.entries(r.byModel)) byModel[m] = add(byModel[m] ?? ZERO, c);
  }
  const sorted: Record<string, ShownCounts> = {};
  for (const m of Object.keys(byModel).sort()) sorted[m] = byModel[m] as ShownCounts;
  return { records, total, byModel: sorted };
}

/** `usage 1280 tokens (input 1200, 1024 cached; output 80) in 1 request · gpt-4o 1280`, or undefined when nothing was counted. */
export function usageLine(u: Totals): string | undefined {
  if (u.records === 0) return undefined;
  const t = u.total;
  const input = [`input ${t.input}`, ...(t.cacheRead > 0 ? [`${t.cacheRead} cache read`] : []), ...(t.cacheWrite > 0 ? [`${t.cacheWrite} cache write`] : [])].join(', ');
  const output = `output ${t.output}${t.reasoning ? `, ${t.reasoning} reasoning` : ''}`;
  const models = Object.entries(u.byModel).map(([m, c]) => `${m} ${c.total}`).join(', ');
  return `usage ${t.total} tokens (${input}; ${output}) in ${t.requests} request${t.requests === 1 ? '' : 's'} · ${models}`;
}
