import { R, re, type TokenRule } from './rule.js';

/**
 * The builder of provider token rules: a literal prefix, then a bounded run of the provider's
 * alphabet, at a token boundary on both sides (rule.ts). Prefixes, lengths and alphabets are
 * those the providers document (and gitleaks' and trufflehog's public rules encode, named in
 * each rule's `source`); the patterns are the project's own. `glued` prefixes hold `_`, `-` or
 * `.`, distinctive enough to be found after `_` or `-` too.
 */
export interface TokenSpec {
  id: string;
  description: string;
  source: string;
  keywords: string[];
  /** The pattern, without the right boundary (added here). */
  body: string;
  redacted: string[];
  kept: string[];
  glued?: boolean;
  /**
   * The prefix a `tail` of the body refuses to run into: the token may also end right before
   * `_` or `-` + this prefix (`hvs.X_hvs.Y` is two tokens), so what a match covers does not
   * depend on whether the next token was redacted already (redaction stays idempotent).
   */
  stop?: string;
  flags?: string;
  /** rule.ts `lead`: the token's characters before the body, which starts at its distinctive middle. */
  lead?: string;
  minEntropy?: number;
  accept?: (secret: string) => boolean;
}

export function token(s: TokenSpec): TokenRule {
  return {
    id: s.id,
    description: s.description,
    source: s.source,
    examples: { redacted: s.redacted, kept: s.kept },
    keywords: s.keywords,
    pattern: re(`(?:${s.body})${s.stop === undefined ? R : `(?:${R}|(?=[_-]${s.stop}))`}`, s.flags),
    boundary: s.glued ? 'glued' : 'strict',
    ...(s.lead === undefined ? {} : { lead: new RegExp(`(?:${s.lead})$`) }),
    ...(s.minEntropy === undefined ? {} : { minEntropy: s.minEntropy }),
    ...(s.accept === undefined ? {} : { accept: (secret: string) => s.accept!(secret) }),
  };
}

export const B64URL = 'A-Za-z0-9_-';

/**
 * A tail of base64url characters whose `_` / `-` may not start the rule's own prefix again. A
 * glued rule may start right after `_` or `-`, so in a run such as `xoxb-xoxb-…` every prefix is
 * a start; a tail that ran over the next prefix would rescan the run from each of them
 * (bound x starts steps). Stopping at the next prefix scans each character once.
 */
export const tail = (stop: string, min: number, max: number, seps = '_-') =>
  `(?:[A-Za-z0-9]|[${seps}](?!${stop})){${min},${max}}`;

/** A version-4-style UUID in lower-case hex (the body of several providers' tokens). */
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Letters of both cases and a digit: what a random alphanumeric token of 16+ characters has and a word or a constant does not. */
export function mixed(s: string): boolean {
  return /[a-z]/.test(s) && /[A-Z]/.test(s) && /\d/.test(s);
}
