import { type CredentialStrength, credentialStrength, isKeptKey } from './credentialKeys.js';
import { looksLikeSecretValue } from './credentialValues.js';
import { applyEdits, type Edit, jsonEdits, markerEdits, type StringEdits } from './jsonSplice.js';
import { indexPath, memberPath, NESTED_JSON_LEVELS, parseNestedJson } from './paths.js';
import { hasTokenKeyword, redactTokens } from './tokenRules.js';

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
export function redactValue(value: unknown, json: string): { value: unknown; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  if (!hasTokenKeyword(json) && !CREDENTIAL_KEY_HINT.test(json)) return { value, redactions };
  const out = walk(value, '', undefined, 0, redactions);
  return { value: out, redactions };
}

function walk(v: unknown, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[]): unknown {
  if (typeof v === 'string') return redactString(v, path, credential, jsonLevel, out);
  if (Array.isArray(v)) {
    let changed = false;
    const arr = v.map((item, i) => {
      const r = walk(item, indexPath(path, i), credential, jsonLevel, out);
      changed ||= r !== item;
      return r;
    });
    return changed ? arr : v;
  }
  if (v === null || typeof v !== 'object') return v;
  let changed = false;
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(v)) {
    const hits: string[] = [];
    const newKey = hasTokenKeyword(key) ? redactTokens(key, (rule) => hits.push(rule)) : key;
    const p = memberPath(path, newKey); // paths name keys as stored: never a credential
    for (const rule of hits) out.push({ path: p, rule });
    // The member's own name decides for its strings; an enclosing credential name does not
    // reach into this object (schema keywords, `cookie.sameSite`, `secret.secretName`).
    const r = isKeptKey(key) ? item : walk(item, p, credentialStrength(key), jsonLevel, out);
    changed ||= r !== item || newKey !== key;
    entries.push([newKey, r]);
  }
  // fromEntries defines own members: an assignment of "__proto__" (a member of JSON parsed from a
  // string) would set the prototype instead, and the member would vanish from the stored text.
  return changed ? Object.fromEntries(entries) : v;
}

function redactString(s: string, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[]): string {
  return applyEdits(s, stringEdits(s, path, credential, jsonLevel, out));
}

/**
 * The redactions of one string as edits of it: a credential value whole; JSON held in it
 * spliced (jsonSplice.ts: only the credentials' bytes change, every other byte is kept); else
 * the token rules' markers in place.
 */
function stringEdits(s: string, path: string, credential: CredentialStrength | undefined, jsonLevel: number, out: Redaction[]): Edit[] {
  if (credential !== undefined && looksLikeSecretValue(s, credential)) {
    out.push({ path, rule: 'credential-key' });
    return [{ start: 0, end: s.length, text: REDACTED }];
  }
  if (jsonLevel < NESTED_JSON_LEVELS && parseNestedJson(s) !== undefined) {
    const strings: StringEdits = (value, p, cred, level) => stringEdits(value, p, cred, level, out);
    return jsonEdits(s, `${path}<json>`, jsonLevel + 1, strings, (p, rule) => out.push({ path: p, rule }));
  }
  if (!hasTokenKeyword(s)) return []; // no rule can match: the rules' own set-up costs more than this test
  return markerEdits(s, redactTokens(s, (rule) => out.push({ path, rule })));
}
