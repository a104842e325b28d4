/**
 * The shape of a token rule, the boundaries every rule is built with, and the entropy measure.
 * Rules are data (rules/providers.ts, rules/context.ts); the engine that runs them is
 * ../tokenRules.ts.
 *
 * Linearity invariant: every pattern starts with a literal (or a lookbehind then a literal),
 * uses only bounded character classes, and no quantified group whose body can match a prefix of
 * its own continuation, so a scan costs at most (occurrences of the literal) x (the longest
 * bound) steps, however hostile the text.
 */
export interface TokenRule {
  /** Stable id: the stored placeholder is `<redacted:ID>`. */
  id: string;
  /** What the rule finds, for people reading the table and `npm run secrets:report`. */
  description: string;
  /**
   * Where the format comes from: the provider's documentation (a URL), a gitleaks rule
   * (`gitleaks:ID`, config/gitleaks.toml) or a trufflehog detector (`trufflehog:NAME`,
   * pkg/detectors/NAME); the patterns themselves are the project's own.
   */
  source: string;
  /**
   * Templates (rules/examples.ts) of texts the rule must redact and texts no rule may change;
   * test/domain/secrets/ruleExamples.test.ts runs every one.
   */
  examples: { redacted: readonly string[]; kept: readonly string[] };
  /**
   * Lower-case literals: the rule runs only when one of them occurs in the text (case folded).
   * Every match of the pattern holds one of them.
   */
  keywords: readonly string[];
  /** A global regular expression. */
  pattern: RegExp;
  /**
   * Group(s) holding the secret (default: the whole match); with several, the first that took
   * part in the match. Text outside the group is kept byte-exact.
   */
  group?: number | readonly number[];
  /** Minimum Shannon entropy (bits per character) of the secret; lower is not redacted. */
  minEntropy?: number;
  /** Left boundary the engine checks before the match (see leftBoundaryOk); none when unset. */
  boundary?: Boundary;
  /**
   * The match starts inside a name (a keyword within `db_password`): the engine widens the name
   * over up to this many name characters (`[A-Za-z0-9_.-]`) before the match, and passes the
   * whole name to `accept` in place of the match.
   */
  nameBefore?: number;
  /**
   * Characters of the token before its match, for a token whose distinctive part is in its
   * middle (`<42>+ACR<6>`, `<14>.atlasv1.<67>`): the pattern starts at that part, and this
   * (anchored with `$`) must match the text right before it, within 80 characters and not
   * reaching into an earlier replacement. Boundaries are then checked where the lead starts.
   * The whole token is the secret.
   */
  lead?: RegExp;
  /** A further check of the secret (placeholders, references, code): false keeps the match. */
  accept?: (secret: string, matchOrName: string) => boolean;
}

/**
 * Left boundary, checked by the engine on the character before a match (a lookbehind at the
 * start of a pattern would make the scan try every position, ~45 ms per rule and MB, where a
 * pattern starting with a literal is scanned for that literal).
 * - `strict`: the token may not continue a run of base64url characters (a random base64,
 *   base64url or hex string never holds a match in its middle), except where the run is the end
 *   of an escape the token follows: `%3D` / `%20` (percent-encoding) or a literal `\n` / `\t` /
 *   `\r` (text escaped once more than it reads).
 * - `glued`: for distinctive prefixes (holding `_`, `-` or `.`), also after `_` or `-`, so a
 *   token glued to a name (`GITHUB_TOKEN_ghp_…`) is found; never after a letter or digit.
 * A random base64url string still never holds a match: the right boundary R fails inside it.
 */
export type Boundary = 'strict' | 'glued';

export function leftBoundaryOk(text: string, offset: number, boundary: Boundary): boolean {
  if (offset === 0) return true;
  const c = text.charCodeAt(offset - 1);
  const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  if (!alnum && (boundary === 'glued' || (c !== 95 && c !== 45))) return true;
  if (offset >= 2 && text.charCodeAt(offset - 2) === 92 && (c === 110 || c === 116 || c === 114)) return true; // \n \t \r
  return offset >= 3 && text[offset - 3] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(offset - 2, offset));
}

/** Right boundary: the next character is not a base64url character (or the text ends). */
export const R = String.raw`(?![A-Za-z0-9_-])`;

/** Builds a global pattern from source pieces. */
export function re(source: string, flags = ''): RegExp {
  return new RegExp(source, `g${flags}`);
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}
