import type { TokenRule } from './rule.js';
import { B64URL, tail, token } from './token.js';

/**
 * Provider token formats, part 1: LLM providers, code hosting and package registries, clouds
 * (the table of issue 13). Parts 2-4: saas.ts, devops.ts, services.ts. Each rule: a literal
 * prefix and the provider's documented length and alphabet (rules/token.ts).
 */
const GH_FORMATS = 'https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/about-authentication-to-github#githubs-token-formats';

export const PROVIDER_RULES: readonly TokenRule[] = [
  // --- LLM providers ---
  token({
    id: 'anthropic-key', description: 'Anthropic API and admin keys (sk-ant-api03-, sk-ant-admin01-)', source: 'gitleaks:anthropic-api-key',
    stop: 'sk-', keywords: ['sk-ant-'], body: `sk-ant-[a-z]{2,8}\\d{0,4}-${tail('sk-', 20, 300)}`, glued: true,
    redacted: ['sk-ant-api03-{b64url:93}AA', 'sk-ant-admin01-{alnum:93}AA'], kept: ['sk-ant-api03-short', 'risk-ant-api03-{alnum:40}'],
  }),
  token({
    id: 'openrouter-key', description: 'OpenRouter API keys', source: 'trufflehog:openrouter',
    keywords: ['sk-or-'], body: 'sk-or-v1-[a-f0-9]{64}', glued: true,
    redacted: ['sk-or-v1-{hex:64}'], kept: ['sk-or-v1-{hex:20}'],
  }),
  token({
    id: 'openai-key', description: 'OpenAI project, service-account and admin keys', source: 'gitleaks:openai-api-key',
    stop: 'sk-', keywords: ['sk-'], body: `sk-(?:proj|svcacct|admin|None)-${tail('sk-', 40, 300)}`, glued: true,
    redacted: ['sk-proj-{alnum:74}T3BlbkFJ{alnum:74}', 'sk-svcacct-{b64url:80}'], kept: ['sk-proj-short', 'task-proj-deadline-2024-planning-document-v2-final-review'],
  }),
  // Legacy keys (`sk-` + 48, the marker T3BlbkFJ inside): a short prefix, so the strict boundary.
  token({
    id: 'openai-key', description: 'OpenAI legacy keys, and sk- + 32 or more alphanumerics (DeepSeek and others)', source: 'gitleaks:openai-api-key',
    keywords: ['sk-'], body: 'sk-[A-Za-z0-9]{32,300}',
    redacted: ['sk-{alnum:20}T3BlbkFJ{alnum:20}', 'sk-{hex:32}'], kept: ['sk-learn', 'desk-{alnum:40}'],
  }),
  token({
    id: 'groq-key', description: 'Groq API keys', source: 'trufflehog:groq',
    keywords: ['gsk_'], body: 'gsk_[A-Za-z0-9]{52}', glued: true, redacted: ['gsk_{alnum:52}'], kept: ['gsk_{alnum:20}'],
  }),
  token({
    id: 'xai-key', description: 'xAI API keys', source: 'trufflehog:xai',
    keywords: ['xai-'], body: 'xai-[A-Za-z0-9]{80}', glued: true, redacted: ['xai-{alnum:80}'], kept: ['xai-grok-2'],
  }),
  token({
    id: 'perplexity-key', description: 'Perplexity API keys', source: 'gitleaks:perplexity-api-key',
    keywords: ['pplx-'], body: 'pplx-[A-Za-z0-9]{48}', glued: true, redacted: ['pplx-{alnum:48}'], kept: ['pplx-api'],
  }),
  token({
    id: 'replicate-token', description: 'Replicate API tokens', source: 'trufflehog:replicate',
    keywords: ['r8_'], body: 'r8_[A-Za-z0-9]{37}', glued: true, redacted: ['r8_{alnum:37}'], kept: ['r8_short'],
  }),
  token({
    id: 'langsmith-key', description: 'LangSmith personal and service keys', source: 'trufflehog:langsmith',
    keywords: ['lsv2_'], body: 'lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}', glued: true, redacted: ['lsv2_pt_{hex:32}_{hex:10}'], kept: ['lsv2_pt_{hex:32}'],
  }),
  token({
    id: 'pinecone-key', description: 'Pinecone API keys', source: 'trufflehog:pinecone',
    keywords: ['pcsk_'], body: 'pcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,100}', glued: true, redacted: ['pcsk_{alnum:6}_{alnum:63}'], kept: ['pcsk_abc_def'],
  }),
  token({
    id: 'supabase-key', description: 'Supabase access tokens (sbp_) and secret keys (sb_secret_)', source: 'trufflehog:supabasetoken',
    stop: 'sb_', keywords: ['sbp_', 'sb_secret_'], body: `sbp_(?:oauth_)?[a-f0-9]{40}|sb_secret_${tail('sb_', 20, 80)}`, glued: true,
    redacted: ['sbp_{hex:40}', 'sb_secret_{alnum:31}'], kept: ['sb_publishable_{alnum:31}'],
  }),
  token({
    id: 'huggingface-token', description: 'Hugging Face user (hf_) and organization (api_org_) tokens', source: 'gitleaks:huggingface-access-token',
    keywords: ['hf_', 'api_org_'], body: 'hf_[A-Za-z0-9]{30,64}|api_org_[A-Za-z]{34}', glued: true,
    redacted: ['hf_{letters:34}', 'api_org_{letters:34}'], kept: ['hf_hub_download', 'hf_abc'],
  }),
  // --- code hosting and package registries ---
  token({
    id: 'github-token', description: 'GitHub personal, OAuth, app, refresh and fine-grained tokens', source: GH_FORMATS,
    stop: 'gh', keywords: ['ghp_', 'gho_', 'ghs_', 'ghu_', 'ghr_', 'github_pat_'], body: `gh[opsur]_[A-Za-z0-9]{30,255}|github_pat_${tail('gh', 22, 255, '_')}`, glued: true,
    redacted: ['ghp_{alnum:36}', 'github_pat_11{uppernum:20}_{alnum:59}'], kept: ['the ghp_ prefix', 'ghp_short'],
  }),
  // Routable GitLab tokens end in `.` + a base-36 checksum.
  token({
    id: 'gitlab-token', description: 'GitLab personal, pipeline trigger, deploy, runner, CI job and other tokens', source: 'https://docs.gitlab.com/security/tokens/#token-prefixes',
    stop: 'gl', keywords: ['glpat-', 'glptt-', 'gldt-', 'glrt-', 'glcbt-', 'glft-', 'glimt-', 'glagent-', 'gloas-', 'glsoat-', 'glffct-'],
    body: `(?:glpat|glptt|gldt|glrt|glcbt|glft|glimt|glagent|gloas|glsoat|glffct)-${tail('gl', 20, 300)}(?:\\.[a-z0-9]{2,12})?`, glued: true,
    redacted: ['glpat-{alnum:20}', 'glptt-{hex:40}'], kept: ['glpat-short'],
  }),
  token({
    id: 'gitlab-token', description: 'GitLab runner registration tokens', source: 'gitleaks:gitlab-rrt',
    keywords: ['gr1348941'], body: `GR1348941[${B64URL}]{20,64}`, redacted: ['GR1348941{alnum:20}'], kept: ['GR1348941short'],
  }),
  token({
    id: 'npm-token', description: 'npm access tokens', source: 'gitleaks:npm-access-token',
    keywords: ['npm_'], body: 'npm_[A-Za-z0-9]{36}', glued: true, redacted: ['npm_{alnum:36}'], kept: ['npm_config_registry'],
  }),
  token({
    id: 'pypi-token', description: 'PyPI and TestPyPI upload tokens (macaroons)', source: 'gitleaks:pypi-upload-token',
    stop: 'pypi-', keywords: ['pypi-ageichlwas5vcmc', 'pypi-agendgvzdc5wexbplm9yz'], body: `pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)${tail('pypi-', 50, 1000)}`, glued: true,
    redacted: ['pypi-AgEIcHlwaS5vcmc{alnum:70}', 'pypi-AgENdGVzdC5weXBpLm9yZw{alnum:70}'], kept: ['pypi-AgEIcHlwaS5vcmc'],
  }),
  token({
    id: 'dockerhub-pat', description: 'Docker Hub personal and organization access tokens', source: 'trufflehog:dockerhub',
    stop: 'dckr_', keywords: ['dckr_pat_', 'dckr_oat_'], body: `dckr_(?:pat|oat)_${tail('dckr_', 24, 64)}`, glued: true, redacted: ['dckr_pat_{alnum:27}'], kept: ['dckr_pat_x'],
  }),
  // --- clouds ---
  token({
    id: 'aws-access-key-id', description: 'AWS access key ids (long-lived AKIA, temporary ASIA, and the other IAM id prefixes)', source: 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-prefixes',
    keywords: ['akia', 'asia', 'abia', 'acca', 'a3t', 'agpa', 'aida', 'aroa', 'anpa', 'anva', 'aipa'],
    body: '(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}',
    redacted: ['AKIA{base32:16}', 'ASIA{base32:16}'], kept: ['AKIA1234', 'XAKIA{base32:16}'],
  }),
  token({
    id: 'google-api-key', description: 'Google API keys (also Gemini, Firebase)', source: 'gitleaks:gcp-api-key',
    keywords: ['aiza'], body: `AIza[${B64URL}]{35}`, redacted: ['AIza{b64url:35}'], kept: ['AIzaShort'],
  }),
  token({
    id: 'google-oauth-secret', description: 'Google OAuth client secrets', source: 'https://developers.google.com/identity/protocols/oauth2',
    stop: 'GOCSPX-', keywords: ['gocspx-'], body: `GOCSPX-${tail('GOCSPX-', 24, 40)}`, glued: true, redacted: ['GOCSPX-{alnum:28}'], kept: ['GOCSPX-short'],
  }),
  token({
    id: 'google-oauth-token', description: 'Google OAuth access tokens (ya29.)', source: 'trufflehog:googleoauth2',
    stop: 'ya29', keywords: ['ya29.'], body: `ya29\\.${tail('ya29', 20, 2000)}`, glued: true, redacted: ['ya29.{b64url:150}'], kept: ['ya29.short'],
  }),
  token({
    id: 'google-oauth-token', description: 'Google OAuth refresh tokens (1//0…)', source: 'https://developers.google.com/identity/protocols/oauth2#5.-refresh-the-access-token,-if-necessary.',
    keywords: ['1//0'], body: `1//0[${B64URL}]{30,500}`, redacted: ['1//0{b64url:100}'], kept: ['x = 1//0', 'see 1//0abc'],
  }),
  // Azure AD client secrets: 3 characters, a digit, `Q~`, then 31-34.
  token({
    id: 'azure-client-secret', description: 'Microsoft Entra ID (Azure AD) client secrets', source: 'gitleaks:azure-ad-client-secret',
    keywords: ['q~'], body: '[A-Za-z0-9_.~]{3}\\dQ~[A-Za-z0-9_.~-]{31,34}', redacted: ['{alnum:3}8Q~{alnum:34}'], kept: ['abc8Q~short'],
  }),
  token({
    id: 'digitalocean-token', description: 'DigitalOcean personal, OAuth and refresh tokens', source: 'trufflehog:digitaloceanv2',
    keywords: ['dop_v1_', 'doo_v1_', 'dor_v1_'], body: 'do[opr]_v1_[a-f0-9]{64}', glued: true, redacted: ['dop_v1_{hex:64}'], kept: ['dop_v1_{hex:20}'],
  }),
  token({
    id: 'vault-token', description: 'HashiCorp Vault service, batch and recovery tokens', source: 'https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes',
    stop: 'hv', keywords: ['hvs.', 'hvb.', 'hvr.'], body: `hv[sbr]\\.${tail('hv', 24, 300)}`, glued: true, redacted: ['hvs.{alnum:95}'], kept: ['hvs.short'],
  }),
  token({
    id: 'databricks-token', description: 'Databricks personal access tokens', source: 'gitleaks:databricks-api-token',
    keywords: ['dapi'], body: 'dapi[a-f0-9]{32}(?:-\\d)?', redacted: ['dapi{hex:32}'], kept: ['dapi{hex:10}', 'rapid api'],
  }),
  token({
    id: 'doppler-token', description: 'Doppler personal, service, CLI, service-account, SCIM and audit tokens', source: 'trufflehog:doppler',
    keywords: ['dp.pt.', 'dp.st.', 'dp.ct.', 'dp.sa.', 'dp.scim.', 'dp.audit.'],
    body: 'dp\\.(?:pt|st|ct|sa|scim|audit)\\.(?:[a-z0-9_-]{1,30}\\.)?[A-Za-z0-9]{40,44}', glued: true, redacted: ['dp.pt.{alnum:43}'], kept: ['dp.pt.short'],
  }),
  token({
    id: 'flyio-token', description: 'Fly.io access tokens and macaroons', source: 'gitleaks:flyio-access-token',
    stop: 'fo1_', keywords: ['fo1_', 'fm1a_', 'fm1r_', 'fm2_'], body: `fo1_${tail('fo1_', 43, 43)}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,4000}={0,3}`, glued: true,
    redacted: ['fo1_{alnum:43}', 'fm2_{b64:200}'], kept: ['fo1_short'],
  }),
  token({
    id: 'heroku-key', description: 'Heroku API keys (HRKU-AA)', source: 'gitleaks:heroku-api-key-v2',
    stop: 'HRKU-', keywords: ['hrku-aa'], body: `HRKU-AA${tail('HRKU-', 58, 58)}`, glued: true, redacted: ['HRKU-AA{alnum:58}'], kept: ['HRKU-AAshort'],
  }),
];
