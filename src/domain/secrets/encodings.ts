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
  | 'raw' | 'json-escape' | 'percent' | 'base64' | 'base64url' | 'hex' | 'utf16' | 'html-entity' | 'number'
  | 'base32' | 'byte-array' | 'normalized';

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
  /** Searched in every text view as is: the secret. */
  raw: Form[];
  /** Searched in text views holding a NUL: its UTF-16LE / UTF-16BE bytes read as Latin-1. */
  nul: Form[];
  /** Searched in the base64 fold (scan.ts): base64 and base64url of the UTF-8, UTF-16LE and UTF-16BE bytes at the three alignments. */
  base64: Form[];
  /**
   * Searched in the alnum fold (lower case, separators skipped): hex of the UTF-8, UTF-16LE and
   * UTF-16BE bytes; a hex secret's digits; a numeric secret's digits; a base32 secret's letters.
   */
  alnum: Form[];
  /** Searched in the byte-array fold: the UTF-8 bytes, one character per byte. */
  bytes: Form[];
  /** Searched in the normalized view (normalizedView in views.ts), when it differs from the text. */
  normalized: Form | undefined;
  /** Searched in raw buffers: the UTF-16LE and UTF-16BE bytes (not valid UTF-8 once the secret is non-ASCII). */
  buffers: Array<{ bytes: Buffer; rule: EncodingRule }>;
  /** The secret's digits when it is numeric: its exponent forms are written out by the number view. */
  numeric: string | undefined;
  /**
   * The longest text a form of the secret takes, padding (whitespace, zeros) aside: `0xHH, ` per
   * UTF-8 byte, `\xHH` per UTF-16 byte, `&#x10FFFF;` per code point, `%25HH` per byte.
   */
  longest: number;
}

/** The fewest characters a folded form may have: shorter ones would match too much. */
export const MIN_FORM_CHARS = 8;

/** Separators of grouped digits: blanks, `-` `.` `,` `_` `'` `/`, NBSP and thin spaces. */
const DIGIT_SEPARATORS = /[\s\-.,_'\/\u00a0\u2009\u202f]/g;
/** Separators of grouped hex and base32: blanks and `:` `-` `,` `_`; base32 padding `=`. */
const GROUP_SEPARATORS = /[\s:\-,_=]/g;

/**
 * What the secret's alphabet makes lossless forms of it: hex (one case of letters) in either
 * case with separators; digits (with separators, 8 or more) with any separators; base32 (RFC 4648,
 * one case, a letter and a digit 2-7, 16 or more) in either case, grouped and padded.
 */
export function alphabetForms(secret: string): Form[] {
  const out: Form[] = [];
  const digits = secret.replace(DIGIT_SEPARATORS, '');
  if (/^[0-9]+$/.test(digits) && digits.length >= MIN_FORM_CHARS) out.push({ text: digits, rule: 'number' });
  const grouped = secret.replace(GROUP_SEPARATORS, '');
  const oneCase = grouped === grouped.toLowerCase() || grouped === grouped.toUpperCase();
  if (oneCase && /^[0-9a-fA-F]+$/.test(grouped) && /[a-fA-F]/.test(grouped) && grouped.length >= MIN_FORM_CHARS) {
    out.push({ text: grouped.toLowerCase(), rule: 'hex' });
  } else if (oneCase && /^[A-Za-z2-7]+$/.test(grouped) && /[A-Za-z]/.test(grouped) && /[2-7]/.test(grouped) && grouped.length >= 16) {
    out.push({ text: grouped.toLowerCase(), rule: 'base32' });
  }
  return out;
}

export function formsOf(secret: string): SecretForms {
  const utf8 = Buffer.from(secret, 'utf8');
  const utf16le = Buffer.from(secret, 'utf16le');
  const utf16be = Buffer.from(utf16le).swap16();
  const base64: Form[] = [];
  const alnum: Form[] = alphabetForms(secret);
  for (const bytes of [utf8, utf16le, utf16be]) {
    for (let shift = 0; shift < 3; shift++) {
      // Cut to its letters and digits at both ends: the alnum fold filters base64 (scan.ts).
      const b64 = alignedBase64(bytes, shift).replace(/^[+/]+|[+/]+$/g, '');
      base64.push({ text: b64, rule: 'base64' }, { text: b64.replace(/\+/g, '-').replace(/\//g, '_'), rule: 'base64url' });
    }
    alnum.push({ text: bytes.toString('hex'), rule: 'hex' });
  }
  const bytes: Form[] = [{ text: utf8.toString('latin1'), rule: 'byte-array' }];
  // A hex secret stands for bytes: those bytes as an array (xxd -i, Buffer JSON) are a form of it.
  const hexForm = alnum.find((f) => f.rule === 'hex' && f.text !== utf8.toString('hex'));
  if (hexForm && hexForm.text.length % 2 === 0) bytes.push({ text: Buffer.from(hexForm.text, 'hex').toString('latin1'), rule: 'byte-array' });
  const normal = normalizedForm(secret);
  const numeric = alnum.find((f) => f.rule === 'number' && f.text === secret)?.text;
  return {
    raw: [{ text: secret, rule: 'raw' }],
    nul: uniqueForms([{ text: utf16le.toString('latin1'), rule: 'utf16' }, { text: utf16be.toString('latin1'), rule: 'utf16' }]),
    base64: uniqueForms(base64),
    alnum: uniqueForms(alnum),
    bytes,
    normalized: normal.length >= MIN_FORM_CHARS || normal === secret ? { text: normal, rule: 'normalized' } : undefined,
    buffers: [{ bytes: utf16le, rule: 'utf16' }, { bytes: utf16be, rule: 'utf16' }],
    numeric,
    // The widest form: each UTF-8 byte as `0xHH, ` (6 characters; up to 3 bytes per UTF-16 unit),
    // `\xHH` or doubly percent-encoded (`%25HH`); base64, entities and arrays are narrower.
    longest: Math.max(6 * utf8.length, 8 * secret.length, 10 * [...secret].length),
  };
}

/**
 * The forms of a binary secret (the store's key): every run of `run` of its bytes — base64 and
 * base64url at the three alignments, hex (any case, separators), the bytes as an array, the raw
 * bytes — so a prefix, a piece or the whole of it is found in any of those encodings.
 */
export function binaryForms(bytes: Buffer, run: number): SecretForms {
  const base64: Form[] = [];
  const alnum: Form[] = [];
  const arrays: Form[] = [];
  const buffers: Array<{ bytes: Buffer; rule: EncodingRule }> = [];
  const n = Math.min(run, bytes.length);
  for (let o = 0; o + n <= bytes.length; o++) {
    const piece = bytes.subarray(o, o + n);
    for (let shift = 0; shift < 3; shift++) {
      const b64 = alignedBase64(piece, shift).replace(/^[+/]+|[+/]+$/g, '');
      base64.push({ text: b64, rule: 'base64' }, { text: b64.replace(/\+/g, '-').replace(/\//g, '_'), rule: 'base64url' });
    }
    alnum.push({ text: piece.toString('hex'), rule: 'hex' });
    arrays.push({ text: piece.toString('latin1'), rule: 'byte-array' });
    buffers.push({ bytes: Buffer.from(piece), rule: 'raw' });
  }
  return {
    raw: [], nul: [], base64: uniqueForms(base64), alnum: uniqueForms(alnum), bytes: uniqueForms(arrays),
    normalized: undefined, buffers, numeric: undefined, longest: 6 * n,
  };
}

/** Separators folded to one blank by the normalized view: whitespace (any), `_` and `+` (form encoding). */
export const NORMAL_SEPARATORS = /[\s_+]+/g;
/** Characters that render as nothing (zero-width spaces and joiners, soft hyphens, BOM, variation selectors, ...). */
export const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The text as the normalized view writes it: default-ignorable characters removed, NFKC
 * (compatibility forms: full-width, ligatures, NBSP; the NFD of an NFC text), runs of separators
 * folded to one blank.
 */
export function normalizedForm(text: string): string {
  return text.replace(IGNORABLE, '').normalize('NFKC').replace(IGNORABLE, '').replace(NORMAL_SEPARATORS, ' ');
}

function uniqueForms(forms: Form[]): Form[] {
  const seen = new Set<string>();
  return forms.filter((f) => f.text.length > 0 && !seen.has(f.text) && seen.add(f.text));
}
