import { credentialStrength } from '../credentialKeys.js';
import { isPlaceholder, looksLikeSecretValue } from '../credentialValues.js';
import { entropy, R, re, type TokenRule } from './rule.js';

/**
 * Credentials recognised by what stands around them rather than by a prefix of their own: PEM
 * private keys, AWS secret keys and session tokens on their lines, Azure connection strings and
 * SAS signatures, webhook URLs, Authorization headers, URL passwords, `curl -u`, and the generic
 * `NAME = value` assignment under a credential-like name (as gitleaks' generic-api-key).
 */

/** Assignment operators and the quotes around them: `=`, `:`, `:=`, `=>`, `": "`, `' = '`. */
export const SEP = String.raw`["']?[ \t]{0,4}(?::=|=>|[:=])[ \t]{0,4}`;
/** A value: double-quoted, single-quoted, or bare up to a delimiter (groups 1, 2, 3). */
export const VALUE = (bare: string, n: number) =>
  String.raw`(?:"([^"\\\r\n]{1,${n}})"|'([^'\\\r\n]{1,${n}})'|(${bare}{1,${n}}={0,2})(?=[\s"'\x60;,&)\]}|]|\\[nrt"]|$))`;
const GENERIC_WORDS = ['pass', 'pwd', 'secret', 'token', 'key', 'auth', 'credential', 'creds', 'cookie', 'connectionstring', '_pat', '-pat'];
/**
 * A bare value's characters. No `=` but as padding at its end: `a=b=c…` is not one value (a
 * run of `NAME=` would otherwise be one value from each start, rescanned from every start), and
 * a value may not run into a placeholder (`<`), so redacting twice changes nothing more.
 */
export const BARE = String.raw`[^\s"'\x60;,&<>(){}\[\]\\|=]`;

/** A base64 PEM body: base64 characters, blanks, escaped newlines, `:` `,` `.` of its headers, single `-`. */
const PEM_BODY = String.raw`(?:[A-Za-z0-9+/=\s\\:,."]|-(?!-))*`;
const PEM_LINE_BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)`;

export const CONTEXT_RULES: readonly TokenRule[] = [
  {
    // A complete block BEGIN … END is replaced whole. A header without its END line: only the
    // header and the base64 body lines right after it (never the code that follows).
    id: 'private-key',
    description: 'PEM and OpenSSH private keys, PGP private key blocks (a block whole; a header without END: its base64 lines)',
    source: 'gitleaks:private-key',
    examples: { redacted: ['-----BEGIN RSA PRIVATE KEY-----\n{b64:64}\n{b64:64}\n-----END RSA PRIVATE KEY-----', '-----BEGIN OPENSSH PRIVATE KEY-----\n{b64:70}\n{b64:70}'], kept: ['-----BEGIN PUBLIC KEY-----\n{b64:64}\n-----END PUBLIC KEY-----', "if (pem.startsWith('-----BEGIN PRIVATE KEY-----')) {"] },
    keywords: ['-----begin'],
    pattern: re(String.raw`-----BEGIN ((?:[A-Z0-9]{1,20} ){0,3})PRIVATE KEY( BLOCK)?-----(?:${PEM_BODY}?-----END \1PRIVATE KEY\2-----|(?:${PEM_LINE_BREAK}(?:[A-Za-z-]{1,20}: [^\r\n\\]{1,200}|)){0,8}(?:${PEM_LINE_BREAK}[A-Za-z0-9+/]{16,100}={0,2}(?![^\r\n\\]))+)`),
  },
  {
    id: 'aws-secret-access-key',
    description: 'AWS secret access keys on their assignment line',
    source: 'https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html',
    examples: { redacted: ['aws_secret_access_key = {b64:40}', 'export AWS_SECRET_ACCESS_KEY={b64:40}'], kept: ['aws_secret_access_key = ${AWS_SECRET}'] },
    keywords: ['secret_access_key', 'secretaccesskey', 'secret-access-key'],
    pattern: re(String.raw`(?:aws_?)?secret_?access_?key${SEP}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`, 'i'),
    group: 1,
  },
  {
    id: 'aws-session-token',
    description: 'AWS session tokens on their assignment line',
    source: 'https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html',
    examples: { redacted: ['aws_session_token = FwoGZXIvYXdzE{b64:300}'], kept: ['aws_session_token = short'] },
    keywords: ['session_token', 'sessiontoken', 'security_token'],
    pattern: re(String.raw`(?:aws_?)?(?:session|security)_?token${SEP}["']?([A-Za-z0-9/+]{100,4000}={0,2})(?![A-Za-z0-9/+=])`, 'i'),
    group: 1,
  },
  {
    id: 'azure-storage-key',
    description: 'Azure storage account keys in connection strings (AccountKey=)',
    source: 'https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string',
    examples: { redacted: ['DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={b64:86}==;EndpointSuffix=core.windows.net'], kept: ['AccountKey=short'] },
    keywords: ['accountkey='],
    pattern: re(String.raw`AccountKey=([A-Za-z0-9+/]{86}==)`, 'i'),
    group: 1,
  },
  {
    // SAS tokens: `…&sig=` + the URL-encoded base64 signature.
    id: 'azure-sas-signature',
    description: 'Azure shared access signatures (sig= of a SAS URL)',
    source: 'https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview',
    examples: { redacted: ['https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={alnum:43}%3D'], kept: ['https://example.com/?design=abc'] },
    keywords: ['sig='],
    pattern: re(String.raw`sig=(?<=[?&;]sig=)([A-Za-z0-9%+/]{30,200}={0,2})(?![A-Za-z0-9%+/=])`),
    group: 1,
  },
  {
    id: 'slack-webhook',
    description: 'Slack incoming-webhook URLs (the path after /services/)',
    source: 'gitleaks:slack-webhook-url',
    examples: { redacted: ['https://hooks.slack.com/services/T{uppernum:8}/B{uppernum:10}/{alnum:24}'], kept: ['https://hooks.slack.com/services/'] },
    keywords: ['hooks.slack.com'],
    pattern: re(String.raw`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{20,120})(?![A-Za-z0-9+/])`),
    group: 1,
  },
  {
    id: 'discord-webhook',
    description: 'Discord webhook URLs (the token after the id)',
    source: 'trufflehog:discordwebhook',
    examples: { redacted: ['https://discord.com/api/webhooks/{digits:18}/{b64url:68}'], kept: ['https://discord.com/api/webhooks/123/short'] },
    keywords: ['/api/webhooks/'],
    pattern: re(String.raw`discord(?:app)?\.com/api/webhooks/\d{15,22}/([A-Za-z0-9_-]{60,72})${R}`),
    group: 1,
  },
  {
    id: 'mailgun-key',
    description: 'Mailgun private API keys (key- + 32 hex), with the word "mailgun" in the text',
    source: 'gitleaks:mailgun-private-api-token',
    examples: { redacted: ['mailgun api key-{hex:32}'], kept: ['mailgun key-short'] },
    keywords: ['mailgun'],
    pattern: re(String.raw`key-[a-f0-9]{32}${R}`),
    boundary: 'strict',
  },
  {
    id: 'heroku-key',
    description: 'Heroku legacy API keys (a UUID under a heroku name)',
    source: 'gitleaks:heroku-api-key',
    examples: { redacted: ['HEROKU_API_KEY={uuid}'], kept: ['HEROKU_APP_ID={uuid}'] },
    keywords: ['heroku'],
    pattern: re(String.raw`heroku[A-Za-z0-9_.-]{0,20}(?:key|token|secret|password)${SEP}["']?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})${R}`, 'i'),
    group: 1,
  },
  {
    // `Authorization: Basic …`, `Token …`, `Bearer …` or a bare credential, in a header line,
    // a curl -H argument or a JSON-like text.
    id: 'authorization-header',
    description: 'Authorization / Proxy-Authorization header values (Basic, Bearer, Token, bare)',
    source: 'https://www.rfc-editor.org/rfc/rfc9110#name-authorization',
    examples: { redacted: ['Authorization: Basic {b64:28}', 'Authorization: token {hex:40}'], kept: ['Authorization: see RFC 7235', 'Authorization: Bearer ${TOKEN}'] },
    keywords: ['authorization'],
    boundary: 'glued',
    pattern: re(String.raw`(?:proxy-)?authorization${SEP}["']?(?:(?:basic|bearer|token|apikey|api-key)[ \t]{1,8})?([A-Za-z0-9._~+/-]{8,4000}=*)(?![A-Za-z0-9._~+/=-])`, 'i'),
    group: 1,
    // A word alone ("Authorization: Authorization") is not a credential: a digit or a symbol, or a
    // long mixed-case run (base64 of letters).
    accept: (secret) => /[A-Za-z]/.test(secret) && (/[^A-Za-z]/.test(secret) || (secret.length >= 16 && /[A-Z]/.test(secret) && /[a-z]/.test(secret))) &&
      !isPlaceholder(secret) && entropy(secret) >= 2.5,
  },
  {
    // "Bearer of good news", "Bearer authentication", a no-break space after Bearer: kept.
    id: 'bearer-token',
    description: 'Bearer tokens in free text',
    source: 'https://www.rfc-editor.org/rfc/rfc6750',
    examples: { redacted: ['curl -H "X: Bearer {alnum:40}"'], kept: ['Bearer tokens are described in RFC 6750.', 'Bearer abcdefghijklmnopqrstuvwxyz'] },
    keywords: ['bearer'],
    pattern: re(String.raw`\b[Bb]earer[ \t]{1,8}([A-Za-z0-9._~+/-]{16,4000}=*)(?![A-Za-z0-9._~+/=-])`),
    group: 1,
    accept: (secret) => /[^A-Za-z=]/.test(secret) && !/^[./]/.test(secret) && entropy(secret) >= 3,
  },
  {
    // The password runs to the LAST `@` of the authority (passwords hold `@`): redis://:PW@host.
    id: 'url-password',
    description: 'The password of scheme://user:PASSWORD@host, up to the last @ of the authority',
    source: 'https://www.rfc-editor.org/rfc/rfc3986#section-3.2.1',
    examples: { redacted: ['postgres://app:{alnum:16}@db.internal:5432/app'], kept: ['postgres://app@db:5432/app', 'https://example.com:8443/path?a=b@c'] },
    keywords: ['://'],
    // The scan starts at `://` (a scheme ends right before it).
    pattern: re(String.raw`://(?<=[A-Za-z0-9]://)[^\s:/?#@"'<>]{0,256}:([^\s/?#"'<>]{1,256})@(?=[A-Za-z0-9[])`),
    group: 1,
  },
  {
    id: 'curl-user',
    description: 'curl -u / --user user:PASSWORD',
    source: 'gitleaks:curl-auth-user',
    examples: { redacted: ['curl -u admin:{alnum:16} https://api.example.com'], kept: ['curl -u $USER:$PASS https://api.example.com', 'docker run -u 1000:1000 node:20'] },
    keywords: ['curl'],
    boundary: 'strict',
    pattern: re(String.raw`(?:-u|--user)(?:[ \t]{1,4}|=)(?:"[^":\r\n]{1,128}:([^"\r\n]{1,256})"|'[^':\r\n]{1,128}:([^'\r\n]{1,256})'|[^\s"':]{1,128}:([^\s"']{1,256}))`),
    group: [1, 2, 3],
    accept: (secret) => !/^\d+$/.test(secret) && !/^[<$]/.test(secret),
  },
  {
    // NAME = value, NAME: value, "NAME": "value", NAME => 'value', ;Password=value; ?password=value&.
    // The scan starts at a credential word; the engine hands the whole name (the run of name
    // characters around the word) to the check.
    id: 'generic-credential',
    description: 'NAME = value, NAME: value, "NAME": "value" and the like under a credential name (credentialKeys.ts)',
    source: 'gitleaks:generic-api-key',
    examples: { redacted: ['DB_PASSWORD={alnum:16}', 'VERCEL_TOKEN={alnum:24}', 'DD_APP_KEY={hex:40}'], kept: ['password: ${DB_PASSWORD}', 'secret_key = settings.SECRET_KEY', 'existingSecret: redis-credentials'] },
    keywords: GENERIC_WORDS,
    pattern: re(String.raw`(?:${GENERIC_WORDS.join('|')})[A-Za-z0-9_.-]{0,40}${SEP}${VALUE(BARE, 256)}`, 'i'),
    group: [1, 2, 3],
    nameBefore: 48,
    accept: (secret, name) => {
      const strength = credentialStrength(name);
      return strength !== undefined && looksLikeSecretValue(secret, strength, true);
    },
  },
];
