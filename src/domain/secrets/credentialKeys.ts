/**
 * Which object members hold credentials and which must be kept byte-exact whatever their text
 * looks like. Keys are compared with case and separators (`-`, `_`, `.`, space) folded:
 * `X-Api-Key`, `api_key`, `apiKey` match.
 *
 * A credential name is `strong` (any string it holds is a credential, placeholders aside:
 * `password`, `api_key`, `cookie`) or `weak` (the word also names things that are not secrets:
 * an LLM `token` "Hello", `pwd` the working directory, `credentials` "default"; only a value
 * that looks like a secret is redacted). See credentialValues.ts for the value checks.
 */
export type CredentialStrength = 'strong' | 'weak';

const STRONG_NAMES = new Set([
  'apikey', 'xapikey', 'accesstoken', 'refreshtoken', 'idtoken', 'auth', 'authorization', 'proxyauthorization',
  'password', 'passwd', 'pass', 'passphrase', 'secret', 'clientsecret', 'privatekey', 'cookie', 'setcookie',
  'secretkey', 'secretaccesskey', 'sessiontoken', 'authtoken', 'bearertoken', 'apitoken', 'privatetoken', 'bottoken',
  'accesskey', 'signingkey', 'encryptionkey', 'masterkey', 'connectionstring',
  // AWS key ids end in `_id` but are credentials.
  'awsaccesskeyid', 'accesskeyid',
]);
const WEAK_NAMES = new Set(['token', 'credential', 'credentials', 'creds', 'pwd']);

/** Suffixes that make a folded key a strong credential key (`openai_api_key`, `db_password`, `GITHUB_TOKEN`). */
const STRONG_SUFFIXES = [
  'apikey', 'password', 'passwd', 'passphrase', 'secret', 'accesstoken', 'refreshtoken', 'privatekey', 'secretaccesskey',
  'authtoken', 'apitoken', 'bottoken', 'sessiontoken', 'privatetoken', 'bearertoken', 'accesskey', 'secretkey',
  'signingkey', 'encryptionkey', 'masterkey', 'connectionstring', 'connstring',
  // NAME_TOKEN of a service or a kind of credential; `next_page_token`, `max_tokens` are not.
  'githubtoken', 'ghtoken', 'gitlabtoken', 'npmtoken', 'pypitoken', 'hftoken', 'huggingfacetoken', 'slacktoken',
  'discordtoken', 'telegramtoken', 'oauthtoken', 'deploytoken', 'personaltoken', 'servicetoken', 'registrytoken',
  'vaulttoken', 'usertoken', 'apptoken', 'clienttoken', 'securitytoken', 'runnertoken', 'webhooktoken', 'dockertoken',
];

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
  if (STRONG_NAMES.has(f) || STRONG_SUFFIXES.some((s) => f.endsWith(s))) return 'strong';
  if (WEAK_NAMES.has(f)) return 'weak';
  return undefined;
}

export function isCredentialKey(key: string): boolean {
  return credentialStrength(key) !== undefined;
}
