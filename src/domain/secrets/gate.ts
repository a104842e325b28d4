import { StoreError } from '../errors.js';
import type { SecretSet } from './knownSecrets.js';
import { type Redaction, redactValue } from './redact.js';

/**
 * What is persisted of one JSON value (a record, a header): refused whole if a known secret
 * is in it anywhere, in any encoding; otherwise with well-known credentials redacted.
 */
export function guardValue(
  value: unknown,
  secrets: SecretSet,
  where: string,
): { value: unknown; text: string; redactions: Redaction[] } {
  try {
    return guard(value, secrets, where);
  } catch (err) {
    // JSON nested (inside strings) deeper than the walks can follow: refused, never stored unchecked.
    if (err instanceof RangeError) throw new StoreError('InvalidArgument', `${where} holds JSON nested too deeply to be checked for secrets`, { path: where });
    throw err;
  }
}

function guard(value: unknown, secrets: SecretSet, where: string): { value: unknown; text: string; redactions: Redaction[] } {
  const original = JSON.stringify(value);
  const hit = secrets.locate(value, original);
  if (hit) {
    // A member name on the path that shares a run of the secret is not shown.
    const within = hit.path.replace(/[A-Za-z0-9_$-]{6,}/g, (name) => (secrets.sharesRun(name) ? '(key)' : name));
    const path = within ? `${where}.${within}`.replace('.[', '[') : where;
    throw new StoreError('SecretRejected', `${where} contains a registered secret at ${path} (rule: ${hit.rule}); nothing was written`, {
      path, rule: hit.rule,
    });
  }
  const redacted = redactValue(value, original);
  const text = redacted.value === value ? original : JSON.stringify(redacted.value);
  return { value: redacted.value, text, redactions: redacted.redactions };
}
