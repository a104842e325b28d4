import type { CredentialStrength } from './credentialKeys.js';
import { entropy } from './rules/rule.js';

/**
 * Whether a string held under a credential-like name (a member, or `NAME=value` in text) is a
 * credential. Kept as they are, whatever the name: the empty string, placeholders (`<redacted>`,
 * `<your-token>`, `***`, `xxx`, `changeme`, `none`, auth scheme names such as `oauth2`), references
 * to a credential held elsewhere (`${DB_PASSWORD}`, `$TOKEN`, `{{ secrets.X }}`, `%PW%`,
 * `process.env.X`, `op://…`, `vault:…`, `arn:aws:secretsmanager:…`, an environment variable's
 * NAME), and absolute file paths (`pwd` is also the working directory). A well-known default
 * such as `changeme` is a placeholder here: it is public, so storing it leaks nothing.
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

/**
 * Schemes of secret-manager references: 1Password `op://`, Vault `vault:`, vals `ref+vault://`,
 * `sm://`, `gsm://`, `awssm://`, Azure Key Vault `akv://`, `env:`, `file:`, Docker / k8s secret
 * files, SOPS, Doppler, Infisical, Bitwarden.
 */
const REFERENCE_SCHEME = /^(?:op|vault|ref\+[a-z0-9]{1,20}|sm|gsm|gcpsm|awssm|awssecrets|secretsmanager|ssm|akv|azkv|keyvault|bw|bws|doppler|infisical|sops|k8s|secret|secrets|env|file|envvar):\/{0,2}[^\s]{1,500}$/i;

/** A credential held elsewhere: a variable, a template, an expression or a secret manager's reference naming it. */
export function isReference(v: string): boolean {
  const t = v.trim();
  return /^\$\{[^{}]{1,120}\}$/.test(t) || /^\$\(\s?[^()]{1,120}\)$/.test(t) || /^\$[A-Za-z_][A-Za-z0-9_]{0,80}$/.test(t) ||
    /^\{\{[^{}]{1,120}\}\}$/.test(t) || /^%[A-Za-z_][A-Za-z0-9_]{0,80}%$/.test(t) || /^<%=?[^%]{1,120}%>$/.test(t) ||
    /^(?:process\.env|os\.environ|ENV|env|secrets|vars)[.[/]/.test(t) || /^\$__(?:file|env|vault)\{[^{}]{1,200}\}$/.test(t) ||
    REFERENCE_SCHEME.test(t) || /^arn:aws[a-z-]{0,12}:(?:secretsmanager|ssm|kms):[a-z0-9-]{0,30}:\d{12}:[^\s]{1,512}$/.test(t) ||
    /^projects\/[\w-]{1,64}\/secrets\/[\w-]{1,255}(?:\/versions\/[\w-]{1,64})?$/.test(t) || /^@Microsoft\.KeyVault\(/.test(t) ||
    /^https:\/\/[\w-]{1,64}\.vault\.azure\.net\/secrets\/[\w/-]{1,300}$/.test(t) || /^!(?:Ref|Sub|GetAtt|ImportValue)\b/.test(t) ||
    isEnvName(t);
}

/** The NAME of an environment variable (`ANTHROPIC_API_KEY`): upper case, words joined by `_`. */
export function isEnvName(v: string): boolean {
  return v.length <= 128 && /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(v) && /[A-Z]{3}/.test(v);
}

/** An absolute file path of two or more segments (`/home/user/.config/app`, `~/x/y`, `C:\x`). */
export function isPath(v: string): boolean {
  return /^(?:~|\.{1,2})?\/[\w.@~+-]{1,255}(?:\/[\w.@~+-]{0,255}){1,64}$/.test(v) || /^[A-Za-z]:\\[\w .\\-]{1,255}$/.test(v);
}

/** One part of a name as people write them: lower, UPPER_SNAKE, snake_case, camelCase, PascalCase. */
const WORD_SEGMENT = /^(?:[a-z_$][a-z_$]*|[A-Z_][A-Z_]*|[a-z_$]*(?:[A-Z]{1,2}[a-z]+)+[A-Z]{0,2})$/;

/**
 * An expression naming a value: `self.password`, `config.db.secret`, `settings.SECRET_KEY` —
 * dotted names of words: no digits, low entropy, vowels as words have them. A random token
 * holding a dot (`Fq8v…T8.Zb3N…`, `FqvLmQxRtWzK.ZbNcYhJs…`) is none.
 */
export function isExpression(v: string): boolean {
  if (/\d/.test(v) || !/^[A-Za-z_$][\w$]{0,80}(?:\.[A-Za-z_$][\w$]{0,80}){1,8}$/.test(v)) return false;
  if (!v.split('.').every((seg) => WORD_SEGMENT.test(seg))) return false;
  const letters = v.replace(/[^A-Za-z]/g, '');
  return entropy(v) < 4.2 && (letters.match(/[aeiouAEIOU]/g)?.length ?? 0) >= letters.length * 0.2;
}

/**
 * A word or a lower-case identifier: `ldap`, `accepted`, `mem2reg`, `redis-credentials`,
 * `oauth2-proxy-client`, `kid-2024-01`. Each part is letters with at most one digit, or digits
 * alone; `abc123def456`, `s3cr3t` are not words.
 */
export function isWordLike(v: string): boolean {
  if (v.length < 3 || v.length > 40) return false;
  if (/^(?:[A-Z]?[a-z]+|[A-Z]{2,12})$/.test(v)) return true;
  if (!/^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+){0,6}$/.test(v)) return false;
  return v.split(/[-_.]/).every((seg) => /^(?:[a-z]+|\d{1,8}|[a-z]*\d[a-z]*)$/.test(seg));
}

/** An OpenPGP key id or fingerprint (git `user.signingkey`): 8, 16 or 40 upper-case hex digits. */
export function isKeyId(v: string): boolean {
  return /^(?:0x)?(?:[0-9A-F]{8}|[0-9A-F]{16}|[0-9A-F]{40})$/.test(v);
}

/**
 * Secret-shaped, for a weak name: 8+ characters, no blank, a digit and a letter, 3 bits of
 * entropy per character or more — and not a URL, a relative file path, dotted words
 * (`home.title2`), a version, a date or an e-mail address.
 */
export function isSecretShaped(v: string): boolean {
  if (v.length < 8 || v.length > 4096 || /\s/.test(v) || !/\d/.test(v) || !/[A-Za-z]/.test(v) || entropy(v) < 3) return false;
  if (/^[a-z][a-z0-9+.-]{1,20}:\/\//i.test(v) || /^[^@\s/]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,}$/.test(v)) return false;
  if (/^(?:\.{1,2}\/)?[\w@+-]{1,255}(?:\/[\w@.+-]{1,255})*\/[\w@+-]{1,255}\.[A-Za-z0-9]{1,6}$/.test(v)) return false;
  if (/^[A-Za-z][A-Za-z-]{0,40}\d{0,2}(?:\.[A-Za-z][A-Za-z-]{0,40}\d{0,2}){1,8}$/.test(v)) return false;
  if (/^v?\d{1,6}(?:\.\d{1,6}){1,3}(?:[-+][\w.]{1,40})?$/.test(v) || /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) return false;
  return true;
}

/**
 * `inText`: the value came from `NAME = value` in free text (source code, YAML, .env, logs), where
 * type annotations (`password: string`) and expressions look like assignments too; a member value
 * (`{"password": "hunter"}`) is what it says.
 */
export function looksLikeSecretValue(v: string, strength: CredentialStrength, inText = false): boolean {
  // In text, the cheap shape checks first: a hostile text can hold a candidate every few bytes.
  if (inText && strength !== 'weak' && /^[A-Za-z_$][\w.:-]{0,80}$/.test(v) && !/\d/.test(v) && (v.endsWith(':') || isExpression(v))) return false;
  if (isPlaceholder(v) || isReference(v) || isPath(v)) return false;
  if (strength === 'weak') return !isKeyId(v) && isSecretShaped(v);
  if (strength === 'named' && (isWordLike(v) || isKeyId(v))) return false;
  if (!inText) return true;
  // an expression, a YAML tag (`!vault |`), the next key of a line of `KEY: KEY: …`
  if (isExpression(v) || /^![A-Za-z]/.test(v) || /^[A-Za-z_][\w.-]{0,80}:$/.test(v)) return false;
  // A word (a type, a variable): only a long random run of mixed-case letters is a credential.
  if (/^[A-Za-z_$]+$/.test(v)) return v.length >= 16 && /[A-Z]/.test(v) && /[a-z]/.test(v) && entropy(v) >= 3.5;
  return v.length >= 4;
}
