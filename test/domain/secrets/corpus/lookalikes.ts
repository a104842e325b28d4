import { createHash } from 'node:crypto';
import { expandExample, seededRandom } from '../../../../src/domain/secrets/rules/examples.js';
import type { PrecisionCase } from './precision.js';

/**
 * Precision corpus of issue 27: what the wider rules must leave alone, byte for byte. Labels
 * start with their class (`helm secret name: …`); `npm run secrets:report` counts false
 * positives per class. Random parts (hashes, images) come from a seeded generator.
 */
const next = seededRandom(0x1005e);
const x = (template: string) => expandExample(template, next);
const sha = (s: string, alg = 'sha256') => createHash(alg).update(s).digest('hex');
const b64 = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256))).toString('base64');

const cases: PrecisionCase[] = [];
const add = (cls: string, values: unknown[]) => {
  for (const v of values) cases.push([`${cls}: ${(typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 60)}`, v]);
};

add('helm secret name', [
  'existingSecret: redis-credentials', 'clientSecret: oauth2-proxy-client', 'tlsSecret: wildcard-example-tls',
  'auth:\n  existingSecret: postgres-auth\n  secretKeys:\n    adminPasswordKey: postgres-password',
  'ingress:\n  tls:\n    - secretName: grafana-tls\n      hosts: [grafana.example.com]', 'existingSecretPasswordKey: password',
  'envFrom:\n  - secretRef:\n      name: app-secrets', 'valueFrom:\n  secretKeyRef:\n    name: db\n    key: password',
  'imagePullSecrets:\n  - name: regcred', 'serviceAccount:\n  secretName: sa-token-abc12', 'jwtSecret: jwt-signing-secret',
  'clientSecret: keycloak-client-secret', 'clientSecretName: oidc-client', 'secret:\n  name: harbor-core\n  key: secret',
  { existingSecret: 'redis-credentials' }, { clientSecret: 'oauth2-proxy-client' }, { tlsSecret: 'wildcard-example-tls' },
  { auth: { existingSecret: 'mongodb-auth', rootPassword: '' } }, { secretName: 'db-creds-v2' }, { secretKeyRef: { name: 'api', key: 'token' } },
]);

add('git key id', [
  '[user]\n\tname = Ann\n\temail = ann@example.com\n\tsigningkey = 3AA5C34371567BD2', 'git config --global user.signingkey 3AA5C34371567BD2',
  'signingkey = ~/.ssh/id_ed25519.pub', '[gpg]\n\tformat = ssh', 'git config user.signingKey 0x4AEE18F83AFDEB23',
  { signing_key: 'kid-2024-01' }, { signingKey: '4AEE18F83AFDEB23' }, { signing_key: '9A8C0F3E' }, 'GPG_KEY=3AA5C34371567BD2',
  'gpg --recv-keys 4AEE18F83AFDEB23', 'KEY_ID=5F1B0D27', { key_id: 'kid-2024-01' },
]);

add('word-like member value', [
  { auth: 'ldap' }, { pass: 'mem2reg' }, { cookie: 'accepted' }, { signing_key: 'kid-2024-01' }, { api_key: 'ANTHROPIC_API_KEY' },
  { apiKey: 'env:OPENAI_API_KEY' }, { auth: 'saml' }, { auth: 'LDAP' }, { pass: 'inline' }, { pass: 'licm' }, { pass: 'loop-unroll' },
  { cookie: 'rejected' }, { cookie: 'essential' }, { secret: 'db-password' }, { client_secret: 'google-oauth' }, { auth: 'kerberos-v5' },
  { auth: 'iam' }, { auth: 'github' }, { secret: 'mysql-root' }, { auth: 'password' }, { pass: 'constprop' }, { pass: 'sroa' },
  { cookie: 'session_id' }, { api_key: 'OPENAI_API_KEY' }, { token: 'GITHUB_TOKEN' }, { password: 'DB_PASSWORD' },
  { secret: 'app-secret' }, { signingKey: 'prod-2025-q1' }, { auth: 'none' }, { auth: 'aws-iam' },
]);

const REFS = [
  'op://prod/stripe/api-key', 'op://Private/GitHub/token', 'vault:secret/data/app#password', 'ref+vault://secret/data/app#/password',
  'ref+awssecrets://prod/db#/password', 'ref+gcpsecrets://my-project/db-pass', 'os.environ/OPENAI_API_KEY', 'file:/run/secrets/db_password',
  'sm://my-project/openai-key', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf',
  'arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api-key', 'projects/my-project/secrets/db-pass/versions/latest',
  '@Microsoft.KeyVault(SecretUri=https://kv1.vault.azure.net/secrets/db/)', 'https://kv1.vault.azure.net/secrets/api-key',
  '$__file{/etc/secrets/grafana}', 'env:GITHUB_TOKEN', '{{resolve:secretsmanager:prod/db:SecretString:password}}',
  'awssm://prod/db', 'gsm://projects/p/secrets/s', 'akv://kv1/api-key', 'doppler://project/config/API_KEY', 'sops:enc/app.yaml',
];
add('secret reference', [
  ...REFS.map((r) => `OPENAI_API_KEY=${r}`), ...REFS.map((r) => ({ api_key: r })), ...REFS.slice(0, 10).map((r) => `password: ${r}`),
  ...REFS.slice(0, 8).map((r) => ({ password: r })), 'model_list:\n  - litellm_params:\n      api_key: os.environ/AZURE_API_KEY',
  'token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256', 'DB_PASSWORD_FILE=/run/secrets/db_password',
]);

add('name pattern, not a secret', [
  'PASSWORD_RESET_TIMEOUT=3600', 'TOKEN_TTL=3600s', 'CACHE_KEY=user:42', 'S3_KEY=uploads/2024/a1b2c3.png', 'OBJECT_KEY=reports/2024-06-01/summary.csv',
  `PUBLIC_KEY=ssh-ed25519 ${b64(51).replace(/=+$/, '')} ann@host`, 'NEXT_PUBLIC_SITE_KEY=6LcXy2kqAAAAAB1234example', 'STRIPE_PUBLISHABLE_KEY=pk_live_51HxYzPublishable',
  `idempotency_key: ${x('{uuid}')}`, 'sort_key: created_at', 'primary_key: user_id', 'partition_key = "tenant#42"', 'i18n_key: home.title2',
  { i18n_key: 'home.title2' }, { translation_key: 'errors.auth.invalid2' }, { next_page_token: 'CiAKGjBpNDd2Nmp2Zml2cXRjZ3ZmZXhoMDcxOTAzEgA' },
  { nextPageToken: 'EAAaBgoEVG9rZW4' }, { continuation_token: 'eyJvZmZzZXQiOjEwMH0' }, { sync_token: 'CPDAlvWDx70CEPDAlvWDx70CGAU' },
  { cursor_key: 'c2', page_token: '3' }, { publicKey: `ssh-rsa ${b64(90)}` }, { cacheKey: 'v2:user:1234:profile' },
  { routing_key: 'orders.created.v2' }, { message_key: 'welcome_email_2' }, { hotkey: 'ctrl+shift+k' }, { group_key: 'team-42' },
  'TOKEN_URL=https://auth.example.com/oauth2/token', 'SECRET_NAME=prod/db/password', 'PASSWORD_MIN_LENGTH=12', 'PASSWORD_HASHERS=argon2,bcrypt2',
  'APP_KEY_PATH=/etc/app/key.pem', 'LICENSE_KEY_FILE=./license.lic', 'TOKEN_ENDPOINT=/v1/oauth/token', { ssh_key: '~/.ssh/id_ed25519' },
  { tokenType: 'Bearer', expiresIn: 3600 }, { secretVersion: 'v3' }, { secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x-Ab12Cd' },
  'API_KEY_HEADER=X-Api-Key', 'AUTH_TOKEN_HEADER=X-Auth-Token', 'JWT_SECRET_PATH=/vault/secrets/jwt', 'RECAPTCHA_SITE_KEY=6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI',
]);

add('code', [
  'token = var.token', 'password = var.db_password', 'api_key = data.vault_generic_secret.app.data["api_key"]',
  'secret_key = os.environ.get("SECRET_KEY")', 'self.api_key = api_key', 'const { apiKey } = config;', 'let token = req.headers.authorization;',
  'if token == "" { return ErrNoToken }', 'password := os.Getenv("DB_PASSWORD")', 'String password = System.getenv("DB_PASSWORD");',
  'def get_token(self) -> str:\n    return self._token', 'token_bucket.consume(1)', 'keyring.get_password("svc", "user")',
  'export AWS_PROFILE=dev', 'ENV NODE_ENV=production', 'ARG NPM_TOKEN\nRUN --mount=type=secret,id=npm npm ci',
  '- name: Login\n  uses: docker/login-action@v3\n  with:\n    password: ${{ secrets.DOCKERHUB_TOKEN }}',
  'env:\n  GH_TOKEN: ${{ github.token }}', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: ${DB_PASSWORD}',
  'resource "random_password" "db" {\n  length = 24\n}', 'password = random_password.db.result', 'token: "{{ lookup(\'env\', \'TOKEN\') }}"',
  'secretKeyRef:\n  key: password', 'assert secrets.compare_digest(token, expected)', 'return jwt.encode(payload, SECRET_KEY, algorithm="HS256")',
  'authToken: string | undefined;', 'private readonly apiKey: string;', 'passphrase?: string', 'const licenseKey = process.env.LICENSE_KEY ?? "";',
  'userPassword: Yup.string().min(12)', 'new_password_confirmation: ""', 'token_type_hint=refresh_token', 'grant_type=client_credentials&scope=read',
]);

add('command line', [
  'docker login -u me --password-stdin < pw.txt', 'gh auth login --with-token < token.txt', 'vault login -method=oidc', 'mysql -u root -p app',
  'ssh -p 2222 deploy@host', 'docker run -p 8080:80 -e TOKEN nginx', 'kubectl create secret generic db --from-file=./password.txt',
  'gpg --batch --passphrase-file pw.txt -d x.gpg', 'helm install x ./chart --set auth.existingSecret=redis-credentials', 'terraform apply -var-file=secrets.tfvars',
  'aws secretsmanager get-secret-value --secret-id prod/db', 'curl --oauth2-bearer "$TOKEN" https://api.example.com', 'npm publish --otp 123456',
  'sshpass -f pw.txt ssh host', 'redis-cli -h cache ping', 'openssl rsa -in k.pem -passin env:KEY_PASS', 'keytool -list -storepass:env STOREPASS',
  'git clone --token-file ./tok https://example.com/x.git', 'cargo login --registry crates-io < token', 'op read "op://prod/db/password"',
  'az login --service-principal -u $APP_ID -p $PASSWORD --tenant $TENANT', 'docker login -u ci -p "$CI_REGISTRY_PASSWORD" $CI_REGISTRY',
  'mysql -uroot -p"$MYSQL_ROOT_PASSWORD" -e "select 1"', 'psql "host=db user=app password=$PGPASSWORD"', '--api-key-env OPENAI_API_KEY',
  'login as admin, then change the password in settings', 'machine github.com login ann password $GITHUB_TOKEN',
]);

add('xml', [
  '<password>${env.MAVEN_PASSWORD}</password>', '<b>Password</b>', '<token>none</token>', '<add key="Version" value="1.2.3" />',
  '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />', '<secret>db-password</secret>', '<label for="password">Password</label>',
  '<input type="password" name="password" autocomplete="current-password">', '<apiKey>${API_KEY}</apiKey>', '<username>deploy</username>',
]);

// Hashes, ids and digests: git SHAs, UUIDs, lockfile integrity and checksums, image digests.
const shas = Array.from({ length: 8 }, (_, i) => sha(`commit ${i}`, 'sha1'));
add('hash', [
  ...shas.map((s) => `commit ${s}`), ...shas.slice(0, 4).map((s) => `git checkout ${s.slice(0, 12)}`),
  ...Array.from({ length: 6 }, () => x('{uuid}')), ...Array.from({ length: 4 }, () => x('request {uuid} failed')),
  ...Array.from({ length: 6 }, (_, i) => `"integrity": "sha512-${createHash('sha512').update(`pkg${i}`).digest('base64')}"`),
  ...Array.from({ length: 4 }, (_, i) => `checksum = "${sha(`crate${i}`)}"`),
  ...Array.from({ length: 4 }, (_, i) => `golang.org/x/mod v0.${i}.0 h1:${createHash('sha256').update(`mod${i}`).digest('base64')}`),
  ...Array.from({ length: 4 }, (_, i) => `FROM node:20@sha256:${sha(`image${i}`)}`),
  ...Array.from({ length: 3 }, (_, i) => `requests==2.31.${i} --hash=sha256:${sha(`wheel${i}`)}`),
  { resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz', integrity: `sha512-${createHash('sha512').update('lp').digest('base64')}` },
  { etag: `"${sha('etag', 'md5')}"`, digest: `sha256:${sha('d')}` }, `md5sum: ${sha('file', 'md5')}  file.tar.gz`,
]);

// Base64 images: a real PNG / JPEG / GIF header, then random bytes.
const image = (hex: string, n: number) => Buffer.concat([Buffer.from(hex, 'hex'), Buffer.from(b64(n), 'base64')]).toString('base64');
add('base64 image', [
  `data:image/png;base64,${image('89504e470d0a1a0a0000000d49484452', 6000)}`, `data:image/jpeg;base64,${image('ffd8ffe000104a464946', 9000)}`,
  `data:image/gif;base64,${image('474946383961', 3000)}`, `![chart](data:image/png;base64,${image('89504e470d0a1a0a', 2000)})`,
  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image('89504e470d0a1a0a', 12000) } },
  { type: 'image_url', image_url: { url: `data:image/webp;base64,${image('52494646', 4000)}` } },
  `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>').toString('base64')}`,
]);

add('url', [
  'https://github.com/org/repo/blob/e83c5163316f89bfbde7d9ab23ca2e25604af290/src/index.ts#L10', 'https://example.com/reset?token=abc',
  'https://accounts.google.com/o/oauth2/v2/auth?client_id=123.apps.googleusercontent.com&response_type=code&scope=openid',
  'https://example.com/callback?code=4%2F0AfJohXk&state=xyz', 'https://docs.example.com/api-keys#rotate', 'https://app.example.com/settings/tokens/new',
  'https://cdn.example.com/assets/app.3f9a2b1c.js', 'wss://stream.example.com/v1/events?since=2024-06-01T00:00:00Z', 'postgres://app@db:5432/app?sslmode=require',
  'https://user@example.com/path', 'https://example.com/@ann/post-42', 'https://pypi.org/project/requests/2.31.0/',
  'https://hooks.example.com/webhook/health', 'https://api.example.com/v1/keys?page=2&per_page=50', 'https://example.com/a/b/c?x=1&y=2#frag',
]);

add('ordinary config', [
  '[tool.poetry]\nname = "app"\nversion = "0.1.0"', 'server:\n  port: 8080\n  host: 0.0.0.0', 'log_level = "info"\nworkers = 4',
  'ENABLE_AUTH=true\nAUTH_PROVIDER=github', 'session:\n  cookie_name: sid\n  cookie_secure: true', 'keys:\n  - id: k1\n    alg: RS256',
  'jwks_uri: https://auth.example.com/.well-known/jwks.json', 'auth_method: token', 'credentials_file: ~/.aws/credentials', 'password_policy:\n  min_length: 12',
]);

export const LOOKALIKES: PrecisionCase[] = cases;
