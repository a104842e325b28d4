import type { CredentialStrength } from './credentialKeys.js';
import { entropy } from './rules/rule.js';

/**
 * Whether a string held under a credential-like name (a member, or `NAME=value` in text) is a
 * credential. Kept as they are, whatever the name: the empty string, placeholders (`<redacted>`,
 * `<your-token>`, `***`, `xxx`, `changeme`, `none`, auth scheme names such as `oauth2`), references
 * to a credential held elsewhere (`${DB_PASSWORD}`, `$TOKEN`, `{{ secrets.X }}`, `%PW%`,
 * `process.env.X`), and absolute file paths (`pwd` is also the working directory). A well-known
 * default such as `changeme` is a placeholder here: it is public, so storing it leaks nothing.
 */
const PLACEHOLDER_WORDS = new Set([
  'changeme', 'changeit', 'none', 'null', 'nil', 'undefined', 'true', 'false', 'yes', 'no', 'on', 'off', 'redacted', 'hidden',
  'secret', 'password', 'token', 'required', 'optional', 'string', 'example', 'placeholder', 'todo', 'tbd', 'dummy', 'empty',
  'masked', 'filtered', 'removed', 'omitted', 'default', 'unset', 'notset',
  // auth schemes and flows
  'basic', 'bearer', 'digest', 'oauth', 'oauth1', 'oauth2', 'oidc', 'pkce', 'jwt', 'apikey', 'ntlm', 'negotiate', 'kerberos',
  'aws4', 'sigv4', 'hmac', 'mtls', 'tls', 'anonymous', 'session', 'cookie', 'header', 'query', 'env', 'keychain', 'sso',
]);

export function isPlaceholder(v: string): boolean {
  const t = v.trim();
  if (t === '') return true;
  if (/^(?:\*+|x{3,}|X{3,}|\.{3}|\u2026|-+|_+|#+|\?+)$/.test(t)) return true;
  if (/^<[^<>]{0,80}>$/.test(t) || /^\[[A-Za-z _-]{0,40}\]$/.test(t)) return true; // <redacted>, <redacted:rule>, <your-key>, [REDACTED]
  if (/^your[-_ ]?[a-z_ -]{0,40}$/i.test(t)) return true;
  return PLACEHOLDER_WORDS.has(t.toLowerCase().replace(/[-_ ]/g, ''));
}

/** A credential held elsewhere: a variable, a template or an expression naming it. */
export function isReference(v: string): boolean {
  const t = v.trim();
  return /^\$\{[^{}]{1,120}\}$/.test(t) || /^\$\(\s?[^()]{1,120}\)$/.test(t) || /^\$[A-Za-z_][A-Za-z0-9_]{0,80}$/.test(t) ||
    /^\{\{[^{}]{1,120}\}\}$/.test(t) || /^%[A-Za-z_][A-Za-z0-9_]{0,80}%$/.test(t) ||
    /^(?:process\.env|os\.environ|ENV|env|secrets|vars)[.[]/.test(t);
}

/** An absolute file path of two or more segments (`/home/user/.config/app`, `~/x/y`, `C:\x`). */
export function isPath(v: string): boolean {
  return /^(?:~|\.{1,2})?\/[\w.@~+-]{1,255}(?:\/[\w.@~+-]{0,255}){1,64}$/.test(v) || /^[A-Za-z]:\\[\w .\\-]{1,255}$/.test(v);
}

/** An expression naming a value: `self.password`, `config.db.secret`, `settings.SECRET_KEY`. */
function isDottedName(v: string): boolean {
  return /^[A-Za-z_$][\w$]{0,80}(?:\.[A-Za-z_$][\w$]{0,80}){1,8}$/.test(v);
}

/**
 * `inText`: the value came from `NAME = value` in free text (source code, YAML, .env, logs), where
 * type annotations (`password: string`) and expressions look like assignments too; a member value
 * (`{"password": "hunter"}`) is what it says.
 */
export function looksLikeSecretValue(v: string, strength: CredentialStrength, inText = false): boolean {
  // In text, the cheap shape checks first: a hostile text can hold a candidate every few bytes.
  if (inText && strength === 'strong' && /^[A-Za-z_$][\w.:-]{0,80}$/.test(v) && !/\d/.test(v) && (v.includes('.') || v.endsWith(':'))) return false;
  if (isPlaceholder(v) || isReference(v) || isPath(v)) return false;
  if (strength === 'strong') {
    if (!inText) return true;
    // an expression, a YAML tag (`!vault |`), the next key of a line of `KEY: KEY: …`
    if (isDottedName(v) || /^![A-Za-z]/.test(v) || /^[A-Za-z_][\w.-]{0,80}:$/.test(v)) return false;
    // A word (a type, a variable): only a long random run of mixed-case letters is a credential.
    if (/^[A-Za-z_$]+$/.test(v)) return v.length >= 16 && /[A-Z]/.test(v) && /[a-z]/.test(v) && entropy(v) >= 3.5;
    return v.length >= 4;
  }
  // weak: a secret-shaped value only (no blank, a digit and a letter, not low entropy)
  return v.length >= 8 && !/\s/.test(v) && /\d/.test(v) && /[A-Za-z]/.test(v) && entropy(v) >= 3;
}
