/**
 * Which object members hold credentials (their string values are replaced by "<redacted>")
 * and which must be kept byte-exact whatever their text looks like. Keys are compared with
 * case and separators (`-`, `_`, `.`, space) folded: `X-Api-Key`, `api_key`, `apiKey` match.
 */
const CREDENTIAL_KEYS = new Set([
  'apikey', 'xapikey', 'accesstoken', 'refreshtoken', 'idtoken', 'auth', 'authorization', 'proxyauthorization',
  'password', 'passwd', 'secret', 'clientsecret', 'privatekey', 'cookie', 'setcookie', 'secretkey', 'secretaccesskey',
  'sessiontoken', 'authtoken', 'bearertoken',
]);
/** Suffixes that make a folded key a credential key (`openai_api_key`, `db_password`, ...). */
const CREDENTIAL_SUFFIXES = ['apikey', 'password', 'passwd', 'secret', 'accesstoken', 'refreshtoken', 'privatekey', 'secretaccesskey', 'authtoken'];

const fold = (key: string) => key.toLowerCase().replace(/[-_. ]/g, '');

/** Ids and signatures (thinking-block signatures must replay exactly): kept byte-exact, never looked into. */
export function isKeptKey(key: string): boolean {
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

export function isCredentialKey(key: string): boolean {
  if (isKeptKey(key) || isUsageCounter(key)) return false;
  const f = fold(key);
  return CREDENTIAL_KEYS.has(f) || CREDENTIAL_SUFFIXES.some((s) => f.endsWith(s));
}
