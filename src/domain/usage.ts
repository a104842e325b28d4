/**
 * Token usage totals of a session (protocol/README.md, session/usage), summed from what agents
 * already append, once for every backend. Pure: provider shapes in, normalized counts out.
 *
 * Which records count (each record counts its own usage object once, never twice):
 * - an `api` record with direction "response": `payload.usage` (OpenAI, Anthropic) or
 *   `payload.usageMetadata` (Gemini); the model is `payload.model`, else `payload.modelVersion`;
 * - a `message` record: `message.usage` or `message.usageMetadata`; the model is `message.model`.
 * A record naming no model is counted under NO_MODEL ("") and shown under the session's
 * `llm.model`, else "unknown" (the header never changes, so that is decided when answering).
 * Unknown shapes are ignored, never guessed; a count that is not a non-negative safe integer
 * is ignored (as if absent); an object whose counts would make a sum unsafe is not counted.
 *
 * Like the runtime counters the totals are part of a journal position: reduced at commit time,
 * carried by checkpoints (`usage`), the index entry and the PostgreSQL session row.
 */

export interface UsageCounts {
  /** All input tokens (cache reads and writes included). */
  input: number;
  /** All output tokens (reasoning included). */
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
  /** The provider's total where it gives one, else input + output. */
  total: number;
  /** Usage objects counted. */
  requests: number;
}

export interface UsageTotals {
  /** Records whose usage object was counted. */
  records: number;
  total: UsageCounts;
  /** By model name; NO_MODEL for records that named none. */
  byModel: Record<string, UsageCounts>;
}

export const NO_MODEL = '';

const ZERO: UsageCounts = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0, requests: 0 });
export const NO_USAGE: UsageTotals = Object.freeze({ records: 0, total: ZERO, byModel: Object.freeze({}) as Record<string, UsageCounts> });

const COUNT_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'total', 'requests'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A count, or undefined when absent or not a non-negative safe integer. */
const int = (o: Obj | undefined, key: string): number | undefined => {
  const v = o?.[key];
  return Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : undefined;
};
const sub = (o: Obj, key: string): Obj | undefined => (isObj(o[key]) ? (o[key] as Obj) : undefined);
const modelName = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : undefined);

/** One provider usage object normalized, or undefined for a shape this module does not know. */
export function normalizeUsage(u: unknown, gemini: boolean): UsageCounts | undefined {
  if (!isObj(u)) return undefined;
  if (gemini) {
    // Gemini usageMetadata: candidates exclude thoughts; the prompt includes cached content.
    const input = int(u, 'promptTokenCount');
    const candidates = int(u, 'candidatesTokenCount');
    if (input === undefined && candidates === undefined) return undefined;
    const reasoning = int(u, 'thoughtsTokenCount') ?? 0;
    const output = (candidates ?? 0) + reasoning;
    return counts(input ?? 0, output, int(u, 'cachedContentTokenCount') ?? 0, 0, reasoning, int(u, 'totalTokenCount'));
  }
  const prompt = int(u, 'prompt_tokens');
  const completion = int(u, 'completion_tokens');
  if (prompt !== undefined || completion !== undefined) {
    // OpenAI Chat Completions: prompt_tokens include cached ones, completion_tokens reasoning ones.
    return counts(prompt ?? 0, completion ?? 0, int(sub(u, 'prompt_tokens_details') ?? {}, 'cached_tokens') ?? 0, 0,
      int(sub(u, 'completion_tokens_details') ?? {}, 'reasoning_tokens') ?? 0, int(u, 'total_tokens'));
  }
  const inTokens = int(u, 'input_tokens');
  const outTokens = int(u, 'output_tokens');
  if (inTokens === undefined && outTokens === undefined) return undefined;
  if (Object.hasOwn(u, 'total_tokens') || Object.hasOwn(u, 'input_tokens_details') || Object.hasOwn(u, 'output_tokens_details')) {
    // OpenAI Responses: input_tokens include cached ones, output_tokens reasoning ones.
    return counts(inTokens ?? 0, outTokens ?? 0, int(sub(u, 'input_tokens_details') ?? {}, 'cached_tokens') ?? 0, 0,
      int(sub(u, 'output_tokens_details') ?? {}, 'reasoning_tokens') ?? 0, int(u, 'total_tokens'));
  }
  // Anthropic: input_tokens exclude the cache writes and reads, which are counted beside them.
  const cacheWrite = int(u, 'cache_creation_input_tokens') ?? 0;
  const cacheRead = int(u, 'cache_read_input_tokens') ?? 0;
  return counts((inTokens ?? 0) + cacheWrite + cacheRead, outTokens ?? 0, cacheRead, cacheWrite, 0, undefined);
}

function counts(input: number, output: number, cacheRead: number, cacheWrite: number, reasoning: number, total: number | undefined): UsageCounts {
  return { input, output, cacheRead, cacheWrite, reasoning, total: total ?? input + output, requests: 1 };
}

/** The usage a record carries and the model it names (NO_MODEL: none), or undefined. */
export function usageOfRecord(rec: Obj): { model: string; counts: UsageCounts } | undefined {
  let holder: Obj | undefined;
  if (rec.kind === 'api' && rec.direction === 'response' && isObj(rec.payload)) holder = rec.payload;
  else if (rec.kind === 'message' && isObj(rec.message)) holder = rec.message;
  if (!holder) return undefined;
  const gemini = !isObj(holder.usage) && isObj(holder.usageMetadata);
  const c = normalizeUsage(gemini ? holder.usageMetadata : holder.usage, gemini);
  if (!c) return undefined;
  return { model: modelName(holder.model) ?? (rec.kind === 'api' ? modelName(holder.modelVersion) : undefined) ?? NO_MODEL, counts: c };
}

/** The totals after a committed record (a checkpoint carries the totals of what it replaced). */
export function reduceUsage(u: UsageTotals, rec: Obj): UsageTotals {
  if (rec.kind === 'checkpoint') return asUsage(rec.usage);
  if (rec.kind !== 'api' && rec.kind !== 'message') return u;
  const found = usageOfRecord(rec);
  if (!found) return u;
  const total = add(u.total, found.counts);
  const model = add(u.byModel[found.model] ?? ZERO, found.counts);
  if (!total || !model || !Number.isSafeInteger(u.records + 1)) return u; // a sum past 2^53 would not be exact
  return { records: u.records + 1, total, byModel: { ...u.byModel, [found.model]: model } };
}

function add(a: UsageCounts, b: UsageCounts): UsageCounts | undefined {
  const out = { ...ZERO };
  for (const k of COUNT_KEYS) {
    out[k] = a[k] + b[k];
    if (!Number.isSafeInteger(out[k])) return undefined;
  }
  return out;
}

/** Totals as stored (checkpoint, index entry, session row); lenient: anything else is no usage. */
export function asUsage(v: unknown): UsageTotals {
  if (!isObj(v)) return NO_USAGE;
  const records = int(v, 'records');
  const total = asCounts(v.total);
  if (records === undefined || !total || !isObj(v.byModel)) return NO_USAGE;
  const byModel: Record<string, UsageCounts> = {};
  for (const [m, c] of Object.entries(v.byModel)) {
    const counted = asCounts(c);
    if (counted) byModel[m] = counted;
  }
  return { records, total, byModel };
}

function asCounts(v: unknown): UsageCounts | undefined {
  if (!isObj(v)) return undefined;
  const out = { ...ZERO };
  for (const k of COUNT_KEYS) out[k] = int(v, k) ?? 0;
  return out;
}

/** The totals as session/usage answers them: models named (NO_MODEL as `defaultModel`), `reasoning` only when reported. */
export function shownUsage(u: UsageTotals, defaultModel: string | undefined): {
  records: number; total: ShownCounts; byModel: Record<string, ShownCounts>;
} {
  const merged: Record<string, UsageCounts> = {};
  const fallback = modelName(defaultModel) ?? 'unknown';
  for (const [m, c] of Object.entries(u.byModel)) {
    const name = m === NO_MODEL ? fallback : m;
    merged[name] = merged[name] ? (add(merged[name] as UsageCounts, c) ?? (merged[name] as UsageCounts)) : c;
  }
  const byModel: Record<string, ShownCounts> = {};
  for (const m of Object.keys(merged).sort()) byModel[m] = shown(merged[m] as UsageCounts);
  return { records: u.records, total: shown(u.total), byModel };
}

export type ShownCounts = Omit<UsageCounts, 'reasoning'> & { reasoning?: number };

function shown(c: UsageCounts): ShownCounts {
  const { input, output, cacheRead, cacheWrite, reasoning, total, requests } = c;
  return { input, output, cacheRead, cacheWrite, ...(reasoning > 0 ? { reasoning } : {}), total, requests };
}
