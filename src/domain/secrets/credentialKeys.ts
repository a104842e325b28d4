/**
 * Which object members (and `NAME = value` names in text) hold credentials, and which must be
 * kept byte-exact whatever their text looks like. Keys are compared with case and separators
 * (`-`, `_`, `.`, space) folded: `X-Api-Key`, `api_key`, `apiKey` match.
 *
 * A credential name is
 * - `strong`: any string it holds is a credential, placeholders and references aside
 *   (`password`, `api_key`, `access_token`, `GITHUB_TOKEN`);
 * - `named`: strong, but the word also names things (`auth` "ldap", `pass` "mem2reg", `cookie`
 *   "accepted", a Helm `clientSecret` naming a Kubernetes secret, a `signing_key` key id): a
 *   word, a lower-case identifier or a key id is kept;
 * - `weak`: the name says little (`token`, `credentials`, `pwd`, and the patterns `*_TOKEN`,
 *   `*_KEY`, `*_PAT`, `X-*-Key`, `*SECRET*`, `*PASSWORD*`): only a secret-shaped value is redacted.
 * See credentialValues.ts for the value checks.
 */
export type CredentialStrength = 'strong' | 'named' | 'weak';

const STRONG_NAMES = new Set([
  'apikey', 'xapikey', 'accesstoken', 'refreshtoken', 'idtoken', 'authorization', 'proxyauthorization',
  'password', 'passwd', 'passphrase', 'privatekey', 'secretkey', 'secretaccesskey', 'sessiontoken', 'authtoken', 'bearertoken',
  'apitoken', 'privatetoken', 'bottoken', 'accesskey', 'encryptionkey', 'masterkey', 'connectionstring',
  // AWS key ids end in `_id` but are credentials.
  'awsaccesskeyid', 'accesskeyid',
]);
const NAMED_NAMES = new Set(['auth', 'pass', 'cookie', 'setcookie', 'secret', 'clientsecret', 'signingkey']);
const WEAK_NAMES = new Set(['token', 'credential', 'credentials', 'creds', 'pwd']);

/** Suffixes that make a folded key a strong credential key (`openai_api_key`, `db_password`, `GITHUB_TOKEN`). */
const STRONG_SUFFIXES = [
  'apikey', 'password', 'passwd', 'passphrase', 'accesstoken', 'refreshtoken', 'privatekey', 'secretaccesskey',
  'authtoken', 'apitoken', 'bottoken', 'sessiontoken', 'privatetoken', 'bearertoken', 'accesskey', 'secretkey',
  'encryptionkey', 'masterkey', 'connectionstring', 'connstring',
  // NAME_TOKEN of a service or a kind of credential; `next_page_token`, `max_tokens` are not.
  'githubtoken', 'ghtoken', 'gitlabtoken', 'npmtoken', 'pypitoken', 'hftoken', 'huggingfacetoken', 'slacktoken',
  'discordtoken', 'telegramtoken', 'oauthtoken', 'deploytoken', 'personaltoken', 'servicetoken', 'registrytoken',
  'vaulttoken', 'usertoken', 'apptoken', 'clienttoken', 'securitytoken', 'runnertoken', 'webhooktoken', 'dockertoken',
];
const NAMED_SUFFIXES = ['secret', 'signingkey'];

/**
 * Names of Kubernetes / Helm secrets and references to secrets, not secrets: `existingSecret:
 * redis-credentials`, `tlsSecret`, `secretName`, `secretKeyRef`, `secretsManagerArn`. Their
 * values are still scanned for token formats.
 */
const SECRET_NAME_KEY = /existingsecret|(?:secret(?:name|names|ref|refs|keyref|provider|providerclass|store|storeref|path|file|arn|version|mount|volume|namespace|manager(?:arn|name)?)|tlssecret|secretsmanager)$/;

/**
 * Weak names by pattern: a separator or a lower-case letter or digit (camelCase) before a final
 * TOKEN / KEY / PAT (`DD_APP_KEY`, `X-Figma-Token`, `GITLAB_PAT`, `licenseKey`; not `monkey`,
 * `compat`); SECRET or PASSWORD anywhere; `*credentials`.
 */
const WEAK_SUFFIX = /(?:[-_. ](?:[Tt][Oo][Kk][Ee][Nn]|[Kk][Ee][Yy]|[Pp][Aa][Tt])|[a-z0-9](?:Token|TOKEN|Key|KEY|Pat|PAT))$/;
/** `*_KEY` / `*_TOKEN` names that hold no secret: public keys, database and cache keys, page tokens. */
const NOT_SECRET_WORDS = /public|publishable|pubkey|idempoten|partition|sort|primary|foreign|cache|range|shard|^row|dedup|lookup|routing|object|translation|i18n|message|group|sequence|unique|composite|surrogate|natural|hotkey|shortcut|keyboard|page|^next|continuation|sync|resume|cancel|pagination|cursor|(?<!ac)count|limit|type|sitekey|recaptcha|ssh|^max|^min/;

const fold = (key: string) => key.toLowerCase().replace(/[-_. ]/g, '');

/**
 * Ids and signatures (thinking-block signatures must replay exactly): kept byte-exact, never
 * looked into. AWS access key ids are not kept ids: they are credentials.
 */
export function isKeptKey(key: string): boolean {
  if (fold(key).endsWith('accesskeyid')) return false;
  return /(?:_id|Id|ID|-id)$/.test(key) || /signature$/i.test(key);
}

/**
 * Usage counters (input_tokens, max_tokens, token_count, ...): never credential keys. Their
 * values are numbers, which redaction leaves alone anyway; they are still scanned for token
 * formats, so `auth_tokens: ["ghp_…"]` is not waved through as a counter.
 */
function isUsageCounter(key: string): boolean {
  const f = fold(key);
  return f.endsWith('tokens') || f.endsWith('tokencount') || f === 'maxtokens';
}

/** How strongly a member name says its string values are credentials; undefined: not a credential name. */
export function credentialStrength(key: string): CredentialStrength | undefined {
  if (key.length > 64 || isKeptKey(key) || isUsageCounter(key)) return undefined;
  const f = fold(key);
  if (SECRET_NAME_KEY.test(f)) return undefined;
  if (STRONG_NAMES.has(f) || STRONG_SUFFIXES.some((s) => f.endsWith(s))) return 'strong';
  if (NAMED_NAMES.has(f) || NAMED_SUFFIXES.some((s) => f.endsWith(s))) return 'named';
  if (WEAK_NAMES.has(f)) return 'weak';
  return weakByPattern(key, f) ? 'weak' : undefined;
}

function weakByPattern(key: string, f: string): boolean {
  if (WEAK_SUFFIX.test(key) && !NOT_SECRET_WORDS.test(f)) return true;
  return f.endsWith('credentials') || f.endsWith('credential') || f.endsWith('creds') ||
    (f.includes('secret') && !f.includes('secretar')) || /pass(?:word|wd|phrase)/.test(f);
}

export function isCredentialKey(key: string): boolean {
  return credentialStrength(key) !== undefined;
}
