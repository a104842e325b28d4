/**
 * The forms of one registered secret: the fixed needles the detector (detect.ts) searches for in
 * the views of a text (views.ts), and the literal forms scrub cuts out of a message.
 */

/**
 * How many times needlesOf writes the secret JSON-escaped (scrub's literal forms and the tests'
 * leak scans). The detector itself undoes JSON escapes to any depth.
 */
export const JSON_ESCAPE_DEPTHS = 4;

export type EncodingRule =
  | 'raw' | 'json-escape' | 'percent' | 'base64' | 'base64url' | 'hex' | 'utf16' | 'html-entity' | 'number';

export interface Needle {
  text: string;
  bytes: Buffer;
  rule: EncodingRule;
}

/**
 * Literal forms of one secret, deduplicated: raw, JSON-escaped at depths 1..JSON_ESCAPE_DEPTHS,
 * percent (either hex case), base64 and base64url at the three byte alignments, hex (either case).
 * Not the detector's needle table (see formsOf): what scrub cuts out and what leak scans look for.
 */
export function needlesOf(secret: string): Needle[] {
  const out = new Map<string, EncodingRule>();
  const add = (text: string, rule: EncodingRule) => {
    if (text.length >= 6 && !out.has(text)) out.set(text, rule);
  };
  add(secret, 'raw');
  let escaped = secret;
  for (let depth = 0; depth < JSON_ESCAPE_DEPTHS; depth++) {
    escaped = JSON.stringify(escaped).slice(1, -1); // as it stands inside JSON nested `depth + 1` times
    add(escaped, 'json-escape');
  }
  add(encodeURIComponent(secret), 'percent');
  add(encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), 'percent');
  const bytes = Buffer.from(secret, 'utf8');
  for (let shift = 0; shift < 3; shift++) {
    const b64 = alignedBase64(bytes, shift);
    add(b64, 'base64');
    add(b64.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
  }
  add(bytes.toString('hex'), 'hex');
  add(bytes.toString('hex').toUpperCase(), 'hex');
  return [...out].map(([text, rule]) => ({ text, bytes: Buffer.from(text, 'utf8'), rule }));
}

/**
 * The base64 characters determined by the secret alone when it starts `shift` bytes into a
 * 3-byte group: characters mixing in unknown neighbouring bytes are dropped at both ends.
 */
export function alignedBase64(secret: Buffer, shift: number): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), secret]).toString('base64');
  const first = Math.ceil((8 * shift) / 6);
  const last = Math.floor((8 * (shift + secret.length)) / 6); // exclusive
  return encoded.slice(first, last);
}

export interface Form {
  text: string;
  rule: EncodingRule;
}

/** The detector's needles for one secret, each searched in the view named by its list. */
export interface SecretForms {
  /** Searched in every text view: the secret, and its UTF-16LE / UTF-16BE bytes read as Latin-1 (text with NULs). */
  plain: Form[];
  /** Searched in the base64 view: base64 and base64url of the UTF-8, UTF-16LE and UTF-16BE bytes at the three alignments. */
  base64: Form[];
  /** Searched in the hex view (lower case): hex of the UTF-8, UTF-16LE and UTF-16BE bytes. */
  hex: string[];
  /** Searched in raw buffers: the UTF-16LE and UTF-16BE bytes (not valid UTF-8 once the secret is non-ASCII). */
  bytes: Array<{ bytes: Buffer; rule: EncodingRule }>;
  /** The secret is all digits: its exponent forms are written out by the number view. */
  numeric: boolean;
  /** The secret holds a space: `+` may stand for it in a form-encoded text. */
  hasSpace: boolean;
}

export function formsOf(secret: string): SecretForms {
  const utf8 = Buffer.from(secret, 'utf8');
  const utf16le = Buffer.from(secret, 'utf16le');
  const utf16be = Buffer.from(utf16le).swap16();
  const plain = uniqueForms([
    { text: secret, rule: 'raw' },
    { text: utf16le.toString('latin1'), rule: 'utf16' },
    { text: utf16be.toString('latin1'), rule: 'utf16' },
  ]);
  const base64: Form[] = [];
  const hex: string[] = [];
  for (const bytes of [utf8, utf16le, utf16be]) {
    for (let shift = 0; shift < 3; shift++) {
      const b64 = alignedBase64(bytes, shift);
      base64.push({ text: b64, rule: 'base64' }, { text: b64.replace(/\+/g, '-').replace(/\//g, '_'), rule: 'base64url' });
    }
    hex.push(bytes.toString('hex'));
  }
  return {
    plain,
    base64: uniqueForms(base64),
    hex: [...new Set(hex)],
    bytes: [{ bytes: utf16le, rule: 'utf16' }, { bytes: utf16be, rule: 'utf16' }],
    numeric: /^[0-9]+$/.test(secret),
    hasSpace: secret.includes(' '),
  };
}

function uniqueForms(forms: Form[]): Form[] {
  const seen = new Set<string>();
  return forms.filter((f) => !seen.has(f.text) && seen.add(f.text));
}
