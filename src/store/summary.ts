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

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      texts.push((part as { text: string }).text);
    }
  }
  return texts.join(' ');
}

function cut(s: string, max: number): string {
  if (s.length <= max) return s; // UTF-16 length bounds the code point count
  const chars = Array.from(s.slice(0, max * 2)); // by code point: never split a surrogate pair
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}
