import { B64, B64URL, faker, HEX } from './fakes.js';
import { LOOKALIKES } from './lookalikes.js';

/**
 * False-positive corpus (issue 13 section 3): values that name credentials, or look like them,
 * but hold none. Each must be stored byte-exact. [label, value]: a value is a string (free text,
 * as in message content) or a JSON value (a record payload, tool-call arguments).
 */
export type PrecisionCase = [string, unknown];

const f = faker(0xf00d);

const PROSE: string[] = [
  'Token counting/estimation', 'Bearer authentication', 'Token /home/user/.config/app/tokens.json', 'Token t = tokenizer.nextToken();',
  'He was the Bearer of good news, and bearer of the ring.', 'Bearer tokens are described in RFC 6750.',
  'The password must be at least 12 characters long.', 'Set the API key in your environment before running.',
  'Use a secret manager instead of hard-coding credentials.', 'The token limit for this model is 200k.',
  'Rotate your access keys every 90 days.', 'Passwordless login is enabled for this workspace.',
  'pip install scikit-learn  # the sk-learn package', 'a risk-free desk-top ask-me-anything', 'npm run task-runner',
  'git log --oneline e83c516', 'commit e83c5163316f89bfbde7d9ab23ca2e25604af290', 'user@example.com wrote:',
  'git@github.com:org/repo.git', 'ssh://git@github.com/org/repo', 'http://localhost:3000/api', 'https://example.com:8443/path?a=b@c',
  'https://user@example.com/path', 'mailto:ops@example.com', 'See https://docs.example.com/auth#tokens for details.',
  'the ghp_ prefix marks GitHub tokens', 'Keys start with sk-ant- or sk-proj-.', 'AKIA marks a long-lived AWS key id.',
  'The Token of appreciation', 'secret sauce recipe', 'The authorization server issues codes.', 'Basic authentication sends base64.',
  'Token: the smallest unit the model reads.', 'Press the key: Enter', 'keyboard: qwerty', 'The key is: use smaller batches.',
  'password reset link sent', 'Your session token expired; log in again.', 'credentials: see the vault', 'Authorization: see RFC 7235',
  'Authorization: Bearer ${TOKEN}', 'Authorization: Bearer <token>', 'Authorization: Bearer YOUR_TOKEN', 'Authorization: Basic <base64>',
  'Bearer abcdefghijklmnopqrstuvwxyz', 'Bearer\u00a0abcdef0123456789abcdef', 'curl -u $USER:$PASS https://api.example.com',
  'curl -u "$USER:$TOKEN" https://api.example.com', 'docker run -u 1000:1000 node:20', 'sort -u names.txt', 'git push -u origin main',
  '550e8400-e29b-41d4-a716-446655440000', 'F47AC10B-58CC-4372-A567-0E02B2C3D479', 'sha256:' + 'a'.repeat(64),
  'sha512-' + 'Q'.repeat(86) + '==', 'v1.2.3-rc.4+build.5', 'ISBN 978-3-16-148410-0', '+1 (555) 010-9999',
  'The quick brown fox jumps over the lazy dog.', 'risk-assessment-2024-final-review-v2', 'mask-rcnn-resnet50-fpn-coco',
  'task-proj-deadline-2024-planning-document-v2-final-review', 'desk-proj-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2',
  'The Discord server is at discord.gg/example.', 'Telegram: @example_bot', 'Mailgun sends our mail.', 'Heroku dyno restarted.',
  'New Relic shows p99 at 120 ms.', 'Grafana dashboard: latency', 'Supabase project created', 'Pinecone index ready',
];

const CODE: string[] = [
  'interface Login { user: string; password: string; }', 'def login(self, password: str) -> bool:', 'const token = await getToken();',
  'password = getpass.getpass()', "if (password === '') return;", 'api_key = os.environ["OPENAI_API_KEY"]',
  'token: ${{ secrets.GITHUB_TOKEN }}', 'password: ${DB_PASSWORD}', 'PASSWORD=changeme', 'secret_key = settings.SECRET_KEY',
  'auth: none', 'password: ""', "password: ''", 'password: null', 'password: true', 'api_key: <your-api-key>', 'token: xxx',
  'token: "***"', 'PASSWORD=$DB_PASSWORD', 'password=%DB_PASSWORD%', 'api_key={{ api_key }}', 'pwd: /home/user/project',
  'PWD=/home/user/project', 'auth_type=oauth2', 'authentication: bearer', 'credentials: default', 'credential_source = Environment',
  'token = tokenizer.encode(text)', 'Token t = tokenizer.nextToken();', 'max_tokens=4096', 'token_count: 1234', 'input_tokens = 12',
  'secret_name: my-secret', 'secretName: db-creds', 'passphrase: <your passphrase>', 'primary_key=True', 'sort_key: created_at',
  'cache_key = f"user:{user_id}"', 'key: value', "key: 'Enter'", 'password_hash = bcrypt.hashpw(pw, salt)', 'self.password = password',
  'password = config.db.password', 'token = request.headers.get("Authorization")', 'const apiKey = process.env.OPENAI_API_KEY;',
  'secret = Secret(name="db")', 'passwordField.setText("")', 'if (pem.startsWith("-----BEGIN PRIVATE KEY-----")) {',
  'const header = "-----BEGIN RSA PRIVATE KEY-----\\n" + body;', '-----BEGIN PRIVATE KEY-----\nconst x = 1;\nreturn x;',
  "const BEGIN = '-----BEGIN EC PRIVATE KEY-----';\nfunction parse(pem) {\n  return pem.split('\\n');\n}",
  'match = re.match(r"-----BEGIN (\\w+) PRIVATE KEY-----", text)', 'ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519',
  `-----BEGIN PUBLIC KEY-----\n${f.bytes(48).toString('base64')}\n-----END PUBLIC KEY-----`,
  `-----BEGIN CERTIFICATE-----\n${f.bytes(48).toString('base64')}\n-----END CERTIFICATE-----`,
  'export PATH=$HOME/bin:$PATH', 'KEY_FILE=/etc/ssl/private/server.key', 'SSL_KEY_PATH=./certs/key.pem', 'auth_url: https://auth.example.com/oauth/token',
  'token_url = "https://oauth2.googleapis.com/token"', 'TOKEN_ENDPOINT=https://login.example.com/token', 'cookie_name = "session"',
  'SESSION_COOKIE_SECURE=True', 'cookie.sameSite = "Lax"', 'password_min_length: 12', 'PASSWORD_RESET_TIMEOUT=3600', 'token_ttl: 3600s',
  'secret: false', 'pass: true', 'pass', 'pwd', 'key=', 'password=', 'token=', 'api_key = None', 'api_key = nil', 'secret: ~',
  'SELECT password FROM users WHERE id = 1', "UPDATE users SET password = ? WHERE id = ?", 'password: !vault |',
  'jdbc:mysql://db:3306/app?user=app&useSSL=true', 'Server=tcp:db,1433;Database=app;Integrated Security=true',
  'redis://cache:6379/0', 'postgres://app@db:5432/app', 'mongodb://db1,db2/app?replicaSet=rs0',
];

const JSON_VALUES: Array<[string, unknown]> = [
  ['login tool schema', { name: 'login', input_schema: { type: 'object', properties: { username: { type: 'string' }, password: { type: 'string', description: 'The user password' } }, required: ['username', 'password'] } }],
  ['OpenAI function schema', { type: 'function', function: { name: 'set_token', parameters: { type: 'object', properties: { token: { type: 'string', description: 'API token' }, api_key: { type: 'string', minLength: 20 } } } } }],
  ['auth object', { auth: { type: 'oauth2', flow: 'pkce' } }],
  ['auth none', { auth: 'none' }],
  ['auth basic scheme name', { auth: 'basic' }],
  ['auth oauth2 scheme name', { auth: 'oauth2' }],
  ['empty password', { password: '' }],
  ['placeholder password', { password: '<redacted>' }],
  ['placeholder rule', { token: '<redacted:github-token>' }],
  ['asterisks', { password: '********' }],
  ['xxx', { api_key: 'xxx' }],
  ['XXXX', { api_key: 'XXXXXXXX' }],
  ['changeme', { password: 'changeme' }],
  ['your key', { api_key: 'your-api-key' }],
  ['YOUR_API_KEY', { api_key: 'YOUR_API_KEY' }],
  ['template', { password: '${DB_PASSWORD}' }],
  ['env var', { api_key: '$OPENAI_API_KEY' }],
  ['handlebars', { token: '{{ secrets.GITHUB_TOKEN }}' }],
  ['boolean password', { password: true }],
  ['null password', { password: null }],
  ['number password', { password: 3141592653 }],
  ['cookie attributes', { cookie: { sameSite: 'Lax', secure: true, httpOnly: true, path: '/' } }],
  ['secret reference', { secret: { secretName: 'db-creds', key: 'password' } }],
  ['k8s secretKeyRef', { env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] }],
  ['OpenAPI securitySchemes', { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } } }],
  ['fetch credentials', { credentials: 'include', mode: 'cors' }],
  ['credentials same-origin', { credentials: 'same-origin' }],
  ['pwd as directory', { env: { PWD: '/home/user/project', HOME: '/home/user' } }],
  ['LLM token', { token: ' world', logprob: -0.12, bytes: [32, 119] }],
  ['LLM token Hello', { token: 'Hello' }],
  ['LLM special token', { token: '<|endoftext|>' }],
  ['tokens list', { tokens: ['Hel', 'lo'] }],
  ['usage', { usage: { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 789, max_tokens: 4096, token_count: 12 } }],
  ['usage strings', { input_tokens: '1234', max_tokens: '4096' }],
  ['ids', { id: 'toolu_01A09q90qw90lq917835lq9', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy', trace_id: `sk-${f.pick(40)}` }],
  ['thinking signature', { type: 'thinking', thinking: 'Let me think.', signature: f.bytes(300).toString('base64') }],
  ['encrypted_content', { type: 'reasoning', id: 'rs_1', encrypted_content: f.bytes(2000).toString('base64') }],
  ['hub signature', { 'x-hub-signature-256': `sha256=${f.pick(64, HEX)}` }],
  ['member names that only look like credentials', { tokenizer: 'cl100k_base', author: 'Ann', authority: 'x', next_page_token: 'abc', secretary: 'Bob', passwordless: 'enabled', keyboard: 'qwerty', api_version: '2024-06-01' }],
  ['secret false', { secret: false }],
  ['passphrase empty', { passphrase: '' }],
  ['cookie empty list', { cookie: [] }],
  ['auth scheme list', { auth: ['bearer', 'basic'] }],
  ['password policy', { password: { minLength: 12, requireDigit: true } }],
  ['token object', { token: { type: 'bearer', expires_in: 3600 } }],
  ['credentials object', { credentials: { type: 'service_account', project: 'demo' } }],
  ['api_key schema in arguments', JSON.stringify({ api_key: { type: 'string' }, query: 'weather' })],
  ['access_key flag', { access_key: false }],
  ['connectionString template', { connectionString: '${DATABASE_URL}' }],
  ['signing_key path', { signing_key: '/etc/keys/signing.pem' }],
  ['encryption_key placeholder', { encryption_key: '<generated>' }],
  ['bot_token placeholder', { bot_token: 'YOUR_BOT_TOKEN' }],
  ['AccessKeyId placeholder', { AccessKeyId: '<your-access-key-id>' }],
];

/** Random base64 / base64url / hex strings (provider ciphertexts), 1 KB to 64 KB, stored as values. */
const RANDOM: Array<[string, unknown]> = [];
for (let i = 0; i < 30; i++) {
  const n = 1024 * (1 + (i % 8) * 8);
  const alphabet = [B64, B64URL, HEX][i % 3]!;
  RANDOM.push([`random ${['base64', 'base64url', 'hex'][i % 3]} ${n}`, f.pick(n, alphabet)]);
}

export const PRECISION: PrecisionCase[] = [
  ...PROSE.map((s) => [`prose: ${s.slice(0, 60)}`, s] as PrecisionCase),
  ...CODE.map((s) => [`code: ${s.slice(0, 60)}`, s] as PrecisionCase),
  ...JSON_VALUES,
  // The same texts inside tool-call arguments and tool results.
  ...CODE.slice(0, 30).map((s) => [`tool arguments: ${s.slice(0, 50)}`, JSON.stringify({ command: s })] as PrecisionCase),
  ...PROSE.slice(0, 20).map((s) => [`tool result: ${s.slice(0, 50)}`, { role: 'tool', content: [{ type: 'text', text: s }] }] as PrecisionCase),
  ...RANDOM,
  // Issue 27: secret names and references, word-like values, key ids, name patterns, hashes, images, URLs.
  ...LOOKALIKES,
];
