import { StoreError } from './errors.js';
import { ENVELOPE_KEYS } from './journal/format.js';
import { guardValue } from './secrets/gate.js';
import type { SecretSet } from './secrets/knownSecrets.js';
import type { Redaction } from './secrets/redact.js';
import type { RecordInput } from './types.js';

/**
 * A record as it will stand in its journal line: refused if it holds a registered secret,
 * well-known credentials redacted, refused if larger than `maxBytes`. Nothing is written
 * for a batch until every record of it passed.
 */
export function prepareRecord(
  record: RecordInput,
  index: number,
  secrets: SecretSet,
  maxBytes: number,
): { value: unknown; text: string; redactions: Redaction[] } {
  for (const key of ENVELOPE_KEYS) {
    if (Object.hasOwn(record, key)) throw new TypeError(`record ${index} uses the reserved member name ${key}`);
  }
  const guarded = guardValue(record, secrets, `records[${index}]`);
  if (guarded.text.length > maxBytes || Buffer.byteLength(guarded.text) > maxBytes) {
    throw new StoreError('PayloadTooLarge', `record ${index} is larger than ${maxBytes} bytes`, { index, maxBytes });
  }
  return guarded;
}
