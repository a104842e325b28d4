import { StoreError } from './errors.js';
import { ENVELOPE_KEYS } from './journal/format.js';
import type { RecordInput } from './types.js';

/**
 * A record's JSON text as it will stand in its journal line. The envelope names belong to
 * the store; a record over `maxBytes` is refused before anything is written.
 */
export function serializeRecord(record: RecordInput, index: number, maxBytes: number): string {
  for (const key of ENVELOPE_KEYS) {
    if (Object.hasOwn(record, key)) throw new TypeError(`record ${index} uses the reserved member name ${key}`);
  }
  const text = JSON.stringify(record);
  if (text.length > maxBytes || Buffer.byteLength(text) > maxBytes) {
    throw new StoreError('PayloadTooLarge', `record ${index} is larger than ${maxBytes} bytes`, { index, maxBytes });
  }
  return text;
}
