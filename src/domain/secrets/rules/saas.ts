import { R, re, type TokenRule } from './rule.js';
import { B64URL, tail, token } from './token.js';

/**
 * Provider token formats, part 2: the SaaS tokens of issue 13's table, Telegram and Discord bot
 * tokens and JWTs. See providers.ts.
 */
export const SAAS_RULES: readonly TokenRule[] = [
  token({
    id: 'slack-token', description: 'Slack bot, user, workspace, configuration and refresh tokens', source: 'https://api.slack.com/concepts/token-types',
    stop: 'xox', keywords: ['xoxa-', 'xoxb-', 'xoxp-', 'xoxo-', 'xoxs-', 'xoxr-', 'xoxe-', 'xoxe.'], body: `(?:xoxe\\.)?xox[abposre]-${tail('xox', 10, 250, '-')}`, glued: true,
    redacted: ['xoxb-{digits:12}-{digits:13}-{alnum:24}', 'xoxp-{digits:12}-{digits:12}-{digits:13}-{hex:32}'], kept: ['xoxb-1'],
  }),
  token({
    id: 'slack-token', description: 'Slack app-level tokens', source: 'gitleaks:slack-app-token',
    keywords: ['xapp-'], body: 'xapp-\\d-[A-Z0-9]{8,20}-\\d{6,20}-[a-z0-9]{32,80}', glued: true,
    redacted: ['xapp-1-A{uppernum:10}-{digits:13}-{hex:64}'], kept: ['xapp-1-short'],
  }),
  token({
    id: 'stripe-key', description: 'Stripe secret and restricted keys (also Clerk, WorkOS, Paystack sk_live_/sk_test_)', source: 'https://docs.stripe.com/keys#obtain-api-keys',
    keywords: ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_', 'sk_prod_', 'rk_prod_'], body: '(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}', glued: true,
    redacted: ['sk_live_{alnum:99}', 'rk_live_{alnum:24}'], kept: ['sk_live_abc', 'pk_live_{alnum:24}'],
  }),
  token({
    id: 'stripe-webhook-secret', description: 'Stripe webhook signing secrets', source: 'https://docs.stripe.com/webhooks#verify-events',
    keywords: ['whsec_'], body: 'whsec_[A-Za-z0-9+/]{24,88}={0,2}', glued: true, redacted: ['whsec_{alnum:32}'], kept: ['whsec_short'],
  }),
  token({
    id: 'sendgrid-key', description: 'SendGrid API keys', source: 'gitleaks:sendgrid-api-token',
    keywords: ['sg.'], body: `SG\\.[${B64URL}]{22}\\.[${B64URL}]{43}`, redacted: ['SG.{b64url:22}.{b64url:43}'], kept: ['SG.short.key'],
  }),
  // Twilio API key SIDs: `SK` + 32 hex (the auth token is a bare 32 hex: credential members only).
  token({
    id: 'twilio-key', description: 'Twilio API key SIDs', source: 'gitleaks:twilio-api-key',
    keywords: ['sk'], body: 'SK[0-9a-fA-F]{32}', minEntropy: 3, redacted: ['SK{hex:32}'], kept: ['SK{hex:10}', 'SK00000000000000000000000000000000'],
  }),
  token({
    id: 'shopify-token', description: 'Shopify access tokens and shared secrets', source: 'gitleaks:shopify-access-token',
    keywords: ['shpat_', 'shpca_', 'shppa_', 'shpss_'], body: 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}', glued: true, redacted: ['shpat_{hex:32}'], kept: ['shpat_short'],
  }),
  token({
    id: 'linear-key', description: 'Linear API keys', source: 'gitleaks:linear-api-key',
    keywords: ['lin_api_'], body: 'lin_api_[A-Za-z0-9]{40}', glued: true, redacted: ['lin_api_{alnum:40}'], kept: ['lin_api_short'],
  }),
  token({
    id: 'postman-key', description: 'Postman API keys', source: 'gitleaks:postman-api-token',
    keywords: ['pmak-'], body: 'PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}', glued: true, redacted: ['PMAK-{hex:24}-{hex:34}'], kept: ['PMAK-short'],
  }),
  token({
    id: 'grafana-token', description: 'Grafana Cloud and service-account tokens', source: 'gitleaks:grafana-service-account-token',
    keywords: ['glc_', 'glsa_'], body: 'glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}', glued: true,
    redacted: ['glc_{alnum:60}', 'glsa_{alnum:32}_{hex:8}'], kept: ['glc_short'],
  }),
  token({
    id: 'grafana-token', description: 'Grafana API keys (base64 JSON)', source: 'gitleaks:grafana-api-key',
    keywords: ['eyjrijoi'], body: 'eyJrIjoi[A-Za-z0-9]{70,400}={0,2}', redacted: ['eyJrIjoi{alnum:80}'], kept: ['eyJrIjoi{alnum:20}'],
  }),
  token({
    id: 'age-secret-key', description: 'age encryption secret keys', source: 'https://age-encryption.org/v1',
    keywords: ['age-secret-key-1'], body: 'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}', glued: true,
    redacted: ['AGE-SECRET-KEY-1{BECH32:58}'], kept: ['AGE-SECRET-KEY-1SHORT'],
  }),
  token({
    id: 'atlassian-token', description: 'Atlassian (Jira, Confluence, Bitbucket) API tokens', source: 'trufflehog:jiratoken',
    keywords: ['atatt3', 'atctt3'], body: 'AT[AC]TT3[A-Za-z0-9_=-]{150,250}',
    redacted: ['ATATT3xFfGF0{alnum:172}={HEX:8}', 'ATCTT3xFfGN0{alnum:172}={HEX:8}'], kept: ['ATATT3short'],
  }),
  token({
    id: 'notion-token', description: 'Notion integration tokens', source: 'gitleaks:notion-api-token',
    keywords: ['ntn_'], body: 'ntn_\\d{11}[A-Za-z0-9]{35}', glued: true, redacted: ['ntn_{digits:11}{alnum:35}'], kept: ['ntn_short'],
  }),
  token({
    id: 'notion-token', description: 'Notion legacy integration secrets', source: 'trufflehog:notion',
    keywords: ['secret_'], body: 'secret_[A-Za-z0-9]{43}', minEntropy: 3.5, redacted: ['secret_{alnum:43}'], kept: ['secret_name', 'secret_key_base'],
  }),
  token({
    id: 'facebook-token', description: 'Meta (Facebook, Instagram) access tokens', source: 'gitleaks:facebook-page-access-token',
    keywords: ['eaa'], body: 'EAA[A-Za-z0-9]{100,1000}', minEntropy: 4, redacted: ['EAAC{alnum:160}'], kept: ['EAA{digits:120}'],
  }),
  token({
    id: 'newrelic-key', description: 'New Relic user, insert, browser and query keys', source: 'gitleaks:new-relic-user-api-key',
    stop: 'NR', keywords: ['nrak-', 'nrii-', 'nrjs-', 'nriq-'], body: `NRAK-[A-Z0-9]{27}|NRI[IQ]-${tail('NR', 25, 32)}|NRJS-[a-f0-9]{19}`, glued: true,
    redacted: ['NRAK-{uppernum:27}', 'NRIQ-{alnum:32}'], kept: ['NRAK-short'],
  }),
  // Telegram bot tokens: the bot id, `:AA`, 33 more. The scan starts at `:AA`; the id before it
  // is checked by a lookbehind (also in an API URL: `/bot<id>:`) and kept (it names the bot; the part after `:` is the secret).
  {
    id: 'telegram-bot-token', description: 'Telegram bot tokens (the part after the bot id)', source: 'https://core.telegram.org/bots/api#authorizing-your-bot',
    examples: { redacted: ['bot {digits:10}:AA{b64url:33}'], kept: ['12:30:AA'] },
    keywords: [':aa'], group: 1,
    pattern: re(`:(?<=(?:^|[^A-Za-z0-9_-]|/bot)\\d{8,10}:)(AA[${B64URL}]{33})${R}`),
  },
  // Discord bot tokens: base64 of the bot id (starts M, N or O), `.`, 6, `.`, 27-40. The
  // lookbehind after the first letter rejects starts inside a base64url run at once.
  token({
    id: 'discord-token', description: 'Discord bot tokens, with the word "discord" in the text', source: 'https://discord.com/developers/docs/reference#authentication',
    keywords: ['discord'], body: `[MNO](?<![A-Za-z0-9_-][MNO])[${B64URL}]{23,27}\\.[${B64URL}]{6}\\.[${B64URL}]{27,40}`,
    redacted: ['discord M{alnum:25}.{b64url:6}.{b64url:38}'], kept: ['discord M{alnum:10}.x.y'],
  }),
  // JWTs (also Supabase service keys). The header may not run into another candidate start
  // ("-eyJ", "_eyJ"): otherwise every start in a long run of "eyJ-eyJ-…" rescans the run.
  token({
    id: 'jwt', description: 'JSON Web Tokens (three base64url parts, header and payload JSON objects)', source: 'https://www.rfc-editor.org/rfc/rfc7519',
    keywords: ['eyj'], body: `eyJ(?:[A-Za-z0-9]|[_-](?!eyJ)){5,4000}\\.eyJ[${B64URL}]{5,8000}\\.[${B64URL}]{8,2000}`,
    redacted: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{b64url:40}.{b64url:43}'], kept: ['eyJhbGciOiJIUzI1NiJ9'],
  }),
];
