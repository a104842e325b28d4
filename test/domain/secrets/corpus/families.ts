import { ALNUM, B64, B64URL, DIGITS, faker, HEX, LETTERS, UPPER_NUM } from './fakes.js';
import { PASTED_FAMILIES } from './pasted.js';

/**
 * True positives: one realistic fake credential per family, in the text it is usually pasted
 * with. `secret` occurs once in `text`; redaction must turn `text` into `text` with `secret`
 * replaced by `<redacted:rule>` and nothing else changed.
 */
export interface Family {
  family: string;
  rule: string;
  text: string;
  secret: string;
}

const f = faker(0x13c0de);
const { pick } = f;
const b64 = (n: number) => f.bytes(n).toString('base64');
const b64url = (n: number) => f.bytes(n).toString('base64url');

/** [family, rule, secret, text with `$` where the secret stands]. */
type Row = [string, string, string, string];

function jwt(): string {
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify({ sub: pick(10, DIGITS), role: 'service_role', iat: 1700000000 })).toString('base64url');
  return `${h}.${p}.${b64url(32)}`;
}

const pemBody = () => Array.from({ length: 6 }, () => b64(48)).join('\n');

const ROWS: Row[] = [
  // LLM providers
  ['Anthropic API key', 'anthropic-key', `sk-ant-api03-${pick(93, B64URL.replace('-', ''))}AA`, 'export ANTHROPIC_API_KEY=$'],
  ['Anthropic admin key', 'anthropic-key', `sk-ant-admin01-${pick(93, ALNUM)}AA`, 'admin key: $'],
  ['OpenRouter key', 'openrouter-key', `sk-or-v1-${pick(64, HEX)}`, 'OPENROUTER_API_KEY="$"'],
  ['OpenAI project key', 'openai-key', `sk-proj-${pick(74, ALNUM)}T3BlbkFJ${pick(74, ALNUM)}`, 'client = OpenAI(api_key="$")'],
  ['OpenAI service-account key', 'openai-key', `sk-svcacct-${pick(74, ALNUM)}T3BlbkFJ${pick(74, ALNUM)}`, 'key $ rotated'],
  ['OpenAI admin key', 'openai-key', `sk-admin-${pick(58, ALNUM)}T3BlbkFJ${pick(58, ALNUM)}`, 'Admin: $'],
  ['OpenAI legacy key', 'openai-key', `sk-${pick(20)}T3BlbkFJ${pick(20)}`, 'openai.api_key = "$"'],
  ['Groq key', 'groq-key', `gsk_${pick(52)}`, 'GROQ_API_KEY=$'],
  ['xAI key', 'xai-key', `xai-${pick(80)}`, 'XAI_API_KEY=$'],
  ['Perplexity key', 'perplexity-key', `pplx-${pick(48)}`, 'pplx key: $'],
  ['Replicate token', 'replicate-token', `r8_${pick(37)}`, 'REPLICATE_API_TOKEN=$'],
  ['LangSmith key', 'langsmith-key', `lsv2_pt_${pick(32, HEX)}_${pick(10, HEX)}`, 'LANGSMITH_API_KEY=$'],
  ['Pinecone key', 'pinecone-key', `pcsk_${pick(6)}_${pick(63)}`, 'pc = Pinecone(api_key="$")'],
  ['Supabase access token', 'supabase-key', `sbp_${pick(40, HEX)}`, 'supabase login --token $'],
  ['Supabase secret key', 'supabase-key', `sb_secret_${pick(31, ALNUM)}`, 'SUPABASE_SECRET_KEY=$'],
  ['Hugging Face token', 'huggingface-token', `hf_${pick(34, LETTERS)}`, 'huggingface-cli login --token $'],
  ['Hugging Face org token', 'huggingface-token', `api_org_${pick(34, LETTERS)}`, 'org token $'],
  // code hosting, registries
  ['GitHub PAT', 'github-token', `ghp_${pick(36)}`, 'git clone https://github.com/org/repo # with $'],
  ['GitHub fine-grained PAT', 'github-token', `github_pat_11${pick(20, UPPER_NUM)}_${pick(59)}`, 'GH_TOKEN=$'],
  ['GitLab PAT', 'gitlab-token', `glpat-${pick(20, ALNUM)}`, 'PRIVATE-TOKEN: $'],
  ['GitLab pipeline trigger token', 'gitlab-token', `glptt-${pick(40, HEX)}`, 'curl -X POST -F token=$ -F ref=main https://gitlab.example.com/api/v4/projects/1/trigger/pipeline'],
  ['GitLab deploy token', 'gitlab-token', `gldt-${pick(20, ALNUM)}`, 'deploy token $'],
  ['GitLab runner token', 'gitlab-token', `glrt-${pick(20, ALNUM)}`, 'gitlab-runner register --token $'],
  ['GitLab runner registration token', 'gitlab-token', `GR1348941${pick(20, ALNUM)}`, 'registration token $'],
  ['npm token', 'npm-token', `npm_${pick(36)}`, '//registry.npmjs.org/:_authToken=$'],
  ['PyPI token', 'pypi-token', `pypi-AgEIcHlwaS5vcmc${pick(70, ALNUM)}`, 'TWINE_PASSWORD=$'],
  ['Docker Hub PAT', 'dockerhub-pat', `dckr_pat_${pick(27, ALNUM)}`, 'echo $ | docker login -u me --password-stdin'],
  // clouds
  ['AWS access key id', 'aws-access-key-id', `AKIA${pick(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, 'aws_access_key_id = $'],
  ['AWS temporary access key id', 'aws-access-key-id', `ASIA${pick(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, '"AccessKeyId": "$",'],
  ['AWS secret access key', 'aws-secret-access-key', pick(40, B64), '[default]\naws_secret_access_key = $\nregion = eu-west-1'],
  ['AWS secret access key (env)', 'aws-secret-access-key', pick(40, B64), 'export AWS_SECRET_ACCESS_KEY=$'],
  ['AWS session token', 'aws-session-token', `FwoGZXIvYXdzE${pick(300, B64)}`, 'aws_session_token = $'],
  ['Google API key', 'google-api-key', `AIza${pick(35, B64URL)}`, 'https://maps.googleapis.com/maps/api/js?key=$'],
  ['Google OAuth client secret', 'google-oauth-secret', `GOCSPX-${pick(28, ALNUM)}`, '"client_secret_x": "$"'],
  ['Google OAuth access token', 'google-oauth-token', `ya29.${pick(150, B64URL)}`, 'access token $ expires in 3599'],
  ['Azure AD client secret', 'azure-client-secret', `${pick(3)}8Q~${pick(34, `${ALNUM}_.~`)}`, 'AZURE_CLIENT_SECRET_VALUE $'],
  ['Azure storage account key', 'azure-storage-key', b64(64), 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=$;EndpointSuffix=core.windows.net'],
  ['Azure SAS signature', 'azure-sas-signature', encodeURIComponent(b64(32)), 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=$'],
  ['DigitalOcean PAT', 'digitalocean-token', `dop_v1_${pick(64, HEX)}`, 'doctl auth init -t $'],
  ['Vault token', 'vault-token', `hvs.${pick(95, ALNUM)}`, 'VAULT_TOKEN=$ vault kv get secret/app'],
  ['Databricks token', 'databricks-token', `dapi${pick(32, HEX)}`, 'DATABRICKS_HOST=https://x.cloud.databricks.com DATABRICKS_TOKEN_X $'],
  ['Doppler token', 'doppler-token', `dp.pt.${pick(43)}`, 'doppler configure set token $'],
  ['Fly.io token', 'flyio-token', `fo1_${pick(43, ALNUM)}`, 'FLY_API_TOKEN_X $'],
  ['Heroku API key', 'heroku-key', `HRKU-AA${pick(58, ALNUM)}`, 'heroku key $'],
  ['Heroku legacy API key', 'heroku-key', `${pick(8, HEX)}-${pick(4, HEX)}-${pick(4, HEX)}-${pick(4, HEX)}-${pick(12, HEX)}`, 'HEROKU_API_KEY=$'],
  // SaaS
  ['Slack bot token', 'slack-token', `xoxb-${pick(12, DIGITS)}-${pick(13, DIGITS)}-${pick(24)}`, 'SLACK_BOT_TOKEN=$'],
  ['Slack user token', 'slack-token', `xoxp-${pick(12, DIGITS)}-${pick(12, DIGITS)}-${pick(13, DIGITS)}-${pick(32, HEX)}`, 'user token: $'],
  ['Slack app token', 'slack-token', `xapp-1-A${pick(10, UPPER_NUM)}-${pick(13, DIGITS)}-${pick(64, HEX)}`, 'SLACK_APP_TOKEN=$'],
  ['Slack webhook', 'slack-webhook', `T${pick(8, UPPER_NUM)}/B${pick(10, UPPER_NUM)}/${pick(24)}`, 'curl -X POST https://hooks.slack.com/services/$ -d @msg.json'],
  ['Stripe live key', 'stripe-key', `sk_live_${pick(99)}`, 'Stripe.api_key = "$"'],
  ['Stripe restricted key', 'stripe-key', `rk_live_${pick(99)}`, 'restricted $'],
  ['Stripe webhook secret', 'stripe-webhook-secret', `whsec_${pick(32)}`, 'STRIPE_WEBHOOK_SIGNING $'],
  ['SendGrid key', 'sendgrid-key', `SG.${pick(22, B64URL)}.${pick(43, B64URL)}`, 'SENDGRID $'],
  ['Twilio API key', 'twilio-key', `SK${pick(32, HEX)}`, 'TWILIO_API_KEY_SID $'],
  ['Mailgun key', 'mailgun-key', `key-${pick(32, HEX)}`, 'mailgun: auth=("api", "$")'],
  ['Discord bot token', 'discord-token', `M${pick(25)}.${pick(6, B64URL)}.${pick(38, B64URL)}`, 'discord client.run("$")'],
  ['Discord webhook', 'discord-webhook', pick(68, ALNUM), 'https://discord.com/api/webhooks/123456789012345678/$'],
  ['Telegram bot token', 'telegram-bot-token', `AA${pick(33, B64URL)}`, 'https://api.telegram.org/bot1234567890:$/getMe'],
  ['Shopify access token', 'shopify-token', `shpat_${pick(32, HEX)}`, 'X-Shopify-Access-Token-X $'],
  ['Linear key', 'linear-key', `lin_api_${pick(40)}`, 'LINEAR_API_KEY=$'],
  ['Postman key', 'postman-key', `PMAK-${pick(24, HEX)}-${pick(34, HEX)}`, 'postman $'],
  ['Grafana cloud token', 'grafana-token', `glc_${pick(60, ALNUM)}`, 'GRAFANA_CLOUD $'],
  ['Grafana service account token', 'grafana-token', `glsa_${pick(32)}_${pick(8, HEX)}`, 'grafana sa $'],
  ['Grafana API key', 'grafana-token', `eyJrIjoi${pick(80)}`, 'grafana key $'],
  ['age secret key', 'age-secret-key', `AGE-SECRET-KEY-1${pick(58, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L')}`, '# created: 2026-01-01\n$'],
  ['Atlassian API token', 'atlassian-token', `ATATT3xFfGF0${pick(172, ALNUM)}=${pick(8, HEX.toUpperCase())}`, 'JIRA $'],
  ['Notion token', 'notion-token', `ntn_${pick(11, DIGITS)}${pick(35)}`, 'NOTION_API_KEY=$'],
  ['Notion legacy token', 'notion-token', `secret_${pick(43)}`, 'notion integration $'],
  ['Facebook access token', 'facebook-token', `EAAC${pick(160)}`, 'fb $'],
  ['New Relic user key', 'newrelic-key', `NRAK-${pick(27, UPPER_NUM)}`, 'NEW_RELIC $'],
  // formats
  ['JWT', 'jwt', jwt(), 'SUPABASE_SERVICE_ROLE_KEY_X $'],
  ['PEM private key', 'private-key', `-----BEGIN RSA PRIVATE KEY-----\n${pemBody()}\n-----END RSA PRIVATE KEY-----`, 'key.pem:\n$\n'],
  ['PEM private key, no END line', 'private-key', `-----BEGIN OPENSSH PRIVATE KEY-----\n${pemBody()}`, 'cat ~/.ssh/id_ed25519\n$\n$ ls'],
  ['Authorization: Basic', 'authorization-header', Buffer.from(`deploy:${pick(16)}`).toString('base64'), 'curl -H "Authorization: Basic $" https://api.example.com'],
  ['Authorization: token', 'authorization-header', pick(40, HEX), 'Authorization: token $'],
  ['Bearer token', 'bearer-token', pick(40), 'curl -H "X: Bearer $" https://api.example.com'],
  ['URL password holding @ and :', 'url-password', `p@ss:w0rd${pick(6)}`, 'DATABASE_URL_X postgres://app:$@db.internal:5432/app'],
  ['curl -u', 'curl-user', `S3cret${pick(10)}!`, 'curl -u admin:$ https://api.example.com/v1'],
  ['generic: .env password', 'generic-credential', `Zx8#kq2!${pick(6)}`, 'DB_PASSWORD=$\nDB_HOST=localhost'],
  ['generic: YAML password', 'generic-credential', `hunter2${pick(6)}`, 'database:\n  user: app\n  password: $\n'],
  ['generic: X-API-Key header', 'generic-credential', pick(32), 'X-API-Key: $'],
  ['generic: JDBC password', 'generic-credential', `Jd8c${pick(10)}`, 'jdbc:mysql://db:3306/app?user=app&password=$&useSSL=true'],
  ['generic: ADO.NET Password', 'generic-credential', `Ad0!${pick(10)}`, 'Server=tcp:db,1433;Database=app;User Id=sa;Password=$;Encrypt=true'],
  ['generic: JSON-like text', 'generic-credential', `Q9${pick(14)}`, "{'client_secret': '$', 'x': 1}"],
  ['generic: Go :=', 'generic-credential', `tok3n${pick(20)}`, 'apiToken := "$"'],
  ['generic: passphrase', 'generic-credential', `c0rrect-horse-${pick(6)}`, 'SSH_PASSPHRASE=$'],
  // positions: after %3D / %20, after a literal \n, glued to a name
  ['token after %3D', 'github-token', `ghp_${pick(36)}`, 'https://x.example/cb?state=abc%26token%3D$%26x'],
  ['token after %20', 'github-token', `ghp_${pick(36)}`, 'q=Authorization%3A%20token%20$'],
  ['token after a literal \\n', 'stripe-key', `sk_live_${pick(40)}`, 'line one\\n$\\nline three'],
  ['token glued to a name', 'github-token', `ghp_${pick(36)}`, 'GITHUB_TOKEN_$'],
  ['token glued after a dash', 'anthropic-key', `sk-ant-api03-${pick(93, ALNUM)}AA`, 'key-$'],
];

/** Issue 13's families (the rule table as it was). */
export const TABLE_FAMILIES: Family[] = ROWS.map(([family, rule, secret, template]) => ({ family, rule, secret, text: template.split('$').join(secret) }));
// A template holds its `$` exactly once, except where it also says `$ ls` (a shell prompt).
for (const x of TABLE_FAMILIES) if (x.family === 'PEM private key, no END line') x.text = `cat ~/.ssh/id_ed25519\n${x.secret}\n$ ls`;

/** Every family: issue 13's and those people paste (issue 27, corpus/pasted.ts). */
export const FAMILIES: Family[] = [...TABLE_FAMILIES, ...PASTED_FAMILIES];

/** Credential member names the store must redact (issue 13 section 2), with a fake value each. */
export const MEMBER_NAMES = [
  'token', 'api_token', 'apiToken', 'GITHUB_TOKEN', 'PRIVATE-TOKEN', 'AWS_SESSION_TOKEN', 'pwd', 'pass', 'passphrase',
  'credential', 'credentials', 'access_key', 'accessKey', 'signing_key', 'encryption_key', 'master_key', 'bot_token',
  'connectionString', 'aws_access_key_id', 'AccessKeyId', 'password', 'api_key', 'secret', 'client_secret', 'Authorization', 'cookie',
].map((name) => [name, `v4l-${pick(20)}9`] as const);
