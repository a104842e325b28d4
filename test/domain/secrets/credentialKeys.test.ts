import { describe, expect, it } from 'vitest';
import { credentialStrength } from '../../../src/domain/secrets/credentialKeys.js';
import { REDACTED, redactValue } from '../../../src/domain/secrets/redact.js';
import { placeholder, redactTokens } from '../../../src/domain/secrets/tokenRules.js';

/**
 * Credential names (issue 27): a closed list of strong names, words that also name other things
 * (`named`), and patterns (`*_TOKEN`, `*_KEY`, `*_PAT`, `X-*-Key`, `*SECRET*`, `*PASSWORD*`) as
 * weak names whose secret-shaped values only are redacted. Kubernetes / Helm secret names and
 * references to secrets are not credential names.
 */

const CLASSES: Array<[string, string[]]> = [
  ['strong', ['password', 'db_password', 'api_key', 'X-API-KEY', 'GITHUB_TOKEN', 'SECRET_KEY', 'aws_secret_access_key', 'access_token', 'PRIVATE-TOKEN', 'x-vault-token']],
  ['named', ['auth', 'pass', 'cookie', 'Set-Cookie', 'secret', 'client_secret', 'clientSecret', 'signing_key', 'JWT_SECRET']],
  ['weak', [
    'token', 'pwd', 'credentials', 'VERCEL_TOKEN', 'SONAR_TOKEN', 'SNYK_TOKEN', 'DD_APP_KEY', 'GITLAB_PAT', 'githubPat', 'X-Figma-Token', 'X-Custom-Key',
    'licenseKey', 'license_key', 'MY_SECRET_VALUE', 'ADMIN_PASSWORD_PLAIN', 'GOOGLE_CREDENTIALS', 'CIRCLE_TOKEN',
  ]],
  ['none', [
    'existingSecret', 'existingSecretPasswordKey', 'tlsSecret', 'secretName', 'secretKeyRef', 'secretArn', 'secretsmanager', 'public_key', 'publicKey',
    'STRIPE_PUBLISHABLE_KEY', 'NEXT_PUBLIC_SITE_KEY', 'primary_key', 'sort_key', 'idempotency_key', 'cache_key', 'next_page_token', 'nextPageToken',
    'monkey', 'compat', 'keyboard', 'hotkey', 'tokenizer', 'max_tokens', 'secretary', 'KEY_ID', 'api_key_header', 'token_type', 'ssh_key',
  ]],
];

describe.each(CLASSES)('%s names', (cls, names) => {
  it.each(names.map((n) => [n]))('%s', (name) => {
    expect(credentialStrength(name) ?? 'none').toBe(cls);
  });
});

describe('names as patterns, in text: a secret-shaped value is redacted, another value is kept', () => {
  const VALUE = 'Zq8kP3vWm7xRt2nLq9Yb4cD6';
  it.each([
    'VERCEL_TOKEN', 'SONAR_TOKEN', 'SNYK_TOKEN', 'DD_APP_KEY', 'GITLAB_PAT', 'X-Figma-Token', 'MY_SECRET_VALUE', 'ADMIN_PASSWORD_PLAIN',
  ].map((n) => [n]))('%s', (name) => {
    expect(redactTokens(`export ${name}=${VALUE}`)).toBe(`export ${name}=${placeholder('generic-credential')}`);
    expect(redactTokens(`${name}: "${VALUE}"`)).toBe(`${name}: "${placeholder('generic-credential')}"`);
    for (const kept of ['3600', 'enabled', 'uploads/2024/a1b2c3.png', 'home.title2', 'v1.2.3', '2024-06-01', 'ann@example.com', '$VERCEL', 'https://x.example/a1']) {
      expect(redactTokens(`${name}=${kept}`), kept).toBe(`${name}=${kept}`);
    }
  });

  it('a UUID under SNYK_TOKEN, 40 hex under DD_APP_KEY are secret-shaped', () => {
    const uuid = '3f9a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    expect(redactTokens(`SNYK_TOKEN=${uuid}`)).toBe(`SNYK_TOKEN=${placeholder('generic-credential')}`);
    expect(redactTokens('DD_APP_KEY=0123456789abcdef0123456789abcdef01234567')).toBe(`DD_APP_KEY=${placeholder('generic-credential')}`);
  });

  it('as member names: secret-shaped values only', () => {
    const rec = { kind: 'event', type: 'env', payload: { VERCEL_TOKEN: VALUE, SONAR_TOKEN: 'none', DD_APP_KEY: 'dd-app-key', 'X-Custom-Key': VALUE, GITLAB_PAT: VALUE } };
    const r = redactValue(rec, JSON.stringify(rec));
    expect(r.value).toEqual({ ...rec, payload: { VERCEL_TOKEN: REDACTED, SONAR_TOKEN: 'none', DD_APP_KEY: 'dd-app-key', 'X-Custom-Key': REDACTED, GITLAB_PAT: REDACTED } });
  });
});
