import { describe, expect, it } from 'vitest';
import { checkEnvName } from '../../../src/domain/secrets/envName.js';

/**
 * A secret given where an environment variable NAME belongs (issue 27, finding 5): refused with
 * a reason that never holds what was given.
 */
const GHP = `ghp_${'Zq8kP3vWm7xRt2nLq9Yb4cD6eF1gH5jK0mN2'}`;
const PASTED_KEY = 'Zq8kP3vWm7xRt2nLq9Yb4cD6eF1gH5jK'; // a random key with no known prefix

describe('checkEnvName', () => {
  it.each(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', '_PRIVATE', 'a', 'GITHUB_TOKEN', 'MyService2Key', 'AWS_ACCESS_KEY_ID', 'X'.repeat(128), 'NODE_OPTIONS', 'APP_V2_TOKEN_2024'])('%s is a name', (name) => {
    expect(checkEnvName(name)).toEqual({ ok: true });
  });

  it.each([
    ['empty', ''], ['a blank', 'MY KEY'], ['a dash', 'my-key'], ['a leading digit', '1PASSWORD'], ['non-ASCII', 'CLÉ'], ['too long', 'X'.repeat(129)],
    ['a value with symbols', 'hunter2!Secret'], ['a URL', 'https://api.example.com'],
  ])('%s is not a name', (_label, name) => {
    const r = checkEnvName(name);
    expect(r.ok).toBe(false);
    if (!r.ok && name.length > 0) expect(r.reason).not.toContain(name);
  });

  it.each([['a GitHub token', GHP], ['a random pasted key', PASTED_KEY], ['a key inside a name', `MY_${PASTED_KEY}_KEY`]])('%s is refused as secret-shaped', (_label, name) => {
    const r = checkEnvName(name);
    expect(r).toEqual({ ok: false, reason: 'this looks like a credential, not the name of an environment variable' });
  });
});
