import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/domain/errors.js';
import { refuseSecret } from '../../../src/domain/secrets/knownSecrets.js';
import { resolveSecrets } from '../../../src/domain/secrets/sessionSecrets.js';
import { tempDir } from '../../helpers.js';
import { indexSettled } from '../../backends/file/storeHelpers.js';
import { filesUnder, leaksUnder, rejects, runsOf, storeOn, VOCABULARY, writtenState } from './secretsHelpers.js';

/**
 * Registering known secrets (protocol/README.md section 10 and session/create): what is refused
 * and how the refusal reads, unset env vars, protection after a restart, and that values never
 * reach the store's files.
 */

const msg = (content: string) => ({ kind: 'message', message: { role: 'user', content } });

/** The refusal names the rule and (for env vars) the name, never the value nor a run of it. */
function expectRefusal(err: StoreError, rule: RegExp, value: string, name?: string): void {
  expect(err.message).toMatch(rule);
  if (name) expect(err.message).toContain(name);
  const text = `${err.message}\n${JSON.stringify(err)}`;
  if (value.length >= 3) expect(text.includes(value), text).toBe(false);
  // A vocabulary word is public and shares runs with the message's own words ("details",
  // "protocol"): only the whole value is looked for then.
  if (rule === VOCAB) return;
  for (const run of runsOf(value, Math.min(6, value.length))) expect(text.includes(run), `"${run}" in ${text}`).toBe(false);
}

const SHORT = /at least 8 characters/;
const VOCAB = /vocabulary/;
const LONG = /at most 4096 characters/;

describe('refused values', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['7 characters', 'Xy7#q2!', SHORT],
    ['one character', 'Q', SHORT],
    ['4 emoji (8 UTF-16 units, 4 characters)', '\u{1F511}\u{1F512}\u{1F513}\u{1F5DD}', SHORT],
    ['a record kind', 'interruption', VOCAB],
    ['a member name', 'reasoningDetails', VOCAB],
    ['part of a member name', 'otocolVersio', VOCAB],
    ['the journal format', 'session-sidecar/journal', VOCAB],
    ['a role', 'assistant', VOCAB],
    ['longer than 4096 characters', 'k'.repeat(4097), LONG],
  ];

  it.each(cases)('secrets.values: %s, at create: -32602 naming the rule and the index, never the value; nothing written', async (_l, value, rule) => {
    const root = tempDir();
    const s = storeOn(root);
    const before = writtenState(root);
    const err = await rejects(s.create({ title: 't' }, { values: ['Fine-Value-123', value] }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'secrets.values[1]' });
    expectRefusal(err, rule, value);
    expect(writtenState(root)).toEqual(before);
  });

  it.each(cases)('secrets.values: %s, at open: refused, the session is unchanged', async (_l, value, rule) => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({ title: 't' });
    await s.close(sessionId);
    const before = writtenState(root);
    const err = await rejects(s.open(sessionId, 'write', { values: [value] }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'secrets.values[0]' });
    expectRefusal(err, rule, value);
    expect(writtenState(root)).toEqual(before);
  });

  it.each(cases)('an env var holding %s, named by llm.apiKeyEnv: refused naming the variable, not its value', async (_l, value, rule) => {
    const root = tempDir();
    const s = storeOn(root, { env: { WEAK_PROVIDER_KEY: value } });
    const before = writtenState(root);
    const err = await rejects(s.create({ llm: { apiKeyEnv: 'WEAK_PROVIDER_KEY' } }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'llm.apiKeyEnv' });
    expectRefusal(err, rule, value, 'WEAK_PROVIDER_KEY');
    expect(writtenState(root)).toEqual(before);
  });

  it.each(cases)('an env var holding %s, named in secrets.env: refused naming the variable', async (_l, value, rule) => {
    const root = tempDir();
    const s = storeOn(root, { env: { OK_VAR: 'Perfectly-Fine-123', WEAK_VAR: value } });
    const err = await rejects(s.create({}, { env: ['OK_VAR', 'WEAK_VAR'] }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'secrets.env[1]' });
    expectRefusal(err, rule, value, 'WEAK_VAR');
  });

  it('an "env var name" that is itself a credential is refused without echoing it', async () => {
    const token = `ghp_${'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8'}`;
    const root = tempDir();
    const s = storeOn(root);
    const err = await rejects(s.create({ llm: { apiKeyEnv: token } }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'llm.apiKeyEnv' });
    expectRefusal(err, /credential/, token);
  });

  it('refuseSecret accepts 8 characters that are not vocabulary, whatever they are', () => {
    for (const v of ['12345678', 'Zq9kL2vX', '\u{1F511}'.repeat(8), 'a b c de', 'k'.repeat(4096), 'ASSISTANT']) expect(refuseSecret(v, VOCABULARY), v).toBeUndefined();
  });
});

describe('unset env vars', () => {
  it('are reported in secrets.unsetEnv (an empty value counts as unset); the others register', async () => {
    const root = tempDir();
    const s = storeOn(root, { env: { SET_VAR: 'Value-Of-Set-Var-1', EMPTY_VAR: '' } });
    const created = await s.create({ llm: { apiKeyEnv: 'UNSET_PROVIDER_KEY' } }, { env: ['SET_VAR', 'EMPTY_VAR', 'UNSET_OTHER', 'UNSET_PROVIDER_KEY'] });
    expect(created.secrets).toEqual({ registered: 1, unsetEnv: ['UNSET_PROVIDER_KEY', 'EMPTY_VAR', 'UNSET_OTHER'] });
    await rejects(s.append(created.sessionId, [msg('x Value-Of-Set-Var-1')]), 'SecretRejected');
    await s.closeAll();
    const t = storeOn(root, { env: { SET_VAR: 'Value-Of-Set-Var-1' } });
    expect((await t.open(created.sessionId, 'read')).secrets).toEqual({ registered: 1, unsetEnv: ['UNSET_PROVIDER_KEY', 'EMPTY_VAR', 'UNSET_OTHER'] });
    await t.closeAll();
  });

  it('resolveSecrets: no env var set, nothing registered, every name listed once', () => {
    const r = resolveSecrets({ apiKeyEnv: 'A_KEY', headerEnv: ['B_KEY', 'A_KEY'], input: { env: ['B_KEY', 'C_KEY'] } }, {}, VOCABULARY);
    expect(r.status).toEqual({ registered: 0, unsetEnv: ['A_KEY', 'B_KEY', 'C_KEY'] });
    expect(r.set.size).toBe(0);
  });
});

describe('after a restart', () => {
  const API = 'Api-Key-Value-9d8c7b6a';
  const LISTED = 'Listed-Env-Value-5e4f3a2b';
  const SENT = 'Sent-Value-1a2b3c4d5e';

  it('env secrets protect again on open; sent values protect again once sent again', async () => {
    const root = tempDir();
    const env = { PROVIDER_KEY: API, LISTED_KEY: LISTED };
    const s = storeOn(root, { env });
    const { sessionId } = await s.create({ llm: { apiKeyEnv: 'PROVIDER_KEY' } }, { env: ['LISTED_KEY'], values: [SENT] });
    for (const v of [API, LISTED, SENT]) await rejects(s.append(sessionId, [msg(`x ${v}`)]), 'SecretRejected');
    await s.append(sessionId, [msg('clean')]);
    await s.closeAll();

    const t = storeOn(root, { env });
    const reopened = await t.open(sessionId, 'write', { values: [SENT] });
    expect(reopened.secrets).toEqual({ registered: 3 });
    for (const v of [API, LISTED, SENT]) {
      const before = writtenState(root);
      const err = await rejects(t.append(sessionId, [msg(`x ${Buffer.from(v).toString('base64')}`)]), 'SecretRejected');
      expect(err.details).toEqual({ path: 'records[0].message.content', rule: 'base64' });
      expect(writtenState(root)).toEqual(before);
    }
    expect(await t.append(sessionId, [msg('still fine')])).toEqual({ firstSeq: 2, lastSeq: 2 });
    await t.closeAll();
    expect(leaksUnder(root, [API, LISTED, SENT])).toEqual([]);
  });

  it('a value sent at create and not sent again after the restart guards nothing (memory only)', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({}, { values: [SENT] });
    await s.closeAll();
    const t = storeOn(root);
    expect((await t.open(sessionId, 'write')).secrets).toEqual({ registered: 0 });
    expect(await t.append(sessionId, [msg(`now ${SENT}`)])).toEqual({ firstSeq: 1, lastSeq: 1 });
    await t.closeAll();
  });

  it('values sent on a later open are added to those already registered', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({}, { values: [SENT] });
    expect((await s.open(sessionId, 'write', { values: [API] })).secrets).toEqual({ registered: 2 });
    for (const v of [SENT, API]) await rejects(s.append(sessionId, [msg(v)]), 'SecretRejected');
    await s.closeAll();
  });
});

describe('values never reach the store', () => {
  it('after create, appends, refusals, redactions, reads, lists, restarts and reopens: no file holds a value or an encoding of one', async () => {
    const root = tempDir();
    const values = ['Never-On-Disk-1111', 'Quo"te\\Back+/=22', 'n\u00f6n-\u00e4scii-\u{1F511}-33'];
    const envValue = 'Env-Never-On-Disk-44';
    const env = { NEVER_KEY: envValue };
    const s = storeOn(root, { env });
    const a = await s.create({ title: 'a', llm: { apiKeyEnv: 'NEVER_KEY' }, metadata: { note: 'x' } }, { values, env: ['NEVER_KEY'] });
    const b = await s.create({ title: 'b' });
    for (const v of [...values, envValue]) {
      for (const id of [a.sessionId, b.sessionId]) {
        await rejects(s.append(id, [msg(`x ${v}`)]), 'SecretRejected');
        await rejects(s.append(id, [{ kind: 'event', type: 't', payload: { [encodeURIComponent(v)]: 1 } }]), 'SecretRejected');
      }
      await rejects(s.create({ title: `t ${Buffer.from(v).toString('hex')}` }), 'SecretRejected');
    }
    await s.append(a.sessionId, [msg('hello'), { kind: 'event', type: 'cred', payload: { api_key: 'whatever', token: `ghp_${'a1'.repeat(18)}` } }]);
    await s.read(a.sessionId);
    await s.list();
    await indexSettled(s);
    await s.closeAll();
    const t = storeOn(root, { env });
    await t.open(a.sessionId, 'write', { values });
    await t.append(a.sessionId, [msg('after restart')]);
    await t.open(b.sessionId, 'read');
    await t.list();
    await indexSettled(t);
    await t.closeAll();
    const files = filesUnder(root);
    expect(files.length).toBeGreaterThanOrEqual(4); // two journals and their index entries at least
    expect(leaksUnder(root, [...values, envValue])).toEqual([]);
    const all = Buffer.concat(files.map((f) => f.bytes)).toString('utf8');
    expect(all).toContain('NEVER_KEY'); // the name is stored, so a later open resolves it again
  });
});

describe('error objects', () => {
  it('are StoreErrors whose JSON holds kind and details only (no stack with content)', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const err = await rejects(s.create({}, { values: ['short'] }), 'InvalidArgument');
    expect(err).toBeInstanceOf(StoreError);
    expect(Object.keys(JSON.parse(JSON.stringify(err))).sort()).toEqual(['details', 'kind', 'name']);
  });
});
