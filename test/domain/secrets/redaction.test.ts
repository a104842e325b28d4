import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCredentialKey, isKeptKey } from '../../../src/domain/secrets/credentialKeys.js';
import { memberPath } from '../../../src/domain/secrets/paths.js';
import { REDACTED, redactValue } from '../../../src/domain/secrets/redact.js';
import { redactTokens, TOKEN_RULES } from '../../../src/domain/secrets/tokenRules.js';
import type { RecordInput, StoredRecord } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { journalOf } from '../../backends/file/storeHelpers.js';
import { prng, storeOn } from './secretsHelpers.js';

/**
 * Redaction on write (protocol/README.md section 10): credential-like member names, well-known
 * token formats in free text (also in JSON held in strings), what must stay byte-exact, and
 * idempotence. Fake tokens are built from a seeded generator, so no real credential is in here.
 */

const rand = prng(0x5eed);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const fake = (n: number, alphabet = ALNUM) => [...rand(n)].map((b) => alphabet[b % alphabet.length]).join('');
const URLSAFE = `${ALNUM}_-`;

/** [label, token as it stands in text, rule, text it becomes]. */
type TokenCase = [string, string, string, string?];

const PEM_BODY = `MIIEpAIBAAKCAQEA${fake(64)}\n${fake(64)}\n${fake(40)}==`;
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

const TOKENS: TokenCase[] = [
  ['OpenAI legacy key', `sk-${fake(48)}`, 'openai-key'],
  ['OpenAI project key', `sk-proj-${fake(156, URLSAFE)}`, 'openai-key'],
  ['OpenAI service-account key', `sk-svcacct-${fake(80, URLSAFE)}`, 'openai-key'],
  ['OpenAI admin key', `sk-admin-${fake(80, URLSAFE)}`, 'openai-key'],
  ['Anthropic API key', `sk-ant-api03-${fake(93, URLSAFE)}AA`, 'anthropic-key'],
  ['Anthropic admin key', `sk-ant-admin01-${fake(93, URLSAFE)}AA`, 'anthropic-key'],
  ['GitHub personal token', `ghp_${fake(36)}`, 'github-token'],
  ['GitHub OAuth token', `gho_${fake(36)}`, 'github-token'],
  ['GitHub server token', `ghs_${fake(36)}`, 'github-token'],
  ['GitHub user-to-server token', `ghu_${fake(36)}`, 'github-token'],
  ['GitHub refresh token', `ghr_${fake(36)}`, 'github-token'],
  ['GitHub fine-grained token', `github_pat_11${fake(20)}_${fake(59)}`, 'github-token'],
  ['GitLab token', `glpat-${fake(20, URLSAFE)}`, 'gitlab-token'],
  ['AWS access key id', 'AKIAIOSFODNN7EXAMPLE', 'aws-access-key-id'],
  ['AWS temporary key id', `ASIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, 'aws-access-key-id'],
  ['Slack bot token', `xoxb-${fake(11, '0123456789')}-${fake(13, '0123456789')}-${fake(24)}`, 'slack-token'],
  ['Slack user token', `xoxp-${fake(11, '0123456789')}-${fake(11, '0123456789')}-${fake(32)}`, 'slack-token'],
  ['Google API key', `AIza${fake(35, URLSAFE)}`, 'google-api-key'],
  ['Stripe live secret key', `sk_live_${fake(24)}`, 'stripe-key'],
  ['Stripe restricted key', `rk_live_${fake(24)}`, 'stripe-key'],
  ['Stripe test key', `sk_test_${fake(24)}`, 'stripe-key'],
  ['npm token', `npm_${fake(36)}`, 'npm-token'],
  ['Hugging Face token', `hf_${fake(34)}`, 'huggingface-token'],
  ['JWT', JWT, 'jwt'],
  ['RSA private key', `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`, 'private-key'],
  ['PKCS#8 private key', `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`, 'private-key'],
  ['encrypted private key', `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${PEM_BODY}\n-----END ENCRYPTED PRIVATE KEY-----`, 'private-key'],
  ['EC private key', `-----BEGIN EC PRIVATE KEY-----\n${PEM_BODY}\n-----END EC PRIVATE KEY-----`, 'private-key'],
  ['OpenSSH private key', `-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----`, 'private-key'],
  ['PGP private key block', `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${PEM_BODY}\n-----END PGP PRIVATE KEY BLOCK-----`, 'private-key'],
  ['Bearer token', `Bearer ${fake(20)}.${fake(12, URLSAFE)}~+/${fake(4)}==`, 'bearer-token', 'Bearer <redacted:bearer-token>'],
  ['lower-case bearer, tab', `bearer\t${fake(30)}9`, 'bearer-token', 'bearer\t<redacted:bearer-token>'],
  // "Token X" in free text is prose as often as not ("Token /home/u/.config/tokens.json"): the
  // Token scheme is a credential in an Authorization header.
  ['Token scheme in an Authorization header', `Authorization: Token ${fake(24, '0123456789abcdef')}`, 'authorization-header', 'Authorization: Token <redacted:authorization-header>'],
  ['URL password', 'postgres://admin:S3cr3t-P4ss!@db.internal:5432/app', 'url-password', 'postgres://admin:<redacted:url-password>@db.internal:5432/app'],
  ['URL password, https', `https://deploy:${fake(20)}@git.example.com/org/repo.git`, 'url-password', 'https://deploy:<redacted:url-password>@git.example.com/org/repo.git'],
  ['URL password, no user name', 'redis://:hunter2hunter2@cache:6379/0', 'url-password', 'redis://:<redacted:url-password>@cache:6379/0'],
  ['token glued to a name', `GITHUB_TOKEN_ghp_${fake(36)}`, 'github-token', 'GITHUB_TOKEN_<redacted:github-token>'],
];

const placeholder = (rule: string) => `<redacted:${rule}>`;
const expected = ([, , rule, becomes]: TokenCase) => becomes ?? placeholder(rule);

describe('token rules', () => {
  // Every rule id of TOKEN_RULES has a family in credentialCorpus.test.ts.
  it('every rule here is a rule of TOKEN_RULES', () => {
    const ids = new Set(TOKEN_RULES.map((r) => r.id));
    for (const t of TOKENS) expect(ids, t[0]).toContain(t[2]);
  });

  it.each(TOKENS)('%s is replaced in free text by its rule', (_label, token, rule, becomes) => {
    const hits: string[] = [];
    expect(redactTokens(`before ${token} after`, (r) => hits.push(r))).toBe(`before ${becomes ?? placeholder(rule)} after`);
    expect(hits).toEqual([rule]);
    expect(redactTokens(`${token}`)).toBe(becomes ?? placeholder(rule)); // at the start and end of the text
    expect(redactTokens(`("${token}")`)).toBe(`("${becomes ?? placeholder(rule)}")`);
  });

  it.each(TOKENS)('%s: redactValue reports the path and the rule, in a value and in a key', (_label, token, rule, becomes) => {
    const value = { kind: 'event', payload: { list: ['x', `see ${token}`] } };
    const r = redactValue(value, JSON.stringify(value));
    expect(r.value).toEqual({ kind: 'event', payload: { list: ['x', `see ${becomes ?? placeholder(rule)}`] } });
    expect(r.redactions).toEqual([{ path: 'payload.list[1]', rule }]);
    if (rule === 'private-key') return; // multi-line keys are not member names
    const keyed = { kind: 'event', payload: { [token]: 1 } };
    const k = redactValue(keyed, JSON.stringify(keyed));
    const newKey = becomes ?? placeholder(rule);
    expect(k.value).toEqual({ kind: 'event', payload: { [newKey]: 1 } });
    expect(k.redactions).toEqual([{ path: memberPath('payload', newKey), rule }]); // the path names the key as stored
  });

  it('a PEM private key cut off before its END line: the header and its base64 body lines are redacted, nothing after', () => {
    const cut = `key:\n-----BEGIN PRIVATE KEY-----\n${PEM_BODY.slice(0, 70)}`;
    expect(redactTokens(cut)).toBe(`key:\n${placeholder('private-key')}`);
    const cutRsa = `-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${fake(30)}`;
    expect(redactTokens(`x ${cutRsa}`)).toBe(`x ${placeholder('private-key')}`);
    // Old behaviour (the bug): everything after the header was deleted.
    const code = `-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${fake(40)}\nconst user = load();\nreturn user;`;
    expect(redactTokens(code)).toBe(`${placeholder('private-key')}\nconst user = load();\nreturn user;`);
  });

  it('two tokens in one text are both replaced, in order', () => {
    const hits: string[] = [];
    const a = `ghp_${fake(36)}`;
    const out = redactTokens(`export A=${a}\nexport B=${JWT}\n`, (r) => hits.push(r));
    expect(out).toBe(`export A=${placeholder('github-token')}\nexport B=${placeholder('jwt')}\n`);
    expect(hits.sort()).toEqual(['github-token', 'jwt']);
  });
});

// ---------------------------------------------------------------------------------------------

const CREDENTIAL_KEYS = [
  'api_key', 'apikey', 'api-key', 'API_KEY', 'ApiKey', 'apiKey', 'Api-Key', 'api.key', 'api key', 'x-api-key', 'X-API-KEY', 'X-Api-Key', 'x_api_key',
  'access_token', 'accessToken', 'ACCESS-TOKEN', 'refresh_token', 'refreshToken', 'id_token', 'idToken', 'ID_TOKEN',
  'auth', 'Auth', 'AUTH', 'authorization', 'Authorization', 'proxy-authorization',
  'password', 'Password', 'PASSWORD', 'passwd', 'secret', 'Secret', 'client_secret', 'clientSecret', 'CLIENT-SECRET',
  'private_key', 'privateKey', 'PRIVATE-KEY', 'cookie', 'Cookie', 'set-cookie', 'Set-Cookie',
  'openai_api_key', 'OPENAI_API_KEY', 'db_password', 'dbPassword', 'aws_secret_access_key',
];

describe('credential-like member names', () => {
  it.each(CREDENTIAL_KEYS)('%s: its string value is stored as "<redacted>"', (key) => {
    expect(isCredentialKey(key)).toBe(true);
    const value = { kind: 'event', payload: { [key]: 'plain value 123', other: 'kept' } };
    const r = redactValue(value, JSON.stringify(value));
    expect(r.value).toEqual({ kind: 'event', payload: { [key]: REDACTED, other: 'kept' } });
    expect(r.redactions).toEqual([{ path: memberPath('payload', key), rule: 'credential-key' }]);
  });

  // Old behaviour (the bug): every string of the subtree below `auth` was redacted, schema
  // keywords and the user name too. A credential name covers the strings it holds directly or in
  // arrays; members of an object below it are judged by their own names.
  it('a credential name redacts its string leaves (also in arrays), not the members of an object below it', () => {
    const value = {
      kind: 'event',
      payload: {
        auth: { type: 'basic', user: 'ann', pass: 'pw', port: 8080, client_id: 'kept-id' },
        cookie: ['a=1', 'b=2'],
        password: null, api_key: 12345, secret: true, token: 'Hello', tokenizer: 'cl100k_base',
      },
    };
    const r = redactValue(value, JSON.stringify(value));
    expect(r.value).toEqual({
      kind: 'event',
      payload: {
        auth: { type: 'basic', user: 'ann', pass: REDACTED, port: 8080, client_id: 'kept-id' },
        cookie: [REDACTED, REDACTED],
        password: null, api_key: 12345, secret: true, token: 'Hello', tokenizer: 'cl100k_base',
      },
    });
    expect(r.redactions.map((x) => x.path)).toEqual(['payload.auth.pass', 'payload.cookie[0]', 'payload.cookie[1]']);
  });

  it.each([1, 2, 3])('inside tool-call arguments stringified %i time(s): redacted in place, every other byte kept', (levels) => {
    const wrap = (o: unknown) => {
      let t = JSON.stringify(o);
      for (let i = 1; i < levels; i++) t = JSON.stringify(t);
      return t;
    };
    const gh = `ghp_${fake(36)}`;
    const args = { query: `use ${gh} please`, api_key: 'k-123456', user_id: 'u_1', nested: { 'X-Api-Key': 'abc' } };
    const record = { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'f', arguments: wrap(args).replace(/,/g, ', ') }] } };
    const r = redactValue(record, JSON.stringify(record));
    const p = `message.toolCalls[0].arguments${'<json>'.repeat(levels)}`;
    const want = { query: `use ${placeholder('github-token')} please`, api_key: REDACTED, user_id: 'u_1', nested: { 'X-Api-Key': REDACTED } };
    expect(r.value).toEqual({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'f', arguments: wrap(want).replace(/,/g, ', ') }] } });
    expect(r.redactions).toEqual([
      { path: `${p}.query`, rule: 'github-token' },
      { path: `${p}.api_key`, rule: 'credential-key' },
      { path: `${p}.nested["X-Api-Key"]`, rule: 'credential-key' },
    ]);
  });

  it('a __proto__ member of JSON held in a string survives redaction of its siblings', () => {
    const args = '{"__proto__":{"polluted":1},"api_key":"k-123456"}';
    const record = { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c', name: 'f', arguments: args }] } };
    const r = redactValue(record, JSON.stringify(record));
    const out = (r.value as typeof record).message.toolCalls[0]!.arguments;
    expect(out).toBe('{"__proto__":{"polluted":1},"api_key":"<redacted>"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a list of tokens under a plural name is not taken for a usage counter', () => {
    const gh = `ghp_${fake(36)}`;
    const value = { kind: 'event', payload: { auth_tokens: [gh], access_tokens: `x ${gh}`, input_tokens: 12 } };
    const r = redactValue(value, JSON.stringify(value));
    expect(r.value).toEqual({ kind: 'event', payload: { auth_tokens: [placeholder('github-token')], access_tokens: `x ${placeholder('github-token')}`, input_tokens: 12 } });
  });
});

// ---------------------------------------------------------------------------------------------

const b64Image = `data:image/png;base64,${Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), prng(7)(48 * 1024)]).toString('base64')}`;

const NEGATIVES: Array<[string, unknown]> = [
  ['"Bearer of good news"', 'He was the Bearer of good news, and bearer of the ring.'],
  ['a no-break space after Bearer', `Authorization: Bearer\u00a0${'abcdef0123456789abcdef'}`],
  ['Bearer with a letters-only word', 'Bearer abcdefghijklmnopqrstuvwxyz'],
  ['Bearer with a template placeholder', 'Authorization: Bearer ${token}'],
  ['usage counters', {
    usage: {
      input_tokens: 1234, output_tokens: 56, cache_creation_input_tokens: 0, cache_read_input_tokens: 789,
      max_tokens: 4096, token_count: 12, totalTokenCount: 99, promptTokenCount: 5, max_completion_tokens: 100, reasoning_tokens: 5,
    },
  }],
  ['usage counters as strings', { input_tokens: '1234', output_tokens: '56', max_tokens: '4096' }],
  ['ids', {
    id: 'toolu_01A09q90qw90lq917835lq9', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', toolCallId: 'call_abc123',
    request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy', messageId: 'msg_01XFDUDYJgAACzvnptvVoYEL', 'x-request-id': 'b1946ac9',
    trace_id: `sk-${fake(40)}`, // id members are kept byte-exact whatever they look like
  }],
  ['signatures', {
    type: 'thinking', thinking: 'Let me think.',
    signature: `EqQBCkYIBxgCKkB${fake(60)}/AKIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/${fake(30)}==`,
    'x-hub-signature-256': `sha256=${fake(64, '0123456789abcdef')}`, jwtSignature: JWT,
  }],
  ['short token look-alikes', ['sk-abc123', 'ghp_short', 'AKIA1234', 'xoxb-1', 'hf_abc', 'npm_abc', 'glpat-abc', 'AIzaShort', 'sk_live_abc', 'eyJhbGciOiJIUzI1NiJ9', 'Token abc']],
  ['UUIDs', ['550e8400-e29b-41d4-a716-446655440000', 'F47AC10B-58CC-4372-A567-0E02B2C3D479']],
  ['prose and code', [
    'pip install scikit-learn  # the sk-learn package', 'npm run task-runner', 'a risk-free desk-top', 'ask-me-anything',
    'e83c5163316f89bfbde7d9ab23ca2e25604af290', 'git log --oneline e83c516', 'const apiKey = process.env.OPENAI_API_KEY;',
    'https://example.com:8443/path?a=b@c', 'user@example.com', 'git@github.com:org/repo.git', 'ssh://git@github.com/org/repo',
    'http://localhost:3000/api', 'The Token of appreciation', 'Bearer tokens are described in RFC 6750', 'the ghp_ prefix marks tokens',
    `risk-assessment-${fake(40)}`, `mask-${fake(40)}`,
  ]],
  ['a public key and a certificate', `-----BEGIN PUBLIC KEY-----\n${PEM_BODY}\n-----END PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----\n${PEM_BODY}\n-----END CERTIFICATE-----`],
  ['member names that only look like credentials', {
    token: 'Hello', tokens: ['Hel', 'lo'], tokenizer: 'cl100k_base', author: 'Ann', authority: 'x', next_page_token: 'abc', secretary: 'Bob',
    passwordless: 'enabled', keyboard: 'qwerty', api_version: '2024-06-01',
  }],
  ['base64 image data', b64Image],
];

describe('negatives: stored byte-exact', () => {
  it.each(NEGATIVES)('%s', async (_label, payload) => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({});
    const record: RecordInput = { kind: 'event', type: 'neg', payload };
    expect(redactValue(record, JSON.stringify(record))).toEqual({ value: record, redactions: [] });
    const r = await s.append(sessionId, [record]);
    expect(r.redactions).toBeUndefined();
    const { records } = await s.read(sessionId);
    expect(records[0]?.payload).toEqual(payload);
    expect(fs.readFileSync(journalOf(root, sessionId)).includes(Buffer.from(JSON.stringify(payload)))).toBe(true);
    await s.closeAll();
  });

  it('kept member names', () => {
    for (const k of ['input_tokens', 'cache_read_input_tokens', 'max_tokens', 'token_count', 'tool_use_id', 'toolCallId', 'signature', 'x-request-id']) {
      expect(isCredentialKey(k), k).toBe(false);
    }
    for (const k of ['tool_use_id', 'toolCallId', 'signature', 'thinkingSignature']) expect(isKeptKey(k), k).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

/** One record of everything that gets redacted. */
function everything(): RecordInput {
  const args = JSON.stringify({ api_key: 'k-1', q: `a ${TOKENS[6]![1]}`, deeper: JSON.stringify({ password: 'p', t: JWT }) });
  return {
    kind: 'message',
    message: {
      role: 'assistant',
      content: TOKENS.map((t) => `${t[0]}: ${t[1]}`).join('\n'),
      toolCalls: [{ id: 'call_1', name: 'f', arguments: args }, { id: 'call_2', name: 'g', arguments: JSON.stringify(args) }],
      headers: Object.fromEntries(CREDENTIAL_KEYS.map((k) => [k, `v-${k}`])),
      [`key ${TOKENS[0]![1]}`]: 'member name holding a token',
    },
  };
}

describe('idempotence and determinism', () => {
  it('redacting twice gives what redacting once gave, and nothing more to report', () => {
    const once = redactValue(everything(), JSON.stringify(everything()));
    expect(once.redactions.length).toBeGreaterThan(TOKENS.length + CREDENTIAL_KEYS.length);
    const twice = redactValue(once.value, JSON.stringify(once.value));
    expect(twice.redactions).toEqual([]);
    expect(twice.value).toBe(once.value); // nothing changed: the same object back
    const again = redactValue(everything(), JSON.stringify(everything()));
    expect(JSON.stringify(again.value)).toBe(JSON.stringify(once.value));
    expect(again.redactions).toEqual(once.redactions);
  });

  it('redactTokens is idempotent on every case', () => {
    for (const [, token] of TOKENS) {
      const once = redactTokens(`x ${token} y ${token}`);
      expect(redactTokens(once)).toBe(once);
    }
  });

  it('through the store: an already redacted record appends with no redactions and is stored the same', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({});
    const first = await s.append(sessionId, [everything()]);
    expect(first.redactions?.length).toBeGreaterThan(0);
    const [stored] = (await s.read(sessionId)).records as StoredRecord[];
    const { seq: _seq, ts: _ts, ...plain } = stored!;
    const second = await s.append(sessionId, [plain as RecordInput]);
    expect(second.redactions).toBeUndefined();
    const [, again] = (await s.read(sessionId)).records;
    const { seq: _s2, ts: _t2, ...plain2 } = again!;
    expect(JSON.stringify(plain2)).toBe(JSON.stringify(plain));
    const journal = fs.readFileSync(journalOf(root, sessionId), 'utf8');
    for (const [, token] of TOKENS) {
      for (const piece of token.split(/[\s:/@]+/).filter((p) => p.length >= 16)) expect(journal.includes(piece), piece).toBe(false);
    }
    await s.closeAll();
  });
});

describe('redactions in the append result', () => {
  it('each redaction carries the seq of its record in a multi-record batch; header redactions have seq 0', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const created = await s.create({ title: 'h', llm: { baseUrl: 'https://u:S3cretPass@llm.example.com/v1' }, metadata: { api_key: 'x' } });
    expect(created.redactions).toEqual([
      { seq: 0, path: 'llm.baseUrl', rule: 'url-password' },
      { seq: 0, path: 'metadata.api_key', rule: 'credential-key' },
    ]);
    const { sessionId } = created;
    await s.append(sessionId, [{ kind: 'event', type: 'pad', payload: 1 }]);
    const batch: RecordInput[] = TOKENS.flatMap(([, token], i) => [
      { kind: 'event', type: 'tok', payload: { text: `t ${token}` } },
      ...(i % 3 === 0 ? [{ kind: 'event', type: 'clean', payload: { text: 'nothing' } }] : []),
    ]);
    batch.push({ kind: 'event', type: 'cred', payload: { list: [{ password: 'a' }, { password: 'b' }] } });
    const r = await s.append(sessionId, batch);
    expect(r.firstSeq).toBe(2);
    const want = batch.flatMap((rec, i) => {
      const seq = r.firstSeq + i;
      if (rec.type === 'tok') return [{ seq, path: 'payload.text', rule: TOKENS.find(([, t]) => (rec.payload as { text: string }).text === `t ${t}`)![2] }];
      if (rec.type === 'cred') return [{ seq, path: 'payload.list[0].password', rule: 'credential-key' }, { seq, path: 'payload.list[1].password', rule: 'credential-key' }];
      return [];
    });
    expect(r.redactions).toEqual(want);
    const { records } = await s.read(sessionId, { afterSeq: 1 });
    for (const [i, rec] of batch.entries()) {
      if (rec.type !== 'tok') continue;
      const tc = TOKENS.find(([, t]) => (rec.payload as { text: string }).text === `t ${t}`)!;
      expect((records[i]!.payload as { text: string }).text).toBe(`t ${expected(tc)}`);
    }
    await s.closeAll();
  });
});
