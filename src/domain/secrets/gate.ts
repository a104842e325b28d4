import { StoreError } from '../errors.js';
import type { SecretHit, SecretSet } from './knownSecrets.js';
import { type Redaction, type RedactionScan, redactValue } from './redact.js';
import { exactText } from '../exactJson.js';

/**
 * What is persisted of one JSON value (a record, a header): refused whole if a known secret
 * is in it anywhere, in any encoding; otherwise with well-known credentials redacted.
 */
export function guardValue(
  value: unknown,
  secrets: SecretSet,
  where: string,
  original?: string,
  scan?: RedactionScan,
): { value: unknown; text: string; redactions: Redaction[] } {
  try {
    return guard(value, secrets, where, original ?? JSON.stringify(value), scan);
  } catch (err) {
    // JSON nested (inside strings) deeper than the walks can follow: refused, never stored unchecked.
    if (err instanceof RangeError) throw new StoreError('InvalidArgument', `${where} holds JSON nested too deeply to be checked for secrets`, { path: where });
    throw err;
  }
}

/** `original`: JSON.stringify(value), made by the caller (precheckRecord made it already for a large record). */
/** The refusal of a value holding a registered secret where `hit` says (a member name on the path sharing a run of the secret is not shown). */
export function secretAt(hit: SecretHit, where: string, secrets: SecretSet): StoreError {
  const within = hit.path.replace(/[A-Za-z0-9_$-]{6,}/g, (name) => (secrets.sharesRun(name) ? '(key)' : name));
  const path = within ? `${where}.${within}`.replace('.[', '[') : where;
  return new StoreError('SecretRejected', `${where} contains a registered secret at ${path} (rule: ${hit.rule}); nothing was written`, {
    path, rule: hit.rule,
  });
}

function guard(value: unknown, secrets: SecretSet, where: string, original: string, scan?: RedactionScan): { value: unknown; text: string; redactions: Redaction[] } {
  const hit = secrets.locate(value, original);
  if (hit) throw secretAt(hit, where, secrets);
  const redacted = redactValue(value, original, scan);
  // The text stored: each ExactNumber's marker (what the searches above saw: its exact digits) written as its token.
  const text = exactText(redacted.value === value ? original : JSON.stringify(redacted.value));
  return { value: redacted.value, text, redactions: redacted.redactions };
}
