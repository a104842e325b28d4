import { type CredentialStrength, credentialStrength, isKeptKey } from './credentialKeys.js';
import { looksLikeSecretValue } from './credentialValues.js';
import { applyEdits, type Edit, jsonEdits, markerEdits, type StringEdits } from './jsonSplice.js';
import { indexPath, memberPath, NESTED_JSON_LEVELS, parseNestedJson } from './paths.js';
import { redactTokens, tokenKeywords } from './tokenRules.js';
import { ExactNumber } from '../exactJson.js';

export const REDACTED = '<redacted>';

export interface Redaction {
  path: string;
  rule: string;
}

/** Key names that may hold credentials, as they appear in JSON text: a cheap test before walking. */
const CREDENTIAL_KEY_HINT = /(?:api[-_. ]?key|token|auth|passw|pass"|pwd|phrase|secret|private[-_. ]?key|cookie|cred|access[-_. ]?key|signing|encryption|master|connection)[^"]{0,64}"\s*:/i;

/**
 * Redacts well-known credentials in a JSON value: string values under credential-like member
 * names become "<redacted>" (credentialKeys.ts, credentialValues.ts), well-known token formats
 * anywhere become "<redacted:rule>", also inside JSON text held in strings (up to three levels),
 * spliced there: only the credential's bytes change (jsonSplice.ts).
 * A credential name covers the strings it holds directly or in arrays, never an object below
 * it: `{"password": {"type": "string"}}` (a JSON schema) and `{"auth": {"type": "oauth2"}}` are
 * kept. Ids, signatures and usage counters are kept byte-exact. Deterministic and idempotent;
 * returns the same object when nothing changed. `json` is the value's JSON text, used to skip
 * the walk when nothing can match.
 */
export function redactValue(value: unknown, json: string, pre?: RedactionScan): { value: unknown; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  // The one keyword pass over the document: a string can only hold keywords its JSON text holds.
  const { keywords, named } = pre ?? scanForRedaction(json);
  if (keywords.size === 0 && !named) return { value, redactions };
  const out = walk(value, '', undefined, 0, redactions, keywords);
  return { value: out, redactions };
}

/** What redactValue learns from a document's JSON text before walking it: its token keywords, and whether it names a credential member. */
export interface RedactionScan {
  keywords: ReadonlySet<string>;
  named: boolean;
}

/** The two passes over a document's text redactValue starts with (a large record's are run apart, between yields: serialize.ts). */
export function scanForRedaction(json: string): RedactionScan {
  return { keywords: tokenKeywords(json), named: namesCredential(json) };
}

/** Whether a JSON text has a member whose name may hold a credential (a cheap test before walking). */
export function namesCredential(json: string): boolean {
  return CREDENTIAL_KEY_HINT.test(json);
}

/**
 * The keywords of `text` among `of` (the keywords of the JSON text `text` stands in): a
 * keyword holds no character JSON.stringify escapes, so a string holds only keywords its
 * document's text holds, found natively here instead of by another pass of the scanner.
 * toLowerCase folds a few non-ASCII letters to ASCII ones (`K` → `k`): a superset, never
 * fewer. `of` undefined: not known (JSON text whose escapes may spell a keyword), scanned.
 */
function keywordsIn(text: string, of: ReadonlySet<string> | undefined): ReadonlySet<string> {
  if (of === undefined) return tokenKeywords(text);
  if (of.size === 0) return of;
  const lower = text.toLowerCase();
  const found = new Set<string>();
  for (const k of of) if (lower.includes(k)) found.add(k);
  return found;
}

function walk(v: unknown, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[], kw: ReadonlySet<string> | undefined): unknown {
  if (typeof v === 'string') return redactString(v, path, credential, jsonLevel, out, kw);
  if (Array.isArray(v)) {
    let changed = false;
    const arr = v.map((item, i) => {
      const r = walk(item, indexPath(path, i), credential, jsonLevel, out, kw);
      changed ||= r !== item;
      return r;
    });
    return changed ? arr : v;
  }
  if (v === null || typeof v !== 'object' || v instanceof ExactNumber) return v;
  let changed = false;
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(v)) {
    const hits: string[] = [];
    const keyKeywords = keywordsIn(key, kw);
    const newKey = keyKeywords.size > 0 ? redactTokens(key, (rule) => hits.push(rule), keyKeywords) : key;
    const p = memberPath(path, newKey); // paths name keys as stored: never a credential
    for (const rule of hits) out.push({ path: p, rule });
    // The member's own name decides for its strings; an enclosing credential name does not
    // reach into this object (schema keywords, `cookie.sameSite`, `secret.secretName`).
    const r = isKeptKey(key) ? item : walk(item, p, credentialStrength(key), jsonLevel, out, kw);
    changed ||= r !== item || newKey !== key;
    entries.push([newKey, r]);
  }
  // fromEntries defines own members: an assignment of "__proto__" (a member of JSON parsed from a
  // string) would set the prototype instead, and the member would vanish from the stored text.
  return changed ? Object.fromEntries(entries) : v;
}

function redactString(s: string, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[], kw: ReadonlySet<string> | undefined): string {
  return applyEdits(s, stringEdits(s, path, credential, jsonLevel, out, kw));
}

/** A string whose text could be JSON (its first non-blank character opens a value parseNestedJson takes). */
const MAY_BE_JSON = /^\s*["[{]/;

/**
 * The redactions of one string as edits of it: a credential value whole; JSON held in it
 * spliced (jsonSplice.ts: only the credentials' bytes change, every other byte is kept); else
 * the token rules' markers in place. `kw`: the keywords the enclosing text holds (keywordsIn).
 */
function stringEdits(s: string, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[], kw: ReadonlySet<string> | undefined): Edit[] {
  if (credential !== undefined && looksLikeSecretValue(s, credential)) {
    out.push({ path, rule: 'credential-key' });
    return [{ start: 0, end: s.length, text: REDACTED }];
  }
  const found = keywordsIn(s, kw);
  // JSON held in the string can only need an edit where it holds a keyword, a credential name,
  // or `\u` escapes that could spell either (then its strings are scanned: their keywords are unknown).
  const escaped = s.includes('\\u');
  if (jsonLevel < NESTED_JSON_LEVELS && MAY_BE_JSON.test(s) && (found.size > 0 || escaped || CREDENTIAL_KEY_HINT.test(s)) && parseNestedJson(s) !== undefined) {
    const inner = escaped ? undefined : found;
    const strings: StringEdits = (value, p, cred, level) => stringEdits(value, p, cred, level, out, inner);
    return jsonEdits(s, `${path}<json>`, jsonLevel + 1, strings, (p, rule) => out.push({ path: p, rule }));
  }
  if (found.size === 0) return []; // no rule can match: the rules' own set-up costs more than this test
  return markerEdits(s, redactTokens(s, (rule) => out.push({ path, rule }), found));
}
