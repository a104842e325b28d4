import { randomUUID } from 'node:crypto';
import { parse as losslessParse } from 'lossless-json';

/**
 * Numbers exactly as sent (protocol §5.1). A JSON number token whose JS number's shortest text
 * differs from the token (`12345678901234567`, `19.90`, `1E5`, `-0`, `1e400`) is held as an
 * ExactNumber carrying the token's text; every other number stays a plain JS number, so the
 * objects a handler sees are JSON.parse's except at those tokens.
 *
 * Invariants:
 * - `parseExact(t)` is `JSON.parse(t)` whenever no number token of `t` fails to round-trip
 *   (the fast path, decided by `mayHoldInexact`, which never misses one: a false alarm only
 *   costs the lossless parse, whose result is then JSON.parse's).
 * - `exactText(JSON.stringify(v))` is the JSON text of `v` with each ExactNumber written as its
 *   token, byte for byte. JSON.stringify writes an ExactNumber (its toJSON) as a string holding
 *   MARK and the token; MARK holds a random per-process nonce, never written out nor stored, so
 *   no string a client sends can be mistaken for one. A JSON.stringify whose output is not
 *   passed through exactText would show `"\u0000<nonce>:<digits>"`: the digits are never
 *   silently rounded.
 * - The secret gate and redaction search that JSON.stringify text: they see a number's exact
 *   digits (inside the marker string), the digits that are stored.
 */
export class ExactNumber {
  constructor(readonly text: string) {}

  toJSON(): string {
    return MARK + this.text;
  }

  /** The nearest JS number, for code that computes with it (never for storing or answering). */
  valueOf(): number {
    return Number(this.text);
  }
}

const MARK = `\u0000${randomUUID()}:`;
/** MARK as JSON.stringify writes it inside a string (U+0000 escaped as `\u0000`). */
const MARK_JSON = JSON.stringify(MARK).slice(1, -1);
const MARKED = new RegExp(`"${MARK_JSON.replace(/\\/g, '\\\\')}(-?[0-9][0-9.eE+-]*)"`, 'g');

/** The JSON text `json` (JSON.stringify output) with every ExactNumber's marker string replaced by its token. */
export function exactText(json: string): string;
export function exactText(json: string | undefined): string | undefined;
export function exactText(json: string | undefined): string | undefined {
  return json !== undefined && json.includes(MARK_JSON) ? json.replace(MARKED, '$1') : json;
}

/** JSON.stringify with ExactNumbers written as their tokens. */
export function stringifyExact(value: unknown): string {
  return exactText(JSON.stringify(value));
}

/**
 * A screen for the places a number token that does not round-trip must show (each such token
 * holds one): a run of 16 digits and dots (more than 15 significant digits), a digit then an
 * exponent, a fraction ending in 0, `-0`, a fraction starting with six zeros (JS writes numbers
 * below 1e-6 with an exponent). A token of at most 15 significant digits without these is its
 * own shortest text: two such decimals are never the same double.
 */
const SCREEN = /[0-9](?:[0-9.]{15}|[eE]|\.[0-9]*0(?![0-9]))|-0(?![.0-9eE])|\.0{6}/g;
const TOKEN = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const inToken = (c: number): boolean => (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/** Whether the JS number of the token `t` is written back as `t` (a cheap screen first: most tokens are short integers). */
export function roundTrips(t: string): boolean {
  if (t.length < 16 && !/[.eE]/.test(t) && t !== '-0') return true;
  return String(Number(t)) === t;
}

/**
 * Whether `text` may hold a number token that does not round-trip (never false when one does).
 * Each screen hit is widened to the characters a number is made of and taken for a token when
 * it follows `:`, `[` or `,` (and white space), as every value inside a JSON object does; in a
 * string such a lookalike is a false alarm, which only costs the lossless parse.
 */
export function mayHoldInexact(text: string): boolean {
  SCREEN.lastIndex = 0;
  for (let m = SCREEN.exec(text); m !== null; m = SCREEN.exec(text)) {
    let start = m.index;
    while (start > 0 && inToken(text.charCodeAt(start - 1))) start--;
    let end = m.index + m[0].length;
    while (end < text.length && inToken(text.charCodeAt(end))) end++;
    SCREEN.lastIndex = end;
    let before = start - 1;
    while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
    const c = before < 0 ? 44 : text.charCodeAt(before);
    if (c !== 58 && c !== 91 && c !== 44) continue; // not after `:`, `[` or `,`: not a value
    const t = text.slice(start, end);
    if (!TOKEN.test(t) || !roundTrips(t)) return true;
  }
  return false;
}

const parseNumber = (t: string): number | ExactNumber => (roundTrips(t) ? Number(t) : new ExactNumber(t));
// As JSON.parse: the last of duplicate member names wins (lossless-json refuses them by default).
const OPTIONS = { parseNumber, onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue };

/**
 * JSON.parse keeping exact numbers. Throws SyntaxError on text that is not JSON (JSON.parse
 * runs first, so what it refuses is refused with its message).
 */
export function parseExact(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!mayHoldInexact(text)) return value;
  return losslessParse(text, null, OPTIONS);
}
