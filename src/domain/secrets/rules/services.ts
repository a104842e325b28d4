import { R, re, type TokenRule } from './rule.js';
import { mixed, tail, token, UUID } from './token.js';

/**
 * Provider token formats, part 4 (issue 27): cloud providers beyond the big three's basics,
 * payments and commerce, CRM, messaging and productivity services. See providers.ts.
 */
const UUID_ANY_CASE = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

export const SERVICE_RULES: readonly TokenRule[] = [
  // --- clouds ---
  token({
    id: 'alibaba-access-key-id', description: 'Alibaba Cloud AccessKey ids', source: 'gitleaks:alibaba-access-key-id',
    keywords: ['ltai'], body: 'LTAI[A-Za-z0-9]{12,20}', accept: (s) => /\d/.test(s.slice(4)) && /[A-Za-z]/.test(s.slice(4)),
    redacted: ['LTAI{alnum:20}', 'LTAI{alnum:12}'], kept: ['LTAIEXAMPLEONLYNOTAKEY'],
  }),
  token({
    id: 'tencent-secret-id', description: 'Tencent Cloud SecretIds (AKID + 32)', source: 'https://www.tencentcloud.com/document/product/598/32675',
    keywords: ['akid'], body: 'AKID[A-Za-z0-9]{32}', accept: (s) => /\d/.test(s.slice(4)), redacted: ['AKID{alnum:32}'], kept: ['AKID{letters:32}'],
  }),
  token({
    id: 'yandex-key', description: 'Yandex Cloud API keys (AQVN) and IAM tokens (t1.)', source: 'gitleaks:yandex-api-key',
    keywords: ['aqvn', 't1.'], body: 'AQVN[A-Za-z0-9_-]{35,38}|t1\\.[A-Za-z0-9_-]{20,300}={0,2}\\.[A-Za-z0-9_-]{86}={0,2}',
    redacted: ['AQVN{b64url:36}', 't1.{b64url:60}.{b64url:86}'], kept: ['AQVNshort', 't1.micro'],
  }),
  token({
    id: 'aws-bedrock-key', description: 'Amazon Bedrock API keys, long-lived (ABSK) and short-lived (bedrock-api-key-)', source: 'gitleaks:aws-amazon-bedrock-api-key-long-lived',
    keywords: ['absk', 'bedrock-api-key-ymvkcm9jay5hbwf6b25hd3muy29t'], body: 'ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/]{20,4000}={0,2}',
    redacted: ['ABSK{b64:140}', 'bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b64:300}'], kept: ['ABSK{alnum:20}'],
  }),
  token({
    id: 'aws-mws-key', description: 'Amazon Marketplace Web Service auth tokens', source: 'https://developer-docs.amazon.com/sp-api/docs/',
    keywords: ['amzn.mws.'], body: `amzn\\.mws\\.${UUID}`, glued: true, redacted: ['amzn.mws.{uuid}'], kept: ['amzn.mws.example'],
  }),
  token({
    id: 'aws-appsync-key', description: 'AWS AppSync API keys', source: 'https://docs.aws.amazon.com/appsync/latest/devguide/security-authz.html#api-key-authorization',
    keywords: ['da2-'], body: 'da2-[a-z0-9]{26}', redacted: ['da2-{lowernum:26}'], kept: ['da2-short'],
  }),
  // `<42>+ACR<6>`: the scan starts at the marker; the 42 base64 characters before it are its lead.
  token({
    id: 'azure-acr-password', description: 'Azure Container Registry passwords and tokens', source: 'trufflehog:azurecontainerregistry',
    keywords: ['+acr'], lead: '[A-Za-z0-9+/]{42}', body: '\\+ACR[A-Za-z0-9]{6}', redacted: ['{b64:42}+ACR{alnum:6}'], kept: ['C+ACR'],
  }),
  token({
    id: 'fcm-server-key', description: 'Firebase Cloud Messaging legacy server keys', source: 'https://firebase.google.com/docs/cloud-messaging/auth-server',
    keywords: [':apa91b'], body: 'AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{134}', redacted: ['AAAA{alnum:7}:APA91b{b64url:134}'], kept: ['AAAA{alnum:7}:APA91b{alnum:20}'],
  }),
  token({
    id: 'mapbox-secret-token', description: 'Mapbox secret tokens (sk.eyJ…)', source: 'trufflehog:mapbox',
    keywords: ['sk.eyj'], body: 'sk\\.eyJ[A-Za-z0-9_-]{20,400}\\.[A-Za-z0-9_-]{20,30}', redacted: ['sk.eyJ1Ijoi{alnum:40}In0.{b64url:22}'], kept: ['pk.eyJ1Ijoi{alnum:40}In0.{b64url:22}'],
  }),
  token({
    id: 'salesforce-token', description: 'Salesforce session ids / access tokens (00D…!…) and refresh tokens (5AEP861)', source: 'trufflehog:salesforce',
    keywords: ['00', '5aep861'], body: '00[A-Za-z0-9]{13}![A-Za-z0-9_.]{96}|5AEP861[A-Za-z0-9._=]{80,300}',
    redacted: ['00D{alnum:12}!{alnum:96}', '5AEP861{alnum:90}'], kept: ['00D{alnum:12}!short'],
  }),
  token({
    id: 'dropbox-token', description: 'Dropbox short-lived access tokens', source: 'trufflehog:dropbox',
    keywords: ['sl.'], body: 'sl\\.(?:u\\.)?[A-Za-z0-9_-]{130,1400}', redacted: ['sl.u.{b64url:140}'], kept: ['sl.no', 'sl.{alnum:40}'],
  }),
  // Asana personal access tokens `1/<user gid>[/<app gid>]:<secret>`: the scan starts at the
  // `:`; the ids before it are checked by a lookbehind and kept (they name the user).
  {
    id: 'asana-token', description: 'Asana personal access tokens (the part after the ids)', source: 'trufflehog:asanapersonalaccesstoken',
    examples: { redacted: ['ASANA_PAT=2/{digits:16}/{digits:16}:{hex:32}', 'token 1/{digits:16}:{hex:32}'], kept: ['at 12:30:{hex:32}'] },
    keywords: ['0:', '1:', '2:', '3:', '4:', '5:', '6:', '7:', '8:', '9:'], group: 1,
    pattern: re(`:(?<=(?:^|[^A-Za-z0-9_/-])\\d{1,2}/\\d{16,20}(?:/\\d{16,20})?:)([A-Za-z0-9]{32,64})${R}`),
  },
  // --- payments, commerce ---
  token({
    id: 'square-token', description: 'Square access tokens (EAAA, sq0atp-) and application secrets (sq0csp-)', source: 'gitleaks:square-access-token',
    keywords: ['sq0atp-', 'sq0csp-'], body: 'sq0atp-[A-Za-z0-9_-]{22,60}|sq0csp-[A-Za-z0-9_-]{40,50}', glued: true,
    redacted: ['sq0atp-{b64url:22}', 'sq0csp-{b64url:43}'], kept: ['sq0atp-short'],
  }),
  token({
    id: 'square-token', description: 'Square access tokens (EAAA + 60)', source: 'trufflehog:square',
    keywords: ['eaaa'], body: 'EAAA[A-Za-z0-9_+=-]{60}', accept: (s) => mixed(s.slice(4)), redacted: ['EAAA{alnum:60}'], kept: ['EAAA{upper:60}'],
  }),
  token({
    id: 'flutterwave-key', description: 'Flutterwave secret keys', source: 'trufflehog:flutterwave',
    keywords: ['flwseck'], body: 'FLWSECK(?:_TEST)?-[A-Za-z0-9]{32}-X', glued: true, redacted: ['FLWSECK-{lowernum:32}-X', 'FLWSECK_TEST-{hex:32}-X'], kept: ['FLWSECK-short-X'],
  }),
  token({
    id: 'duffel-token', description: 'Duffel API tokens', source: 'gitleaks:duffel-api-token',
    keywords: ['duffel_test_', 'duffel_live_'], body: 'duffel_(?:test|live)_[A-Za-z0-9_=-]{43}', glued: true, redacted: ['duffel_live_{b64url:43}'], kept: ['duffel_live_short'],
  }),
  token({
    id: 'shippo-token', description: 'Shippo API tokens', source: 'gitleaks:shippo-api-token',
    keywords: ['shippo_live_', 'shippo_test_'], body: 'shippo_(?:live|test)_[a-fA-F0-9]{40}', glued: true, redacted: ['shippo_live_{hex:40}'], kept: ['shippo_live_short'],
  }),
  token({
    id: 'easypost-key', description: 'EasyPost production (EZAK) and test (EZTK) API keys', source: 'gitleaks:easypost-api-token',
    keywords: ['ezak', 'eztk'], body: 'EZ[AT]K[A-Za-z0-9]{54}', redacted: ['EZAK{alnum:54}', 'EZTK{alnum:54}'], kept: ['EZAKshort'],
  }),
  token({
    id: 'plaid-token', description: 'Plaid access tokens', source: 'gitleaks:plaid-api-token',
    keywords: ['access-sandbox-', 'access-development-', 'access-production-'], body: `access-(?:sandbox|development|production)-${UUID}`, glued: true,
    redacted: ['access-production-{uuid}'], kept: ['access-production-logs'],
  }),
  token({
    id: 'braintree-token', description: 'Braintree / PayPal access tokens', source: 'https://developer.paypal.com/braintree/docs/guides/authorization/overview',
    keywords: ['access_token$'], body: 'access_token\\$(?:production|sandbox)\\$[0-9a-z]{16}\\$[0-9a-f]{32}', glued: true,
    redacted: ['access_token$production${lowernum:16}${hex:32}'], kept: ['access_token$production$short'],
  }),
  token({
    id: 'klaviyo-key', description: 'Klaviyo private API keys', source: 'trufflehog:klaviyo',
    keywords: ['pk_'], body: 'pk_(?:[A-Za-z0-9]{6}_)?[a-f0-9]{34}', redacted: ['pk_{hex:34}', 'pk_{alnum:6}_{hex:34}'], kept: ['pk_live_{alnum:24}', 'pk_{hex:20}'],
  }),
  token({
    id: 'woocommerce-secret', description: 'WooCommerce REST API consumer secrets', source: 'https://woocommerce.github.io/woocommerce-rest-api-docs/#authentication',
    keywords: ['cs_'], body: 'cs_[a-f0-9]{40}', redacted: ['cs_{hex:40}'], kept: ['cs_{hex:20}', 'docs_{hex:40}'],
  }),
  token({
    id: 'lob-key', description: 'Lob secret API keys', source: 'gitleaks:lob-api-key',
    keywords: ['live_', 'test_'], body: '(?:live|test)_[a-f0-9]{35}', redacted: ['live_{hex:35}'], kept: ['test_{hex:40}', 'live_{hex:20}'],
  }),
  token({
    id: 'ramp-secret', description: 'Ramp API client secrets', source: 'trufflehog:ramp',
    keywords: ['ramp_sec_'], body: 'ramp_sec_[A-Za-z0-9]{48}', glued: true, redacted: ['ramp_sec_{alnum:48}'], kept: ['ramp_id_{alnum:40}'],
  }),
  token({
    id: 'pagarme-key', description: 'Pagar.me API keys', source: 'trufflehog:pagarme',
    keywords: ['ak_live_'], body: 'ak_live_[A-Za-z0-9]{30}', glued: true, redacted: ['ak_live_{alnum:30}'], kept: ['ak_live_short'],
  }),
  token({
    id: 'robinhood-crypto-key', description: 'Robinhood Crypto API keys', source: 'trufflehog:robinhoodcrypto',
    keywords: ['rh-api-'], body: `rh-api-${UUID_ANY_CASE}`, glued: true, redacted: ['rh-api-{uuid}'], kept: ['rh-api-docs'],
  }),
  token({
    id: 'flexport-key', description: 'Flexport API keys', source: 'trufflehog:flexport',
    stop: 'shltm_', keywords: ['shltm_'], body: `shltm_${tail('shltm_', 40, 40)}`, glued: true, redacted: ['shltm_{b64url:40}'], kept: ['shltm_short'],
  }),
  token({
    id: 'fleetbase-key', description: 'Fleetbase live API keys', source: 'trufflehog:fleetbase',
    keywords: ['flb_live_'], body: 'flb_live_[A-Za-z0-9]{20}', glued: true, redacted: ['flb_live_{alnum:20}'], kept: ['flb_live_short'],
  }),
  // --- CRM, marketing, messaging, productivity ---
  token({
    id: 'brevo-key', description: 'Brevo (Sendinblue) API keys and SMTP keys', source: 'gitleaks:sendinblue-api-token',
    keywords: ['xkeysib-', 'xsmtpsib-'], body: 'x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}', glued: true,
    redacted: ['xkeysib-{hex:64}-{alnum:16}', 'xsmtpsib-{hex:64}-{alnum:16}'], kept: ['xkeysib-short'],
  }),
  token({
    id: 'hubspot-token', description: 'HubSpot private-app access tokens', source: 'trufflehog:hubspot_apikey',
    keywords: ['pat-na1-', 'pat-eu1-'], body: `pat-(?:na|eu)1-${UUID_ANY_CASE}`, redacted: ['pat-na1-{uuid}'], kept: ['pat-na1-docs'],
  }),
  token({
    id: 'launchdarkly-token', description: 'LaunchDarkly access tokens (api-) and SDK keys (sdk-)', source: 'trufflehog:launchdarkly',
    keywords: ['api-', 'sdk-'], body: '(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[a-f0-9]{4}-[a-f0-9]{12}',
    redacted: ['api-{uuid}', 'sdk-{uuid}'], kept: ['api-gateway', 'my-api-{uuid}'],
  }),
  token({
    id: 'typeform-token', description: 'Typeform personal access tokens', source: 'trufflehog:typeform',
    stop: 'tfp_', keywords: ['tfp_'], body: `tfp_${tail('tfp_', 40, 59, '_.=-')}`, glued: true, redacted: ['tfp_{alnum:44}_{alnum:14}'], kept: ['tfp_short'],
  }),
  token({
    id: 'airtable-pat', description: 'Airtable personal access tokens', source: 'gitleaks:airtable-personnal-access-token',
    keywords: ['pat'], body: 'pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}', redacted: ['pat{alnum:14}.{hex:64}'], kept: ['path.join(dir, file)', 'pattern.{hex:64}'],
  }),
  token({
    id: 'adobe-client-secret', description: 'Adobe client secrets', source: 'gitleaks:adobe-client-secret',
    keywords: ['p8e-'], body: 'p8e-[A-Za-z0-9]{32}', glued: true, redacted: ['p8e-{alnum:32}'], kept: ['p8e-short'],
  }),
  token({
    id: 'settlemint-token', description: 'SettleMint application, personal and service access tokens', source: 'gitleaks:settlemint-personal-access-token',
    keywords: ['sm_aat_', 'sm_pat_', 'sm_sat_'], body: 'sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}', glued: true, redacted: ['sm_pat_{alnum:16}'], kept: ['sm_pat_x'],
  }),
  token({
    id: 'bannerbear-key', description: 'Bannerbear API keys', source: 'trufflehog:bannerbear',
    keywords: ['bb_pr_', 'bb_ma_'], body: 'bb_(?:pr|ma)_[a-f0-9]{30}', glued: true, redacted: ['bb_pr_{hex:30}'], kept: ['bb_pr_short'],
  }),
  token({
    id: 'zoho-token', description: 'Zoho OAuth tokens', source: 'trufflehog:zohocrm',
    keywords: ['1000.'], body: '1000\\.[a-f0-9]{32}\\.[a-f0-9]{32}', redacted: ['1000.{hex:32}.{hex:32}'], kept: ['1000.50', '1000.{hex:32}'],
  }),
  token({
    id: 'planetscale-token', description: 'PlanetScale service tokens, OAuth tokens and database passwords', source: 'gitleaks:planetscale-password',
    stop: 'pscale_', keywords: ['pscale_tkn_', 'pscale_oauth_', 'pscale_pw_'], body: `pscale_(?:tkn|oauth|pw)_${tail('pscale_', 32, 64, '_=.-')}`, glued: true,
    redacted: ['pscale_tkn_{alnum:43}', 'pscale_oauth_{alnum:43}', 'pscale_pw_{alnum:43}'], kept: ['pscale_pw_short'],
  }),
  {
    id: 'sidekiq-secret', description: 'Sidekiq Pro / Enterprise gem server credentials', source: 'gitleaks:sidekiq-secret',
    examples: { redacted: ['BUNDLE_ENTERPRISE__CONTRIBSYS__COM={hex:8}:{hex:8}', 'export BUNDLE_GEMS__CONTRIBSYS__COM="{hex:8}:{hex:8}"'], kept: ['BUNDLE_GEMS__CONTRIBSYS__COM=$SIDEKIQ'] },
    keywords: ['contribsys__com'], group: 1,
    pattern: re(`BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?[ \\t]{0,4}[=:][ \\t]{0,4}["']?([a-f0-9]{8}:[a-f0-9]{8})${R}`),
  },
  {
    id: 'teams-webhook', description: 'Microsoft Teams incoming-webhook URLs (the path after webhookb2/)', source: 'gitleaks:microsoft-teams-webhook',
    examples: { redacted: ['https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{hex:32}/{uuid}'], kept: ['https://acme.webhook.office.com/webhookb2/'] },
    keywords: ['webhook.office.com/webhookb2/'], group: 1,
    pattern: re(`webhook\\.office\\.com/webhookb2/(${UUID_ANY_CASE}@${UUID_ANY_CASE}/IncomingWebhook/[A-Za-z0-9]{32}/${UUID_ANY_CASE}(?:/[A-Za-z0-9_-]{20,80})?)${R}`),
  },
];
