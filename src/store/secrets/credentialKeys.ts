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

/** Ids, signatures (thinking-block signatures must replay exactly) and usage counters. */
export function isKeptKey(key: string): boolean {
  if (/(?:_id|Id|ID|-id)$/.test(key) || /signature$/i.test(key)) return true;
  const f = fold(key);
  return f.endsWith('tokens') || f === 'tokencount' || f.endsWith('tokencount') || f === 'maxtokens';
}

export function isCredentialKey(key: string): boolean {
  if (isKeptKey(key)) return false;
  const f = fold(key);
  return CREDENTIAL_KEYS.has(f) || CREDENTIAL_SUFFIXES.some((s) => f.endsWith(s));
}
