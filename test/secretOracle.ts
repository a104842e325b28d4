/**
 * The tests' own oracle for "does this text hold a secret": every encoding computed here from
 * first principles (Buffer, JSON.stringify, encodeURIComponent), never by the implementation's
 * detector, so a bug shared by the store's needle generator and the tests cannot hide a leak.
 */

/** The base64 characters fixed by `bytes` alone when they start `shift` bytes into a 3-byte group. */
function base64Core(bytes: Buffer, shift: number, alphabet: 'base64' | 'base64url'): string {
  // Encode twice with different filler bytes around the secret; keep the stretch where both agree
  // from the first character wholly inside the secret to the last.
  const enc = (fill: number) => Buffer.concat([Buffer.alloc(shift, fill), bytes, Buffer.alloc(3, fill)]).toString(alphabet);
  const a = enc(0x00);
  const b = enc(0xff);
  let start = Math.ceil((shift * 8) / 6);
  while (start < a.length && a[start] !== b[start]) start++;
  let end = Math.floor(((shift + bytes.length) * 8) / 6);
  while (end > start && a[end - 1] !== b[end - 1]) end--;
  return a.slice(start, end);
}

function utf16be(s: string): Buffer {
  const le = Buffer.from(s, 'utf16le');
  const be = Buffer.alloc(le.length);
  for (let i = 0; i + 1 < le.length; i += 2) {
    be[i] = le[i + 1] as number;
    be[i + 1] = le[i] as number;
  }
  return be;
}

/** Every form of `secret` the store promises never to write (each at least 6 characters). */
export function oracleForms(secret: string): Array<{ form: string; name: string }> {
  const out = new Map<string, string>();
  const add = (name: string, form: string) => {
    if (form.length >= 6 && !out.has(form)) out.set(form, name);
  };
  add('raw', secret);
  let j = secret;
  for (let depth = 1; depth <= 8; depth++) add(`json-escape-${depth}`, (j = JSON.stringify(j).slice(1, -1)));
  const pct = encodeURIComponent(secret);
  add('percent', pct);
  add('percent-lower', pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  add('percent-plus', pct.replace(/%20/g, '+'));
  add('percent-double', encodeURIComponent(pct));
  const utf8 = Buffer.from(secret, 'utf8');
  for (const [label, bytes] of [['utf8', utf8], ['utf16le', Buffer.from(secret, 'utf16le')], ['utf16be', utf16be(secret)]] as const) {
    for (let shift = 0; shift < 3; shift++) {
      add(`${label}-base64-${shift}`, base64Core(bytes, shift, 'base64'));
      add(`${label}-base64url-${shift}`, base64Core(bytes, shift, 'base64url'));
    }
    add(`${label}-hex`, bytes.toString('hex'));
    add(`${label}-HEX`, bytes.toString('hex').toUpperCase());
  }
  add('html-dec', [...secret].map((c) => `&#${c.codePointAt(0)};`).join(''));
  add('html-hex', [...secret].map((c) => `&#x${(c.codePointAt(0) as number).toString(16)};`).join(''));
  return [...out].map(([form, name]) => ({ form, name }));
}

/**
 * The names of the forms of `secret` found in `bytes`: as they stand, with whitespace removed
 * (wrapped base64), lower-cased (mixed-case hex), with hex separators removed, and the raw
 * UTF-16 code units of the secret.
 */
export function oracleLeaks(bytes: Buffer, secret: string): string[] {
  const text = bytes.toString('latin1');
  const views = [text, text.replace(/[\r\n\t ]+/g, ''), text.toLowerCase(), text.replace(/(?:\\x|[: ])/g, '').toLowerCase()];
  const found = new Set<string>();
  for (const { form, name } of oracleForms(secret)) {
    const f = Buffer.from(form, 'utf8').toString('latin1');
    const fl = f.toLowerCase();
    if (views.some((v, i) => v.includes(i >= 2 ? fl : f))) found.add(name);
  }
  for (const [name, raw] of [['utf16le-raw', Buffer.from(secret, 'utf16le')], ['utf16be-raw', utf16be(secret)]] as const) {
    if (bytes.indexOf(raw) !== -1) found.add(name);
  }
  return [...found];
}
