/**
 * The serde's output as it travels in a record: `[type, bytes]` from `serde.dumpsTyped`, kept
 * byte for byte. Bytes that are well-formed UTF-8 travel as text (so the sidecar's secret checks
 * see them like any other string: a registered secret is refused, a well-known credential is
 * redacted — the only change the store may make); other bytes travel as base64.
 */
export type Serialized = { type: string; text: string } | { type: string; base64: string };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function encodeSerialized(type: string, data: Uint8Array | string): Serialized {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  try {
    // fatal + ignoreBOM: the text re-encodes to exactly these bytes (a leading BOM is kept).
    return { type, text: strictUtf8.decode(bytes) };
  } catch {
    return { type, base64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
  }
}

export function decodeSerialized(s: Serialized): [string, Uint8Array] {
  const bytes = 'text' in s ? Buffer.from(s.text, 'utf8') : Buffer.from(s.base64, 'base64');
  return [s.type, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)];
}

export function isSerialized(v: unknown): v is Serialized {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.type === 'string' && (typeof o.text === 'string' || typeof o.base64 === 'string');
}
