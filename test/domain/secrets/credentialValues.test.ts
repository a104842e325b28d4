import { describe, expect, it } from 'vitest';
import { isExpression, isReference, isSecretShaped, isWordLike } from '../../../src/domain/secrets/credentialValues.js';
import { REDACTED, redactValue } from '../../../src/domain/secrets/redact.js';
import { placeholder, redactTokens } from '../../../src/domain/secrets/tokenRules.js';

/**
 * Values under credential names (issue 27): a reference or a name is not a credential; a word,
 * a lower-case identifier or a key id under a name that also means other things is kept; a dot
 * exempts only what looks like an expression.
 */

const member = (payload: Record<string, unknown>) => {
  const rec = { kind: 'event', type: 'x', payload };
  return redactValue(rec, JSON.stringify(rec));
};

describe('the dot exemption (finding 7)', () => {
  const left = 'Fq8vLm2Qx9Rt4Wz7Kp3NvT8';
  const right = 'Zb3NcY6hJ1sD5gF0aE2uI';
  it('a random value holding a dot is redacted like the same value without the dot', () => {
    expect(redactTokens(`SECRET_KEY=${left}.${right}`)).toBe(`SECRET_KEY=${placeholder('generic-credential')}`);
    expect(redactTokens(`SECRET_KEY=${left}${right}`)).toBe(`SECRET_KEY=${placeholder('generic-credential')}`);
    expect(redactTokens(`password: "${left}.${right}"`)).toBe(`password: "${placeholder('generic-credential')}"`);
    // letters only, no digit, but random: not an expression either
    expect(redactTokens('SECRET_KEY=FqvLmQxRtWzKpNvT.ZbNcYhJsDgFaEuI')).toBe(`SECRET_KEY=${placeholder('generic-credential')}`);
  });

  it('expressions are kept', () => {
    for (const t of ['secret_key = settings.SECRET_KEY', 'password = self.password', 'api_key = config.openai.apiKey', 'token = ctx.request.token', 'password = var.db_password']) {
      expect(redactTokens(t), t).toBe(t);
    }
    expect(isExpression('settings.SECRET_KEY')).toBe(true);
    expect(isExpression('Fq8vLm2Q.Zb3NcY6h')).toBe(false);
    expect(isExpression('FqvXTZbNkLmQ.ZbNpQrSt')).toBe(false);
  });
});

describe('word-like member values (finding 8)', () => {
  it.each([
    [{ auth: 'ldap' }], [{ pass: 'mem2reg' }], [{ cookie: 'accepted' }], [{ signing_key: 'kid-2024-01' }], [{ api_key: 'ANTHROPIC_API_KEY' }],
    [{ apiKey: 'env:OPENAI_API_KEY' }], [{ clientSecret: 'oauth2-proxy-client' }], [{ existingSecret: 'redis-credentials' }], [{ tlsSecret: 'wildcard-example-tls' }],
    [{ signingkey: '3AA5C34371567BD2' }],
  ])('%j is kept', (payload) => {
    const r = member(payload);
    expect(r.redactions).toEqual([]);
    expect((r.value as { payload: unknown }).payload).toBe(payload);
  });

  it('and in text', () => {
    for (const t of ['existingSecret: redis-credentials', 'clientSecret: oauth2-proxy-client', 'tlsSecret: wildcard-example-tls', '[user]\n\tsigningkey = 3AA5C34371567BD2', 'auth: ldap']) {
      expect(redactTokens(t), t).toBe(t);
    }
  });

  it('the same names with secret values are redacted', () => {
    const r = member({ auth: 'dXNlcjpwYXNzd29yZDEyMw==', pass: 'hunter2Xq9!', cookie: 'session=eyJ1c2VyIjoiYW5uIn0; Path=/', signing_key: 'Zq8kP3vWm7xRt2nLq9Yb4cD6', clientSecret: 'Zq8kP3vWm7xRt2nLq9Yb4cD6' });
    expect(r.redactions.map((x) => x.path)).toEqual(['payload.auth', 'payload.pass', 'payload.cookie', 'payload.signing_key', 'payload.clientSecret']);
    expect(Object.values((r.value as { payload: Record<string, string> }).payload)).toEqual([REDACTED, REDACTED, REDACTED, REDACTED, REDACTED]);
  });

  it('password names keep redacting words: a password is what it says', () => {
    expect(member({ password: 'correct-horse-battery' }).redactions).toEqual([{ path: 'payload.password', rule: 'credential-key' }]);
    expect(member({ password: 'hunter' }).redactions).toEqual([{ path: 'payload.password', rule: 'credential-key' }]);
  });

  it('isWordLike', () => {
    for (const w of ['ldap', 'mem2reg', 'accepted', 'kid-2024-01', 'redis-credentials', 'oauth2-proxy-client', 'LDAP', 'Basic']) expect(isWordLike(w), w).toBe(true);
    for (const w of ['abc123def456', 's3cr3t', 'Zq8kP3vW', 'pw', 'hunter2Xq9!', 'a'.repeat(41)]) expect(isWordLike(w), w).toBe(false);
  });
});

describe('secret references (finding 8)', () => {
  const REFS = [
    'op://prod/stripe/api-key', 'vault:secret/data/app#password', 'ref+vault://secret/data/app#/password', 'os.environ/OPENAI_API_KEY',
    'file:/run/secrets/db_password', 'sm://my-project/openai-key', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf',
    'arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api-key', 'env:OPENAI_API_KEY', 'projects/p1/secrets/db/versions/3', 'ANTHROPIC_API_KEY',
  ];
  it.each(REFS.map((r) => [r]))('%s is a reference: kept as a member value and in text', (ref) => {
    expect(isReference(ref)).toBe(true);
    expect(member({ api_key: ref, password: ref }).redactions).toEqual([]);
    for (const t of [`OPENAI_API_KEY=${ref}`, `password: ${ref}`, `"api_key": "${ref}"`]) expect(redactTokens(t), t).toBe(t);
  });
});

it('isSecretShaped', () => {
  for (const v of ['Zq8kP3vWm7xRt2nL', '3f9a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b', '0123456789abcdef0123456789abcdef01234567', 'Pw9x!kQ2zL']) expect(isSecretShaped(v), v).toBe(true);
  for (const v of ['3600', 'enabled', 'uploads/2024/a1b2c3.png', 'home.title2', 'v1.2.3', '2024-06-01T10:00:00Z', 'ann2@example.com', 'https://x.example/a1', 'ab12', 'with blank 12']) {
    expect(isSecretShaped(v), v).toBe(false);
  }
});
