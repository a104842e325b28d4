import { CONTEXT_RULES } from './rules/context.js';
import { DEVOPS_RULES } from './rules/devops.js';
import { FORM_RULES } from './rules/forms.js';
import { PROVIDER_RULES } from './rules/providers.js';
import { SAAS_RULES } from './rules/saas.js';
import { SERVICE_RULES } from './rules/services.js';
import { KeywordScanner } from './rules/keywords.js';
import { entropy, leftBoundaryOk, type TokenRule } from './rules/rule.js';

export type { TokenRule } from './rules/rule.js';

/**
 * Well-known credential formats, replaced in free text by `<redacted:ID>`. The rule table is data
 * (rules/providers.ts, saas.ts, devops.ts, services.ts: provider prefixes; rules/context.ts:
 * credentials known by their context; rules/forms.ts: command-line and file forms), each rule
 * with its description, source and examples. They run in this order: the PEM private key first
 * (it holds base64 lines other rules would cut), then the provider formats, then the context
 * rules and the forms, the generic `NAME = value` rule last (so a provider token assigned to a
 * name keeps its own rule id). A placeholder holds `<`, `:` and `>`, which no rule accepts
 * inside a token: redacting is idempotent.
 */
const GENERIC = CONTEXT_RULES.filter((r) => r.id === 'generic-credential');
export const TOKEN_RULES: readonly TokenRule[] = [
  CONTEXT_RULES[0]!, ...PROVIDER_RULES, ...SAAS_RULES, ...DEVOPS_RULES, ...SERVICE_RULES,
  ...CONTEXT_RULES.slice(1).filter((r) => r.id !== 'generic-credential'), ...FORM_RULES, ...GENERIC,
];

const SCANNER = new KeywordScanner([...new Set(TOKEN_RULES.flatMap((r) => r.keywords))]);

/** Cheap test run before any rule: most text holds none of the rules' keywords. */
export function hasTokenKeyword(text: string): boolean {
  return SCANNER.has(text);
}

/** Keyword → the indexes of the rules it starts (prefix dispatch: no rule is looked at unless one of its keywords occurs). */
const RULES_BY_KEYWORD = new Map<string, number[]>();
TOKEN_RULES.forEach((r, i) => {
  for (const k of new Set(r.keywords)) RULES_BY_KEYWORD.set(k, [...(RULES_BY_KEYWORD.get(k) ?? []), i]);
});

/** The rules' keywords that occur in `text` (one pass; redactTokens takes them to skip its own). */
export function tokenKeywords(text: string): ReadonlySet<string> {
  return SCANNER.find(text);
}

/** tokenKeywords without holding the event loop: a long text in slices, yielding between them. */
export function tokenKeywordsSliced(text: string): Promise<ReadonlySet<string>> {
  return SCANNER.findSliced(text);
}

/** The rules whose keywords occur in a text (`found`: its tokenKeywords), in table order. */
function rulesFor(found: ReadonlySet<string>): TokenRule[] {
  if (found.size === 0) return [];
  const picked = new Set<number>();
  for (const k of found) for (const i of RULES_BY_KEYWORD.get(k)!) picked.add(i);
  return [...picked].sort((a, b) => a - b).map((i) => TOKEN_RULES[i]!);
}

/**
 * Replaces every well-known credential in `text`; `onHit` learns each rule that fired.
 * `found`: tokenKeywords(text), when the caller already scanned it.
 */
export function redactTokens(text: string, onHit?: (rule: string) => void, found: ReadonlySet<string> = SCANNER.find(text)): string {
  let out = text;
  for (const rule of rulesFor(found)) out = applyRule(out, rule, onHit);
  return out;
}

/** How far back a rule's `lead` may reach before its match (rule.ts). */
const LEAD_WINDOW = 80;

/**
 * One rule over a text, as `String.prototype.replace` with a global pattern would run it (each
 * scan resumes after the previous match, replaced or not), except that a rule with a `lead`
 * may take the characters right before its match into the token: the scan starts at the
 * token's distinctive middle (`+ACR`, `.atlasv1.`) rather than at every position of a run.
 */
function applyRule(input: string, rule: TokenRule, onHit?: (rule: string) => void): string {
  const re = rule.pattern;
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  for (let m = re.exec(input); m !== null; m = re.exec(input)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    let start = m.index;
    let match = m[0];
    if (rule.lead !== undefined) {
      const lead = rule.lead.exec(input.slice(Math.max(last, start - LEAD_WINDOW), start));
      if (lead === null) continue;
      start -= lead[0].length;
      match = lead[0] + match;
    }
    const replaced = replacement(input, rule, start, match, m.slice(1));
    if (replaced === undefined) continue;
    onHit?.(rule.id);
    out += input.slice(last, start) + replaced;
    last = start + match.length;
  }
  return last === 0 ? input : out + input.slice(last);
}

/** What a match becomes, or undefined to keep it. */
function replacement(input: string, rule: TokenRule, offset: number, match: string, groups: Array<string | undefined>): string | undefined {
  if (rule.boundary !== undefined && !leftBoundaryOk(input, offset, rule.boundary)) return undefined;
  if (rule.boundary !== undefined && insideBase64Run(input, offset, match.length)) return undefined;
  const g = rule.group === undefined ? undefined : (typeof rule.group === 'number' ? [rule.group] : rule.group).find((n) => groups[n - 1] !== undefined);
  const secret = g === undefined ? match : groups[g - 1]!;
  if (rule.minEntropy !== undefined && entropy(secret) < rule.minEntropy) return undefined;
  if (rule.accept && !rule.accept(secret, rule.nameBefore === undefined ? match : nameAround(input, offset, match, rule.nameBefore))) return undefined;
  if (g === undefined) return placeholder(rule.id);
  // The secret group's position in the match: rebuild the match around it.
  const from = secretOffset(match, groups, g);
  return `${match.slice(0, from)}${placeholder(rule.id)}${match.slice(from + secret.length)}`;
}

/**
 * Where group `g` starts in `match`. Every rule's secret group ends the match or is followed
 * only by a closing quote or `@` (the patterns are written so), and its text holds none of
 * those: its last occurrence in the match is the group.
 */
function secretOffset(match: string, groups: Array<string | undefined>, g: number): number {
  return match.lastIndexOf(groups[g - 1]!);
}

/** The name a match starts inside: name characters before `offset` (up to `before`), then those of the match. */
function nameAround(input: string, offset: number, match: string, before: number): string {
  let start = offset;
  while (start > 0 && offset - start < before && /[A-Za-z0-9_.-]/.test(input[start - 1]!)) start--;
  return input.slice(start, offset) + /^[A-Za-z0-9_.-]*/.exec(match)![0];
}

/** Characters of standard base64 (`+` and `/` are boundaries for base64url, not inside base64). */
const B64_STD = /[A-Za-z0-9+/]/;
/** How far the base64 run must go on beyond a match, on both sides, to call the match part of it. */
const BLOB_MARGIN = 16;

/**
 * Whether a match bounded by `+` or `/` stands inside a longer run of standard base64: random
 * ciphertext (an OpenAI `encrypted_content`, a signature) holds `/EAA…` followed by 100
 * alphanumerics about once per 2 MB, which the token-boundary rule alone would take for a
 * Facebook token. A token in a URL path is bounded by `/` too, but rarely runs on 16 base64
 * characters beyond both ends.
 */
function insideBase64Run(input: string, offset: number, length: number): boolean {
  const before = input[offset - 1];
  const after = input[offset + length];
  if (before !== '+' && before !== '/' && after !== '+' && after !== '/') return false;
  let left = 0;
  while (left < BLOB_MARGIN && offset - left - 1 >= 0 && B64_STD.test(input[offset - left - 1]!)) left++;
  let right = 0;
  while (right < BLOB_MARGIN && offset + length + right < input.length && B64_STD.test(input[offset + length + right]!)) right++;
  return left >= BLOB_MARGIN && right >= BLOB_MARGIN;
}

export function placeholder(rule: string): string {
  return `<redacted:${rule}>`;
}
