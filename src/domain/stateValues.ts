import { MAX_STATE_VALUE_BYTES } from '../../protocol/methods/state.js';
import { StoreError } from './errors.js';
import { guardValue } from './secrets/gate.js';
import type { SecretSet } from './secrets/knownSecrets.js';
import type { Redaction } from './secrets/redact.js';

/** State values (protocol/README.md 15.3): the key and value rules, wherever a backend keeps them. */
const KEY_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Keys become file names: validated like session ids. */
export function checkStateKey(key: string): string {
  if (!KEY_PATTERN.test(key) || key.includes('..') || key.startsWith('.')) {
    throw new StoreError('InvalidArgument', 'invalid state key: expected 1-128 characters of [A-Za-z0-9._-], no "..", not starting with "."', { path: 'key' });
  }
  return key;
}

/** A key becomes a file name, which no redaction reaches: a key that is or holds a secret is refused. */
function refuseSecretKey(key: string, secrets: SecretSet): void {
  const { redactions } = guardValue(key, secrets, 'key'); // throws SecretRejected for a registered secret
  if (redactions.length > 0) {
    throw new StoreError('SecretRejected', `the state key looks like a credential (rule: ${redactions[0]?.rule}); nothing was written`, {
      path: 'key', rule: redactions[0]?.rule,
    });
  }
}

/** The bytes a stored value file adds around the value: `{"value":` and `}\n`. */
export const STATE_WRAPPER_BYTES = Buffer.byteLength('{"value":}\n');

/** Checks a key and prepares `{"value": ...}` through the secret gate and the size cap. */
export function prepareStateValue(key: string, value: unknown, secrets: SecretSet): { text: string; redactions: Redaction[] } {
  checkStateKey(key);
  refuseSecretKey(key, secrets);
  if (value === undefined) throw new StoreError('InvalidArgument', 'value is required (use state/delete to remove a key)', { path: 'value' });
  const guarded = guardValue(value, secrets, 'value');
  // The limit is on the value as the client's JSON serializes it, not on the stored wrapper.
  if (Buffer.byteLength(guarded.text) > MAX_STATE_VALUE_BYTES) {
    throw new StoreError('PayloadTooLarge', `a state value is limited to ${MAX_STATE_VALUE_BYTES} bytes serialized`, { maxBytes: MAX_STATE_VALUE_BYTES });
  }
  return { text: `{"value":${guarded.text}}\n`, redactions: guarded.redactions };
}
