import { R, re, type TokenRule } from './rule.js';

/**
 * Provider token formats: a literal prefix, then a bounded run of the provider's alphabet, at a
 * token boundary on both sides (rule.ts). Prefixes, lengths and alphabets are those the
 * providers document (and gitleaks' default rules encode); the patterns are the project's own.
 * `glued` prefixes hold `_`, `-` or `.`, distinctive enough to be found after `_` or `-` too.
 */
function token(id: string, keywords: string[], body: string, opts: { glued?: boolean; flags?: string; minEntropy?: number } = {}): TokenRule {
  return { id, keywords, pattern: re(`(?:${body})${R}`, opts.flags), boundary: opts.glued ? 'glued' : 'strict', minEntropy: opts.minEntropy };
}

const B64URL = 'A-Za-z0-9_-';

/**
 * A tail of base64url characters whose `_` / `-` may not start the rule's own prefix again. A
 * glued rule may start right after `_` or `-`, so in a run such as `xoxb-xoxb-…` every prefix is
 * a start; a tail that ran over the next prefix would rescan the run from each of them
 * (bound x starts steps). Stopping at the next prefix scans each character once.
 */
const tail = (stop: string, min: number, max: number, seps = '_-') =>
  `(?:[A-Za-z0-9]|[${seps}](?!${stop})){${min},${max}}`;

export const PROVIDER_RULES: readonly TokenRule[] = [
  // --- LLM providers ---
  token('anthropic-key', ['sk-ant-'], `sk-ant-[a-z]{2,8}\\d{0,4}-${tail('sk-', 20, 300)}`, { glued: true }),
  token('openrouter-key', ['sk-or-'], 'sk-or-v1-[a-f0-9]{64}', { glued: true }),
  token('openai-key', ['sk-'], `sk-(?:proj|svcacct|admin|None)-${tail('sk-', 40, 300)}`, { glued: true }),
  // Legacy keys (`sk-` + 48, the marker T3BlbkFJ inside): a short prefix, so the strict boundary.
  token('openai-key', ['sk-'], 'sk-[A-Za-z0-9]{32,300}'),
  token('groq-key', ['gsk_'], 'gsk_[A-Za-z0-9]{52}', { glued: true }),
  token('xai-key', ['xai-'], 'xai-[A-Za-z0-9]{80}', { glued: true }),
  token('perplexity-key', ['pplx-'], 'pplx-[A-Za-z0-9]{48}', { glued: true }),
  token('replicate-token', ['r8_'], 'r8_[A-Za-z0-9]{37}', { glued: true }),
  token('langsmith-key', ['lsv2_'], 'lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}', { glued: true }),
  token('pinecone-key', ['pcsk_'], 'pcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,100}', { glued: true }),
  token('supabase-key', ['sbp_', 'sb_secret_'], `sbp_(?:oauth_)?[a-f0-9]{40}|sb_secret_${tail('sb_', 20, 80)}`, { glued: true }),
  token('huggingface-token', ['hf_', 'api_org_'], 'hf_[A-Za-z0-9]{30,64}|api_org_[A-Za-z]{34}', { glued: true }),
  // --- code hosting and package registries ---
  token('github-token', ['ghp_', 'gho_', 'ghs_', 'ghu_', 'ghr_', 'github_pat_'], `gh[opsur]_[A-Za-z0-9]{30,255}|github_pat_${tail('gh', 22, 255, '_')}`, { glued: true }),
  // Routable GitLab tokens end in `.` + a base-36 checksum.
  token('gitlab-token', ['glpat-', 'glptt-', 'gldt-', 'glrt-', 'glcbt-', 'glft-', 'glimt-', 'glagent-', 'gloas-', 'glsoat-', 'glffct-'],
    `(?:glpat|glptt|gldt|glrt|glcbt|glft|glimt|glagent|gloas|glsoat|glffct)-${tail('gl', 20, 300)}(?:\\.[a-z0-9]{2,12})?`, { glued: true }),
  token('gitlab-token', ['gr1348941'], `GR1348941[${B64URL}]{20,64}`),
  token('npm-token', ['npm_'], 'npm_[A-Za-z0-9]{36}', { glued: true }),
  token('pypi-token', ['pypi-ageichlwas5vcmc'], `pypi-AgEIcHlwaS5vcmc${tail('pypi-', 50, 1000)}`, { glued: true }),
  token('dockerhub-pat', ['dckr_pat_', 'dckr_oat_'], `dckr_(?:pat|oat)_${tail('dckr_', 24, 64)}`, { glued: true }),
  // --- clouds ---
  token('aws-access-key-id', ['akia', 'asia', 'abia', 'acca', 'a3t', 'agpa', 'aida', 'aroa', 'anpa', 'anva', 'aipa'],
    '(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}'),
  token('google-api-key', ['aiza'], `AIza[${B64URL}]{35}`),
  token('google-oauth-secret', ['gocspx-'], `GOCSPX-${tail('GOCSPX-', 24, 40)}`, { glued: true }),
  token('google-oauth-token', ['ya29.'], `ya29\\.${tail('ya29', 20, 2000)}`, { glued: true }),
  // Azure AD client secrets: 3 characters, a digit, `Q~`, then 31-34.
  token('azure-client-secret', ['q~'], '[A-Za-z0-9_.~]{3}\\dQ~[A-Za-z0-9_.~-]{31,34}'),
  token('digitalocean-token', ['dop_v1_', 'doo_v1_', 'dor_v1_'], 'do[opr]_v1_[a-f0-9]{64}', { glued: true }),
  token('vault-token', ['hvs.', 'hvb.', 'hvr.'], `hv[sbr]\\.${tail('hv', 24, 300)}`, { glued: true }),
  token('databricks-token', ['dapi'], 'dapi[a-f0-9]{32}(?:-\\d)?'),
  token('doppler-token', ['dp.pt.', 'dp.st.', 'dp.ct.', 'dp.sa.', 'dp.scim.', 'dp.audit.'],
    'dp\\.(?:pt|st|ct|sa|scim|audit)\\.(?:[a-z0-9_-]{1,30}\\.)?[A-Za-z0-9]{40,44}', { glued: true }),
  token('flyio-token', ['fo1_', 'fm1a_', 'fm1r_', 'fm2_'], `fo1_${tail('fo1_', 43, 43)}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,4000}={0,3}`, { glued: true }),
  token('heroku-key', ['hrku-aa'], `HRKU-AA${tail('HRKU-', 58, 58)}`, { glued: true }),
  // --- SaaS ---
  token('slack-token', ['xoxa-', 'xoxb-', 'xoxp-', 'xoxo-', 'xoxs-', 'xoxr-', 'xoxe-', 'xoxe.'], `(?:xoxe\\.)?xox[abposre]-${tail('xox', 10, 250, '-')}`, { glued: true }),
  token('slack-token', ['xapp-'], 'xapp-\\d-[A-Z0-9]{8,20}-\\d{6,20}-[a-z0-9]{32,80}', { glued: true }),
  token('stripe-key', ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_', 'sk_prod_', 'rk_prod_'], '(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}', { glued: true }),
  token('stripe-webhook-secret', ['whsec_'], 'whsec_[A-Za-z0-9+/]{24,88}={0,2}', { glued: true }),
  token('sendgrid-key', ['sg.'], `SG\\.[${B64URL}]{22}\\.[${B64URL}]{43}`),
  // Twilio API key SIDs: `SK` + 32 hex (the auth token is a bare 32 hex: credential members only).
  token('twilio-key', ['sk'], 'SK[0-9a-fA-F]{32}', { minEntropy: 3 }),
  token('shopify-token', ['shpat_', 'shpca_', 'shppa_', 'shpss_'], 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}', { glued: true }),
  token('linear-key', ['lin_api_'], 'lin_api_[A-Za-z0-9]{40}', { glued: true }),
  token('postman-key', ['pmak-'], 'PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}', { glued: true }),
  token('grafana-token', ['glc_', 'glsa_'], 'glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}', { glued: true }),
  token('grafana-token', ['eyjrijoi'], 'eyJrIjoi[A-Za-z0-9]{70,400}={0,2}'),
  token('age-secret-key', ['age-secret-key-1'], 'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}', { glued: true }),
  token('atlassian-token', ['atatt3'], 'ATATT3[A-Za-z0-9_=-]{150,250}'),
  token('notion-token', ['ntn_'], 'ntn_\\d{11}[A-Za-z0-9]{35}', { glued: true }),
  token('notion-token', ['secret_'], 'secret_[A-Za-z0-9]{43}', { minEntropy: 3.5 }),
  token('facebook-token', ['eaa'], 'EAA[A-Za-z0-9]{100,1000}', { minEntropy: 4 }),
  token('newrelic-key', ['nrak-', 'nrii-', 'nrjs-'], `NRAK-[A-Z0-9]{27}|NRII-${tail('NR', 32, 32)}|NRJS-[a-f0-9]{19}`, { glued: true }),
  // Telegram bot tokens: the bot id, `:AA`, 33 more.
  // Telegram bot tokens: the bot id, `:AA`, 33 more. The scan starts at `:AA`; the id before it
  // is checked by a lookbehind (also in an API URL: `/bot<id>:`) and kept (it names the bot; the part after `:` is the secret).
  {
    id: 'telegram-bot-token', keywords: [':aa'], group: 1,
    pattern: re(`:(?<=(?:^|[^A-Za-z0-9_-]|/bot)\\d{8,10}:)(AA[${B64URL}]{33})${R}`),
  },
  // Discord bot tokens: base64 of the bot id (starts M, N or O), `.`, 6, `.`, 27-40. The
  // lookbehind after the first letter rejects starts inside a base64url run at once.
  token('discord-token', ['discord'], `[MNO](?<![A-Za-z0-9_-][MNO])[${B64URL}]{23,27}\\.[${B64URL}]{6}\\.[${B64URL}]{27,40}`),
  // JWTs (also Supabase service keys). The header may not run into another candidate start
  // ("-eyJ", "_eyJ"): otherwise every start in a long run of "eyJ-eyJ-…" rescans the run.
  token('jwt', ['eyj'], `eyJ(?:[A-Za-z0-9]|[_-](?!eyJ)){5,4000}\\.eyJ[${B64URL}]{5,8000}\\.[${B64URL}]{8,2000}`),
];
