import { R, re, type TokenRule } from './rule.js';
import { mixed, tail, token, UUID } from './token.js';

/**
 * Provider token formats, part 3 (issue 27): CI/CD, infrastructure, package registries,
 * observability and developer tools. See providers.ts.
 */
export const DEVOPS_RULES: readonly TokenRule[] = [
  token({
    id: 'circleci-token', description: 'CircleCI personal API tokens', source: 'trufflehog:circleci',
    keywords: ['ccipat_'], body: 'CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}', glued: true, redacted: ['CCIPAT_{alnum:22}_{hex:40}'], kept: ['CCIPAT_short'],
  }),
  // `<14>.atlasv1.<60-70>`: the scan starts at the marker; the 14 characters before it are its lead.
  token({
    id: 'terraform-cloud-token', description: 'HCP Terraform / Terraform Cloud and Vagrant Cloud API tokens', source: 'gitleaks:hashicorp-tf-api-token',
    keywords: ['.atlasv1.'], lead: '[A-Za-z0-9]{14}', body: '\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}', redacted: ['{alnum:14}.atlasv1.{b64url:67}'], kept: ['the .atlasv1. marker', '{alnum:20}.atlasv1.{alnum:67}'],
  }),
  token({
    id: 'sonarqube-token', description: 'SonarQube user (squ_), project (sqp_) and analysis (sqa_) tokens; SonarCloud tokens (sqco_)', source: 'gitleaks:sonar-api-token',
    keywords: ['squ_', 'sqp_', 'sqa_', 'sqco_'], body: 'sq[upa]_[a-f0-9]{40}|sqco_[A-Za-z0-9]{59}', glued: true,
    redacted: ['squ_{hex:40}', 'sqp_{hex:40}', 'sqa_{hex:40}', 'sqco_{alnum:59}'], kept: ['squ_short', 'sqp_{hex:20}'],
  }),
  token({
    id: 'sentry-token', description: 'Sentry user auth tokens (sntryu_) and organization tokens (sntrys_)', source: 'gitleaks:sentry-org-token',
    keywords: ['sntryu_', 'sntrys_'], body: 'sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/]{50,400}={0,2}_[A-Za-z0-9+/]{43}', glued: true,
    redacted: ['sntryu_{hex:64}', 'sntrys_eyJpYXQiOjE3{alnum:120}_{alnum:43}'], kept: ['sntryu_{hex:20}'],
  }),
  token({
    id: 'tailscale-key', description: 'Tailscale auth keys, API access tokens, OAuth client secrets', source: 'trufflehog:tailscale',
    keywords: ['tskey-'], body: 'tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,24}-[A-Za-z0-9]{16,80}', glued: true,
    redacted: ['tskey-auth-k{alnum:11}CNTRL-{alnum:33}', 'tskey-api-k{alnum:11}CNTRL-{alnum:33}', 'tskey-client-k{alnum:11}CNTRL-{alnum:33}'], kept: ['tskey-auth-short'],
  }),
  token({
    id: 'onepassword-token', description: '1Password service-account tokens', source: 'gitleaks:1password-service-account-token',
    keywords: ['ops_eyj'], body: 'ops_eyJ[A-Za-z0-9+/]{250,4000}={0,3}', glued: true, redacted: ['ops_eyJ{alnum:300}'], kept: ['ops_eyJ{alnum:40}'],
  }),
  token({
    id: 'onepassword-secret-key', description: '1Password account secret keys', source: 'gitleaks:1password-secret-key',
    keywords: ['a3-'], body: 'A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}',
    redacted: ['A3-{uppernum:6}-{uppernum:11}-{uppernum:5}-{uppernum:5}-{uppernum:5}'], kept: ['A3-paper', 'size A3-ABCDEF'],
  }),
  token({
    id: 'figma-token', description: 'Figma personal access tokens and OAuth tokens', source: 'trufflehog:figmapersonalaccesstoken',
    stop: 'fig', keywords: ['figd_', 'figp_', 'figu_', 'figo_', 'figur_', 'figuh_', 'figor_', 'figoh_'], body: `fig(?:d|p|[uo][rh]?)_${tail('fig', 40, 54, '_=-')}`, glued: true,
    redacted: ['figd_{b64url:40}'], kept: ['figd_short'],
  }),
  token({
    id: 'contentful-token', description: 'Contentful personal access tokens', source: 'trufflehog:contentfulpersonalaccesstoken',
    stop: 'CFPAT-', keywords: ['cfpat-'], body: `CFPAT-${tail('CFPAT-', 43, 43)}`, glued: true, redacted: ['CFPAT-{b64url:43}'], kept: ['CFPAT-short'],
  }),
  token({
    id: 'cloudflare-token', description: 'Cloudflare Origin CA keys', source: 'gitleaks:cloudflare-origin-ca-key',
    keywords: ['v1.0-'], body: 'v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}', redacted: ['v1.0-{hex:24}-{hex:146}'], kept: ['v1.0-beta', 'v1.0-{hex:24}'],
  }),
  token({
    id: 'cloudflare-token', description: 'Cloudflare user and account API tokens (cfut_, cfat_) and global API keys (cfk_)', source: 'trufflehog:cloudflareapitoken',
    keywords: ['cfut_', 'cfat_', 'cfk_'], body: 'cf(?:[ua]t|k)_[A-Za-z0-9]{40}[a-f0-9]{8}', glued: true,
    redacted: ['cfut_{alnum:40}{hex:8}', 'cfat_{alnum:40}{hex:8}', 'cfk_{alnum:40}{hex:8}'], kept: ['cfk_short'],
  }),
  token({
    id: 'buildkite-token', description: 'Buildkite API access tokens', source: 'trufflehog:buildkite',
    keywords: ['bkua_'], body: 'bkua_[a-z0-9]{40}', glued: true, redacted: ['bkua_{lowernum:40}'], kept: ['bkua_short'],
  }),
  token({
    id: 'netlify-token', description: 'Netlify personal access tokens', source: 'trufflehog:netlify',
    stop: 'nfp_', keywords: ['nfp_'], body: `nfp_${tail('nfp_', 36, 36, '_')}`, glued: true, redacted: ['nfp_{alnum:36}'], kept: ['nfp_short'],
  }),
  token({
    id: 'deno-deploy-token', description: 'Deno Deploy personal and organization tokens', source: 'trufflehog:deno',
    keywords: ['ddp_', 'ddw_'], body: 'dd[pw]_[A-Za-z0-9]{36}', glued: true, redacted: ['ddp_{alnum:36}'], kept: ['ddp_short'],
  }),
  token({
    id: 'pulumi-token', description: 'Pulumi access tokens', source: 'gitleaks:pulumi-api-token',
    keywords: ['pul-'], body: 'pul-[a-f0-9]{40}', glued: true, redacted: ['pul-{hex:40}'], kept: ['pul-request'],
  }),
  token({
    id: 'prefect-key', description: 'Prefect Cloud API keys', source: 'gitleaks:prefect-api-token',
    keywords: ['pnu_'], body: 'pnu_[A-Za-z0-9]{36}', glued: true, redacted: ['pnu_{alnum:36}'], kept: ['pnu_short'],
  }),
  token({
    id: 'harness-token', description: 'Harness personal (pat.) and service-account (sat.) tokens', source: 'gitleaks:harness-api-key',
    keywords: ['pat.', 'sat.'], body: '(?:pat|sat)\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}',
    redacted: ['pat.{b64url:22}.{alnum:24}.{alnum:20}', 'sat.{b64url:22}.{alnum:24}.{alnum:20}'], kept: ['pat.example.com'],
  }),
  token({
    id: 'dynatrace-token', description: 'Dynatrace API tokens', source: 'gitleaks:dynatrace-api-token',
    keywords: ['dt0c01.'], body: 'dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}', glued: true, redacted: ['dt0c01.{uppernum:24}.{alnum:64}'], kept: ['dt0c01.short'],
  }),
  token({
    id: 'posthog-key', description: 'PostHog personal API keys', source: 'trufflehog:posthog',
    stop: 'phx_', keywords: ['phx_'], body: `phx_${tail('phx_', 43, 48, '_')}`, glued: true, redacted: ['phx_{alnum:43}'], kept: ['phx_short'],
  }),
  token({
    id: 'readme-key', description: 'ReadMe API keys', source: 'gitleaks:readme-api-token',
    keywords: ['rdme_'], body: 'rdme_[a-z0-9]{70}', glued: true, redacted: ['rdme_{lowernum:70}'], kept: ['rdme_short'],
  }),
  token({
    id: 'rubygems-key', description: 'RubyGems API keys', source: 'gitleaks:rubygems-api-token',
    keywords: ['rubygems_'], body: 'rubygems_[a-f0-9]{48}', glued: true, redacted: ['rubygems_{hex:48}'], kept: ['rubygems_org'],
  }),
  token({
    id: 'clojars-token', description: 'Clojars deploy tokens', source: 'gitleaks:clojars-api-token',
    keywords: ['clojars_'], body: 'CLOJARS_[a-zA-Z0-9]{60}', glued: true, redacted: ['CLOJARS_{lowernum:60}'], kept: ['CLOJARS_USERNAME'],
  }),
  token({
    id: 'nuget-key', description: 'NuGet API keys', source: 'trufflehog:nugetapikey',
    keywords: ['oy2'], body: 'oy2[a-z0-9]{43}', redacted: ['oy2{lowernum:43}'], kept: ['oy2short'],
  }),
  token({
    id: 'artifactory-token', description: 'JFrog Artifactory API keys (AKCp) and reference tokens (cmVmdGtu)', source: 'trufflehog:artifactory',
    keywords: ['akcp', 'cmvmdgtu'], body: 'AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56}', redacted: ['AKCp{alnum:69}', 'cmVmdGtu{alnum:56}'], kept: ['AKCp{alnum:20}'],
  }),
  token({
    id: 'octopus-deploy-key', description: 'Octopus Deploy API keys', source: 'gitleaks:octopus-deploy-api-key',
    keywords: ['api-'], body: 'API-[A-Z0-9]{26}', accept: (s) => /\d/.test(s.slice(4)) && /[A-Z]/.test(s.slice(4)),
    redacted: ['API-{uppernum:26}'], kept: ['API-DOCUMENTATION-REFERENCE', 'API-12345678901234567890123456'],
  }),
  token({
    id: 'scalingo-token', description: 'Scalingo API tokens', source: 'gitleaks:scalingo-api-token',
    stop: 'tk-us-', keywords: ['tk-us-'], body: `tk-us-${tail('tk-us-', 48, 48)}`, glued: true, redacted: ['tk-us-{b64url:48}'], kept: ['tk-us-east'],
  }),
  token({
    id: 'sourcegraph-token', description: 'Sourcegraph access tokens (sgp_) and Cody gateway keys (slk_)', source: 'trufflehog:sourcegraph',
    keywords: ['sgp_', 'slk_'], body: 'sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}|slk_[a-f0-9]{64}', glued: true,
    redacted: ['sgp_{hex:16}_{hex:40}', 'slk_{hex:64}'], kept: ['sgp_short'],
  }),
  token({
    id: 'openshift-token', description: 'OpenShift user tokens', source: 'gitleaks:openshift-user-token',
    keywords: ['sha256~'], body: 'sha256~[A-Za-z0-9_-]{43}', glued: true, redacted: ['sha256~{b64url:43}'], kept: ['sha256~short'],
  }),
  {
    id: 'gitlab-session-cookie', description: 'GitLab session cookies', source: 'gitleaks:gitlab-session-cookie',
    examples: { redacted: ['Cookie: _gitlab_session={lowernum:32}'], kept: ['_gitlab_session=short'] },
    keywords: ['_gitlab_session='], group: 1, pattern: re(`_gitlab_session=([0-9a-z]{32})${R}`),
  },
  token({
    id: 'bitbucket-token', description: 'Bitbucket Data Center HTTP access tokens (BBDC-) and Bitbucket Cloud app passwords (ATBB)', source: 'trufflehog:bitbucketapppassword',
    keywords: ['bbdc-', 'atbb'], body: 'BBDC-[A-Za-z0-9+/@_-]{40,50}|ATBB[A-Za-z0-9]{28,60}', glued: true, accept: (s) => s.startsWith('BBDC-') || mixed(s.slice(4)),
    redacted: ['BBDC-{alnum:44}', 'ATBB{alnum:28}{HEX:8}'], kept: ['ATBBCLOUDAPPPASSWORDSAREDEPRECATEDNOW'],
  }),
  token({
    id: 'infracost-token', description: 'Infracost API tokens', source: 'gitleaks:infracost-api-token',
    keywords: ['ico-'], body: 'ico-[A-Za-z0-9]{32}', redacted: ['ico-{alnum:32}'], kept: ['favico-{alnum:32}'],
  }),
  token({
    id: 'defined-networking-token', description: 'Defined Networking (Nebula) API tokens', source: 'gitleaks:defined-networking-api-token',
    keywords: ['dnkey-'], body: 'dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}', glued: true, redacted: ['dnkey-{alnum:26}-{alnum:52}'], kept: ['dnkey-short'],
  }),
  token({
    id: 'intra42-secret', description: '42 (intra) client secrets', source: 'gitleaks:intra42-client-secret',
    keywords: ['s-s4t2'], body: 's-s4t2(?:ud|af)-[a-f0-9]{64}', glued: true, redacted: ['s-s4t2ud-{hex:64}'], kept: ['s-s4t2ud-short'],
  }),
  token({
    id: 'frameio-token', description: 'Frame.io API tokens', source: 'gitleaks:frameio-api-token',
    stop: 'fio-u-', keywords: ['fio-u-'], body: `fio-u-${tail('fio-u-', 64, 64, '_=-')}`, glued: true, redacted: ['fio-u-{b64url:64}'], kept: ['fio-u-short'],
  }),
  token({
    id: 'endorlabs-key', description: 'Endor Labs API keys', source: 'trufflehog:endorlabs',
    keywords: ['endr+'], body: 'endr\\+[A-Za-z0-9-]{16}', redacted: ['endr+{alnum:16}'], kept: ['endr+short'],
  }),
  token({
    id: 'nightfall-key', description: 'Nightfall API keys', source: 'trufflehog:nightfall',
    keywords: ['nf-'], body: 'NF-[A-Za-z0-9]{32}', minEntropy: 3.5, redacted: ['NF-{alnum:32}'], kept: ['NF-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  }),
  token({
    id: 'rootly-key', description: 'Rootly API keys', source: 'trufflehog:rootly',
    keywords: ['rootly_'], body: 'rootly_[a-f0-9]{64}', glued: true, redacted: ['rootly_{hex:64}'], kept: ['rootly_api'],
  }),
  token({
    id: 'saladcloud-key', description: 'SaladCloud API keys', source: 'trufflehog:saladcloudapikey',
    keywords: ['salad_cloud_'], body: 'salad_cloud_[A-Za-z0-9]{1,7}_[A-Za-z0-9]{7,235}', glued: true, redacted: ['salad_cloud_user_{alnum:40}'], kept: ['salad_cloud_api'],
  }),
  token({
    id: 'apify-token', description: 'Apify API tokens', source: 'trufflehog:apify',
    keywords: ['apify_api_'], body: 'apify_api_[A-Za-z0-9-]{36}', glued: true, redacted: ['apify_api_{alnum:36}'], kept: ['apify_api_client'],
  }),
  token({
    id: 'adafruit-key', description: 'Adafruit IO keys', source: 'trufflehog:adafruitio',
    keywords: ['aio_'], body: 'aio_[A-Za-z0-9]{28}', glued: true, redacted: ['aio_{alnum:28}'], kept: ['aio_http'],
  }),
  token({
    id: 'ubidots-token', description: 'Ubidots tokens', source: 'trufflehog:ubidots',
    keywords: ['bbff-'], body: 'BBFF-[A-Za-z0-9]{30}', glued: true, redacted: ['BBFF-{alnum:30}'], kept: ['BBFF-short'],
  }),
  token({
    id: 'nvidia-key', description: 'NVIDIA NGC / build.nvidia.com API keys', source: 'trufflehog:nvapi',
    stop: 'nvapi-', keywords: ['nvapi-'], body: `nvapi-${tail('nvapi-', 64, 64)}`, glued: true, redacted: ['nvapi-{b64url:64}'], kept: ['nvapi-short'],
  }),
  token({
    id: 'langfuse-key', description: 'Langfuse secret keys', source: 'trufflehog:langfuse',
    keywords: ['sk-lf-'], body: `sk-lf-${UUID}`, glued: true, redacted: ['sk-lf-{uuid}'], kept: ['pk-lf-{uuid}'],
  }),
  token({
    id: 'elevenlabs-key', description: 'ElevenLabs API keys', source: 'trufflehog:elevenlabs',
    keywords: ['sk_'], body: 'sk_[a-f0-9]{48}', redacted: ['sk_{hex:48}'], kept: ['sk_{hex:20}', 'task_{hex:48}'],
  }),
  token({
    id: 'vault-token', description: 'HashiCorp Vault legacy service tokens (s. + 24)', source: 'gitleaks:vault-service-token',
    keywords: ['s.'], body: 's\\.[A-Za-z0-9]{24}', accept: (s) => mixed(s.slice(2)),
    redacted: ['s.{alnum:24}'], kept: ['items.{alnum:24}', 's.ThisIsJustAnIdentifierX'],
  }),
  token({
    id: 'newrelic-key', description: 'New Relic license keys (…FFFFNRAL)', source: 'trufflehog:newreliclicensekey',
    keywords: ['ffffnral'], lead: '[a-f0-9]{32}|eu01xx[a-f0-9]{26}', body: 'FFFFNRAL', redacted: ['{hex:32}FFFFNRAL'], kept: ['FFFFNRAL', '{hex:20}FFFFNRAL'],
  }),
  token({
    id: 'newrelic-key', description: 'New Relic mobile app tokens (…-NRMA)', source: 'trufflehog:newrelicmobileapptoken',
    keywords: ['-nrma'], lead: 'AA[a-f0-9]{40}|eu01xx[a-f0-9]{36}', body: '-NRMA', redacted: ['AA{hex:40}-NRMA'], kept: ['{hex:10}-NRMA'],
  }),
  token({
    id: 'twitter-bearer-token', description: 'X (Twitter) app bearer tokens', source: 'gitleaks:twitter-bearer-token',
    keywords: ['aaaaaaaaaaaaaaaaaaaaaa'], body: 'A{22}[A-Za-z0-9%]{80,100}', accept: (s) => mixed(s.slice(22)),
    redacted: ['AAAAAAAAAAAAAAAAAAAAAA{alnum:90}'], kept: ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  }),
  token({
    id: 'fullstory-key', description: 'FullStory API keys', source: 'trufflehog:fullstory',
    keywords: ['na1.'], body: 'na1\\.[A-Za-z0-9+/]{100}', redacted: ['na1.{alnum:100}'], kept: ['na1.example.com'],
  }),
  token({
    id: 'voiceflow-key', description: 'Voiceflow API keys', source: 'trufflehog:voiceflow',
    keywords: ['vf.'], body: 'VF\\.(?:(?:DM|WS)\\.)?[a-fA-F0-9]{24}\\.[A-Za-z0-9]{16}', redacted: ['VF.DM.{hex:24}.{alnum:16}'], kept: ['VF.DM.short'],
  }),
  token({
    id: 'mailchimp-key', description: 'Mailchimp API keys (32 hex, -us and the data centre)', source: 'gitleaks:mailchimp-api-key',
    keywords: ['-us'], lead: '[a-f0-9]{32}', body: '-us\\d{1,2}', redacted: ['{hex:32}-us21'], kept: ['en-us', '{hex:20}-us1'],
  }),
  token({
    id: 'maxmind-license-key', description: 'MaxMind license keys', source: 'gitleaks:maxmind-license-key',
    keywords: ['_mmk'], lead: '[A-Za-z0-9]{6}_[A-Za-z0-9]{29}', body: '_mmk', redacted: ['{alnum:6}_{alnum:29}_mmk'], kept: ['cache_mmk'],
  }),
  token({
    id: 'clickhouse-cloud-key', description: 'ClickHouse Cloud API secret keys', source: 'gitleaks:clickhouse-cloud-api-secret-key',
    keywords: ['4b1d'], body: '4b1d[A-Za-z0-9]{38}', accept: (s) => mixed(s), redacted: ['4b1d{alnum:38}'], kept: ['4b1d{hex:38}'],
  }),
  token({
    id: 'sanity-token', description: 'Sanity API tokens (sk + 79)', source: 'trufflehog:sanity',
    keywords: ['sk'], body: 'sk[A-Za-z0-9]{79}', minEntropy: 4, accept: (s) => mixed(s), redacted: ['sk{alnum:79}'], kept: ['sk{lower:79}'],
  }),
  token({
    id: 'telnyx-key', description: 'Telnyx API v2 keys', source: 'trufflehog:telnyx',
    keywords: ['key'], body: 'KEY[0-9A-Za-z_-]{55}', accept: (s) => mixed(s.slice(3)),
    redacted: ['KEY0{alnum:26}_{alnum:27}'], kept: ['KEY_FILE_PATH_FOR_THE_APPLICATION_CONFIGURATION_SETTINGS_'],
  }),
];
