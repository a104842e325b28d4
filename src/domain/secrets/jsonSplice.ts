import { visit } from 'jsonc-parser';
import { type CredentialStrength, credentialStrength, isKeptKey } from './credentialKeys.js';
import { indexPath, memberPath } from './paths.js';
import { hasTokenKeyword, redactTokens } from './tokenRules.js';

/**
 * Redaction inside JSON held in a string, by splicing: the credential's bytes in the original
 * text are replaced by the marker and every other byte is kept — indentation, the final newline,
 * number spellings (`12345678901234567890`, `19.90`), escapes (`\u00e9`, `\/`), duplicate
 * members. Nothing is re-serialized. The text is walked token by token with source offsets
 * (jsonc-parser's `visit`, after JSON.parse accepted it as strict JSON); a string token's edits,
 * found on its decoded value, are mapped back onto the source span of its contents (the quotes
 * kept), whole escapes at a time.
 */

/** Replace text[start, end) with `text` (start <= end; edits of one list never overlap). */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Redaction decisions for one decoded string, as edits in its own coordinates (redact.ts). */
export type StringEdits = (value: string, path: string, credential: CredentialStrength | undefined, jsonLevel: number) => Edit[];

/** `text` with `edits` (in order, not overlapping) applied. */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  if (edits.length === 0) return text;
  const parts: string[] = [];
  let last = 0;
  for (const e of edits) {
    parts.push(text.slice(last, e.start), e.text);
    last = e.end;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

const MARKER = /<redacted(?::[A-Za-z0-9_.-]+)?>/g;

/**
 * The edits that turn `before` into `after`, where `after` is `before` with spans replaced by
 * redaction markers (redactTokens' output): the text between markers is found in `before` in
 * order (leftmost, each replaced span non-empty). Any such alignment gives exactly `after`; when
 * none is found (not redactTokens' output), one edit replaces the whole text.
 */
export function markerEdits(before: string, after: string): Edit[] {
  if (before === after) return [];
  const whole = [{ start: 0, end: before.length, text: after }];
  const pieces: string[] = [];
  const markers: string[] = [];
  let last = 0;
  for (const m of after.matchAll(MARKER)) {
    pieces.push(after.slice(last, m.index));
    markers.push(m[0]);
    last = m.index + m[0].length;
  }
  pieces.push(after.slice(last));
  const head = pieces[0] as string;
  const tail = pieces[pieces.length - 1] as string;
  const tailAt = before.length - tail.length;
  if (markers.length === 0 || !before.startsWith(head) || !before.endsWith(tail)) return whole;
  const edits: Edit[] = [];
  let cursor = head.length;
  for (let i = 0; i < markers.length; i++) {
    const piece = pieces[i + 1] as string;
    const next = i === markers.length - 1 ? tailAt : before.indexOf(piece, cursor + 1);
    if (next < cursor + 1 || next > tailAt) return whole;
    edits.push({ start: cursor, end: next, text: markers[i] as string });
    cursor = next + piece.length;
  }
  return cursor === before.length ? edits : whole;
}

/** As JSON string contents: the replacement text written into a string token. */
const jsonContent = (s: string): string => JSON.stringify(s).slice(1, -1);

/**
 * Where each decoded UTF-16 unit of a JSON string's contents starts in the source contents
 * `raw` (an escape is one unit: `\n` two source characters, `\uXXXX` six); `map[units]` is
 * `raw.length`. Undefined when the count disagrees with `units` (not a JSON string's contents).
 */
function unitStarts(raw: string, units: number): Int32Array | undefined {
  const map = new Int32Array(units + 1);
  let u = 0;
  for (let i = 0; i < raw.length; u++) {
    if (u >= units) return undefined;
    map[u] = i;
    i += raw.charCodeAt(i) !== 92 ? 1 : raw.charCodeAt(i + 1) === 117 ? 6 : 2;
  }
  if (u !== units) return undefined;
  map[units] = raw.length;
  return map;
}

/** Edits on a decoded string mapped onto its token's contents at `at` in the source. */
function mapped(edits: readonly Edit[], raw: string, at: number, value: string): Edit[] {
  const map = unitStarts(raw, value.length);
  if (!map) return [{ start: at, end: at + raw.length, text: jsonContent(applyEdits(value, edits)) }];
  return edits.map((e) => ({ start: at + (map[e.start] as number), end: at + (map[e.end] as number), text: jsonContent(e.text) }));
}

interface Frame {
  array: boolean;
  path: string;
  /** Arrays: the credential their strings inherit. Objects: the current member's. */
  credential: CredentialStrength | undefined;
  /** Under a kept member (ids, signatures): nothing below is looked into. */
  kept: boolean;
  index: number;
  memberPath: string;
  memberKept: boolean;
}

/**
 * The redactions of the JSON text `text` (already accepted by JSON.parse), as edits of `text`:
 * member names through the token rules, string values through `strings` under the credential
 * strength their member name (or an enclosing array's) gives, kept members skipped. Paths as
 * the value walk reports them (`base.member[2]`).
 */
export function jsonEdits(text: string, base: string, jsonLevel: number, strings: StringEdits, onKeyHit: (path: string, rule: string) => void): Edit[] {
  const edits: Edit[] = [];
  const stack: Frame[] = [];
  /** The path, credential and kept flag of the value starting now. */
  const next = (): { path: string; credential: CredentialStrength | undefined; kept: boolean } => {
    const top = stack[stack.length - 1];
    if (!top) return { path: base, credential: undefined, kept: false };
    if (top.array) return { path: indexPath(top.path, top.index++), credential: top.credential, kept: top.kept };
    return { path: top.memberPath, credential: top.credential, kept: top.memberKept };
  };
  const open = (array: boolean) => {
    const v = next();
    // A credential name covers strings directly or in arrays, never the members of an object below it.
    stack.push({ array, path: v.path, credential: array ? v.credential : undefined, kept: v.kept, index: 0, memberPath: v.path, memberKept: v.kept });
  };
  visit(text, {
    onObjectBegin: () => open(false),
    onArrayBegin: () => open(true),
    onObjectEnd: () => void stack.pop(),
    onArrayEnd: () => void stack.pop(),
    onObjectProperty: (key: string, offset: number, length: number) => {
      const top = stack[stack.length - 1] as Frame;
      if (top.kept) {
        top.memberKept = true;
        return;
      }
      const hits: string[] = [];
      const newKey = hasTokenKeyword(key) ? redactTokens(key, (rule) => hits.push(rule)) : key;
      const p = memberPath(top.path, newKey); // paths name keys as stored: never a credential
      for (const rule of hits) onKeyHit(p, rule);
      if (newKey !== key) edits.push(...mapped(markerEdits(key, newKey), text.slice(offset + 1, offset + length - 1), offset + 1, key));
      top.memberPath = p;
      top.memberKept = isKeptKey(key);
      top.credential = top.memberKept ? undefined : credentialStrength(key);
    },
    onLiteralValue: (value: unknown, offset: number, length: number) => {
      const v = next();
      if (v.kept || typeof value !== 'string') return;
      const e = strings(value, v.path, v.credential, jsonLevel);
      if (e.length > 0) edits.push(...mapped(e, text.slice(offset + 1, offset + length - 1), offset + 1, value));
    },
  });
  return edits;
}
