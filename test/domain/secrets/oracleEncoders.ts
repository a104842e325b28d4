/**
 * The test's own encoders of a secret, written by hand (Buffer only for bytes and base64), never
 * the implementation's needle generator: the oracle the detector is checked against. Each
 * returns the encoded text, or bytes for the forms that are only bytes (raw UTF-16).
 */

/** UTF-8, UTF-16LE and UTF-16BE bytes of `s`, by hand for UTF-16. */
export function utf16(s: string, bigEndian: boolean): Buffer {
  const out = Buffer.alloc(s.length * 2);
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    out[2 * i + (bigEndian ? 0 : 1)] = u >> 8;
    out[2 * i + (bigEndian ? 1 : 0)] = u & 0xff;
  }
  return out;
}

const HEX = '0123456789abcdef';
export function hexOf(bytes: Buffer, opts: { upper?: 'lower' | 'upper' | 'mixed'; sep?: string; prefix?: string } = {}): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    let h = HEX[b >> 4]! + HEX[b & 15]!;
    if (opts.upper === 'upper' || (opts.upper === 'mixed' && i % 2 === 0)) h = h.toUpperCase();
    parts.push((opts.prefix ?? '') + h);
  }
  return parts.join(opts.sep ?? '');
}

/** JSON string content of `s`, written by hand: `"` `\` and controls escaped; `ascii` also escapes non-ASCII as \uXXXX; `all` escapes every unit. */
export function jsonContent(s: string, mode: 'plain' | 'ascii' | 'all' | 'upperU' = 'plain'): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const u = s.charCodeAt(i);
    const uEsc = `\\u${u.toString(16).padStart(4, '0')}`;
    if (mode === 'all') out += uEsc;
    else if (mode === 'upperU' && (c === '"' || c === '\\' || u > 0x7e)) out += uEsc.toUpperCase().replace('\\U', '\\u');
    else if (c === '"') out += '\\"';
    else if (c === '\\') out += '\\\\';
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\r') out += '\\r';
    else if (u < 0x20 || (mode === 'ascii' && u > 0x7e)) out += uEsc;
    else out += c;
  }
  return out;
}

/** `s` JSON-escaped `depth` times (as a value stringified `depth` times stands in the innermost string). */
export function jsonNested(s: string, depth: number, mode: 'plain' | 'ascii' | 'all' | 'upperU' = 'plain'): string {
  let t = s;
  for (let d = 0; d < depth; d++) t = jsonContent(t, d === 0 ? mode : 'plain');
  return t;
}

/** Every byte as %XX; `form` writes a space as `+` and leaves unreserved characters bare. */
export function percentOf(s: string, opts: { lower?: boolean; form?: boolean } = {}): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (opts.form && c === ' ') out += '+';
    else if (opts.form && /[A-Za-z0-9*._-]/.test(c)) out += c;
    else {
      const h = `%${HEX[b >> 4]}${HEX[b & 15]}`;
      out += opts.lower ? h : h.toUpperCase();
    }
  }
  return out;
}

/** The UTF-16 code units (code points for `cp`) as HTML numeric references. */
export function htmlOf(s: string, opts: { hex?: boolean; upper?: boolean; zeros?: number; semicolon?: boolean } = {}): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const digits = opts.hex ? cp.toString(16) : String(cp);
    const body = `${'0'.repeat(opts.zeros ?? 0)}${opts.upper ? digits.toUpperCase() : digits}`;
    out += `&#${opts.hex ? (opts.upper ? 'X' : 'x') : ''}${body}${opts.semicolon === false ? ' ' : ';'}`;
  }
  return out;
}

/** `bytes` base64-encoded after `shift` prefix bytes, then wrapped / spaced as tools print it. */
export function base64Of(bytes: Buffer, opts: { shift?: number; url?: boolean; pad?: boolean; wrap?: number; eol?: string; spaceEvery?: number } = {}): string {
  const prefix = Buffer.from([0x40, 0x23, 0x21].slice(0, opts.shift ?? 0));
  let t = Buffer.concat([prefix, bytes, Buffer.from(' ok')]).toString('base64');
  if (opts.pad === false) t = t.replace(/=+$/, '');
  if (opts.url) t = t.replace(/\+/g, '-').replace(/\//g, '_');
  if (opts.wrap) t = t.replace(new RegExp(`.{${opts.wrap}}`, 'g'), `$&${opts.eol ?? '\n'}`);
  if (opts.spaceEvery) t = t.replace(new RegExp(`.{${opts.spaceEvery}}`, 'g'), '$& ');
  return t;
}

/** A numeric secret written as a JSON number in exponent form: mantissa with the point after `intDigits` digits. */
export function exponentOf(digits: string, intDigits: number, upper = false, plus = false): string {
  const e = digits.length - intDigits;
  const mantissa = `${digits.slice(0, intDigits)}${intDigits < digits.length ? `.${digits.slice(intDigits)}` : ''}`;
  return `${mantissa}${upper ? 'E' : 'e'}${plus ? '+' : ''}${e}`;
}

export interface Encoded {
  name: string;
  text?: string;
  bytes?: Buffer;
}

/** Every encoding of `secret` the detector must find, by the test's own encoders. */
export function encodingsOf(secret: string): Encoded[] {
  const utf8 = Buffer.from(secret, 'utf8');
  const le = utf16(secret, false);
  const be = utf16(secret, true);
  const out: Encoded[] = [{ name: 'raw', text: secret }];
  for (const mode of ['plain', 'ascii', 'all', 'upperU'] as const) for (const d of [1, 2, 5]) out.push({ name: `json ${mode} depth ${d}`, text: jsonNested(secret, d, mode) });
  for (const [label, bytes] of [['utf8', utf8], ['utf16le', le], ['utf16be', be]] as const) {
    for (let shift = 0; shift < 3; shift++) {
      for (const url of [false, true]) {
        for (const pad of [true, false]) out.push({ name: `base64 ${label} shift ${shift} url ${url} pad ${pad}`, text: base64Of(bytes, { shift, url, pad }) });
      }
      out.push({ name: `base64 ${label} shift ${shift} wrapped 64 LF`, text: base64Of(bytes, { shift, wrap: 64 }) });
      out.push({ name: `base64 ${label} shift ${shift} wrapped 76 CRLF`, text: base64Of(bytes, { shift, wrap: 76, eol: '\r\n' }) });
      out.push({ name: `base64 ${label} shift ${shift} wrapped 4 LF (every position)`, text: base64Of(bytes, { shift, wrap: 4 }) });
      out.push({ name: `base64 ${label} shift ${shift} spaced`, text: base64Of(bytes, { shift, spaceEvery: 3 }) });
    }
    for (const upper of ['lower', 'upper', 'mixed'] as const) {
      out.push({ name: `hex ${label} ${upper}`, text: hexOf(bytes, { upper }) });
      out.push({ name: `hex ${label} ${upper} colons`, text: hexOf(bytes, { upper, sep: ':' }) });
      out.push({ name: `hex ${label} ${upper} spaces`, text: hexOf(bytes, { upper, sep: ' ' }) });
      out.push({ name: `hex ${label} ${upper} \\x`, text: hexOf(bytes, { upper, prefix: '\\x' }) });
    }
  }
  out.push({ name: 'utf16le as text (NULs)', text: le.toString('latin1') }, { name: 'utf16be as text (NULs)', text: be.toString('latin1') });
  out.push({ name: 'utf16le bytes', bytes: le }, { name: 'utf16be bytes', bytes: be });
  for (const lower of [false, true]) {
    out.push({ name: `percent every byte lower ${lower}`, text: percentOf(secret, { lower }) });
    out.push({ name: `percent form (+ for space) lower ${lower}`, text: percentOf(secret, { lower, form: true }) });
    out.push({ name: `percent double lower ${lower}`, text: percentOf(percentOf(secret, { lower }), { lower: !lower }) });
    out.push({ name: `percent double form lower ${lower}`, text: percentOf(percentOf(secret, { lower, form: true }), { lower, form: true }) });
  }
  for (const hex of [false, true]) {
    for (const upper of [false, true]) {
      out.push({ name: `html hex ${hex} upper ${upper}`, text: htmlOf(secret, { hex, upper }) });
      out.push({ name: `html hex ${hex} upper ${upper} zeros`, text: htmlOf(secret, { hex, upper, zeros: 3 }) });
    }
  }
  if (/^[0-9]+$/.test(secret)) {
    for (let i = 1; i <= secret.length; i++) out.push({ name: `exponent ${i}`, text: exponentOf(secret, i) });
    out.push({ name: 'exponent E+', text: exponentOf(secret, 1, true, true) });
  }
  return out;
}
