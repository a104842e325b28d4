import { StoreError } from './errors.js';

/** "role: text" of a message record, whitespace folded, cut at `max` characters. */
export const SUMMARY_CHARS = 120;

export function summarizeRecord(record: Record<string, unknown>, max = SUMMARY_CHARS): string | undefined {
  if (record.kind !== 'message') return undefined;
  const message = record.message as { role?: unknown; content?: unknown } | undefined;
  if (!message || typeof message.role !== 'string') return undefined;
  const text = textOf(message.content).trimStart().slice(0, max * 4).replace(/\s+/g, ' ').trim();
  if (text === '') return undefined;
  return cut(`${message.role}: ${text}`, max);
}

/** The text of a message's content: a string, or the string parts and `text` members of its parts, joined by `sep`. */
export function textOf(content: unknown, sep = ' '): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      texts.push((part as { text: string }).text);
    }
  }
  return texts.join(sep);
}

function cut(s: string, max: number): string {
  if (s.length <= max) return s; // UTF-16 length bounds the code point count
  // No surrogate in the first 2*max units: each of them is one code point, and there are more
  // than max of them — cut by units (the common case, without splitting into code points).
  if (!/[\uD800-\uDFFF]/.test(s.slice(0, max * 2))) return `${s.slice(0, max - 1)}…`;
  const chars = Array.from(s.slice(0, max * 2)); // by code point: never split a surrogate pair
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * The summaries a batch contributes to its session's first/last message: its last message's,
 * and its first message's too when the session has none yet — in order. Records in between are
 * never summarized (a batch of many records costs one or two summaries).
 */
export function batchSummaries(records: Array<Record<string, unknown>>, needFirst: boolean): string[] {
  let last: string | undefined;
  let lastAt = records.length;
  while (last === undefined && lastAt > 0) last = summarizeRecord(records[--lastAt] as Record<string, unknown>);
  if (last === undefined) return [];
  if (!needFirst) return [last];
  for (let i = 0; i < lastAt; i++) {
    const first = summarizeRecord(records[i] as Record<string, unknown>);
    if (first !== undefined) return [first, last];
  }
  return [last];
}

/** A checkpoint summary: control characters other than newline and tab removed; empty is refused. */
export function sanitizeSummary(summary: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = summary.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
  if (clean.trim() === '') throw new StoreError('InvalidArgument', 'the summary is empty', { path: 'summary' });
  return clean;
}
