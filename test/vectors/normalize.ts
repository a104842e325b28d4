/**
 * The normalization every client's replay of protocol/vectors.json applies (protocol/README.md,
 * "Test vectors"), written so that it is a few lines in any language:
 *
 * - A ULID (26 characters of Crockford base32) in a response string is replaced by `<id:N>`,
 *   N numbered from 1 in order of first appearance over the scenario's responses (walked in
 *   document order: object members in the order received, array elements in order). The same
 *   ULID is always the same N.
 * - In a request, `<id:N>` is replaced by the ULID it stands for (it always appeared before).
 * - An RFC 3339 UTC time with milliseconds (`2026-01-01T00:00:00.000Z`) → `<ts>`.
 * - The store root the initialize result names (`store.root`) → `<root>` wherever it occurs.
 * - `serverInfo.version` → `<version>`.
 * - The response's `jsonrpc` and `id` are not compared.
 */
const ULID = /[0-9A-HJKMNP-TV-Z]{26}/g;
const TS = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

export class Normalizer {
  private readonly ids = new Map<string, string>();
  private readonly actual = new Map<string, string>();
  root: string | undefined;

  /** A response value as the vector file shows it. */
  normalize(v: unknown, key = '', parent = ''): unknown {
    if (typeof v === 'string') {
      if (key === 'version' && parent === 'serverInfo') return '<version>';
      let s = this.root ? v.split(this.root).join('<root>') : v;
      s = s.replace(ULID, (u) => {
        let n = this.ids.get(u);
        if (!n) {
          n = `<id:${this.ids.size + 1}>`;
          this.ids.set(u, n);
          this.actual.set(n, u);
        }
        return n;
      });
      return s.replace(TS, '<ts>');
    }
    if (Array.isArray(v)) return v.map((x) => this.normalize(x, '', parent));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.normalize(x, k, key)]));
    return v;
  }

  /** A request value with every `<id:N>` replaced by the ULID it stands for. */
  substitute(v: unknown): unknown {
    if (typeof v === 'string') return v.replace(/<id:\d+>/g, (n) => this.actual.get(n) ?? n);
    if (Array.isArray(v)) return v.map((x) => this.substitute(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.substitute(x)]));
    return v;
  }
}
