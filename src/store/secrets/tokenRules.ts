/**
 * Token rules start where no letter or digit precedes (`_`, `-` and the like may: a token glued
 * to a name, as in GITHUB_TOKEN_ghp_…, is still found). Well-known credential formats, replaced in free text by `<redacted:rule>`. Every pattern is
 * linear: literal anchors, bounded character classes, no nested or overlapping quantifiers, so
 * hostile input cannot make a scan backtrack. (secretlint's recommended preset was measured
 * here at ~118 µs per 2 KB call, six times the append budget, and it misses GitLab, Google,
 * Stripe, Hugging Face, JWT, PEM, Bearer and several OpenAI key formats — so this short list is
 * the project's own, with tests for each rule.)
 */
export interface TokenRule {
  name: string;
  pattern: RegExp;
  /** Group index of the part to replace (default: the whole match). */
  group?: number;
}

export const TOKEN_RULES: readonly TokenRule[] = [
  { name: 'private-key', pattern: /-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----|$)/g },
  { name: 'anthropic-key', pattern: /(?<![A-Za-z0-9])sk-ant-[a-z]{2,8}\d{0,4}-[A-Za-z0-9_-]{20,300}/g },
  { name: 'openai-key', pattern: /(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,300}|[A-Za-z0-9]{32,300})/g },
  { name: 'github-token', pattern: /(?<![A-Za-z0-9])(?:gh[opsur]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})/g },
  { name: 'gitlab-token', pattern: /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,64}/g },
  { name: 'aws-access-key-id', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g },
  { name: 'slack-token', pattern: /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,250}/g },
  { name: 'google-api-key', pattern: /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35}/g },
  { name: 'stripe-key', pattern: /(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}/g },
  { name: 'npm-token', pattern: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}\b/g },
  { name: 'huggingface-token', pattern: /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,64}\b/g },
  // The header may not run into another candidate start ("-eyJ", "_eyJ"): otherwise every
  // start in a long run of "eyJ-eyJ-…" rescans the run to its end (quadratic, seconds per MB).
  { name: 'jwt', pattern: /(?<![A-Za-z0-9])eyJ(?:[A-Za-z0-9]|[_-](?!eyJ)){5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{8,2000}/g },
  // "Bearer"/"Token" then ASCII blanks then a token of 16+ characters holding a non-letter:
  // "Bearer of good news" or a no-break space after Bearer is left alone.
  { name: 'bearer-token', pattern: /\b([Bb]earer|Token)([ \t]{1,8})([A-Za-z0-9._~+/-]{16,4000}=*)/g, group: 3 },
  // The user name may be empty: redis://:PASSWORD@host.
  { name: 'url-password', pattern: /\b([a-zA-Z][a-zA-Z0-9+.-]{0,30}:\/\/[^\s:/?#@"'<>]{0,256}:)([^\s/?#@"'<>]{1,256})(@)/g, group: 2 },
];

/** Cheap test run before any rule: most text has none of these anchors. */
export const TOKEN_ANCHORS = /-----BEGIN|sk-|gh[opsur]_|github_pat_|glpat-|A[KS]IA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|xox[abposr]-|AIza|_live_|_test_|npm_|hf_|eyJ|[Bb]earer|Token|:\/\//;

/** Replaces every well-known credential in `text`; `onHit` learns each rule that fired. */
export function redactTokens(text: string, onHit?: (rule: string) => void): string {
  if (!TOKEN_ANCHORS.test(text)) return text;
  let out = text;
  for (const rule of TOKEN_RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      if (rule.group === undefined) {
        onHit?.(rule.name);
        return placeholder(rule.name);
      }
      const groups = rest.slice(0, -2) as string[]; // replace() passes the groups, then offset and input
      const secret = groups[rule.group - 1] ?? '';
      if (rule.name === 'bearer-token' && !/[^A-Za-z=]/.test(secret)) return match;
      onHit?.(rule.name);
      return groups.map((g, i) => (i === rule.group! - 1 ? placeholder(rule.name) : g)).join('');
    });
  }
  return out;
}

export function placeholder(rule: string): string {
  return `<redacted:${rule}>`;
}
