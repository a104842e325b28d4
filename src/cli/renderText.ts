import { humanBytes, oneLine, safeText } from './output.js';

/** The readable text of record values for the transcripts (show, tail, export): content parts, blob references, tool arguments. */

const ARGS_CHARS = 160;
const PAYLOAD_CHARS = 200;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Short JSON text of any value (strings as they are). */
export function shortJson(value: unknown, max: number): string {
  if (typeof value === 'string') return oneLine(safeText(value), max);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return oneLine(safeText(text), max);
}

/** A reference to a string stored as a blob: {"$blob": "sha256:<hex>", "bytes": N}. */
export function blobLabel(v: unknown): string | undefined {
  if (!isObj(v) || typeof v.$blob !== 'string') return undefined;
  const size = typeof v.bytes === 'number' ? `${humanBytes(v.bytes)}, ` : '';
  return `[blob: ${size}${v.$blob.slice(0, 15)}…]`;
}

/** The readable text of a message's content: a string, or the text of its parts (others named). */
export function contentText(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  const blob = blobLabel(content);
  if (blob) return blob;
  if (Array.isArray(content)) {
    return content.map((part) => {
      if (typeof part === 'string') return part;
      if (blobLabel(part)) return blobLabel(part) as string;
      if (isObj(part)) {
        if (blobLabel(part.text)) return blobLabel(part.text) as string;
        if (typeof part.text === 'string') return part.text;
        if (typeof part.type === 'string') return `[${part.type}]`;
      }
      return `[${shortJson(part, 60)}]`;
    }).join('\n');
  }
  if (isObj(content) && typeof content.text === 'string') return content.text;
  return shortJson(content, PAYLOAD_CHARS);
}

/** Tool call arguments (JSON text from the provider) on one line: parsed and re-printed when possible. */
export function argsText(args: unknown, max = ARGS_CHARS): string {
  if (typeof args === 'string') {
    try {
      return shortJson(JSON.parse(args), max);
    } catch {
      return oneLine(safeText(args), max);
    }
  }
  return shortJson(args, max);
}
