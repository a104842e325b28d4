/**
 * Store contract: registered secrets are refused and well-known credentials redacted
 * identically on both backends — the same kinds, paths, rules and stored texts.
 */
import { expect, it } from 'vitest';
import { placeholder } from '../../src/domain/secrets/tokenRules.js';
import type { RecordInput } from '../../src/domain/types.js';
import { FAMILIES } from '../domain/secrets/corpus/families.js';
import { ENCODINGS, rulesFor, VOCABULARY } from '../domain/secrets/secretsHelpers.js';
import { eachBackend, readAll, storeError, user } from './backends.js';

const API = 'Api-Key-Value-9d8c7b6a';
const LISTED = 'Listed-Env-Value-5e4f3a2b';
const SENT = 'Sent-Value-1a2b3c4d5e';
const env = { PROVIDER_KEY: API, LISTED_KEY: LISTED };

/** The forms a stored copy of `secret` could take: as written, JSON-escaped, hex (bytea), base64. */
function formsOf(secret: string): string[] {
  return [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64')];
}

eachBackend('secrets', (setup) => {
  it('a secret split across content parts is never put together in a stored summary, nor anywhere else the backend keeps (issue 26)', async () => {
    const f = await setup();
    const secret = 'correct horse battery staple';
    const { sessionId: id } = await f.store.create({}, { values: [secret] });
    // No part holds the secret; the first/last-message summary joins the parts with a space.
    const parts = { kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'correct horse' }, { type: 'text', text: 'battery staple' }] } } as RecordInput;
    expect(await f.store.append(id, [parts])).toEqual({ firstSeq: 1, lastSeq: 1 });
    expect(await f.store.append(id, [user('then'), parts])).toEqual({ firstSeq: 2, lastSeq: 3 });
    await f.store.closeAll();
    const listed = await (await f.reopen()).list({});
    expect(listed.sessions).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain('battery staple');
    const kept = await f.dump();
    for (const form of formsOf(secret)) expect(kept, form).not.toContain(form);
    if (!f.encrypted) expect(kept).toContain('battery staple'); // the parts themselves are kept as sent (sealed on an encrypted store)
  });

  it('a registered secret in any encoding is refused (path and rule, never the value), nothing written; the others commit', async () => {
    const f = await setup({ vocabulary: VOCABULARY });
    const secret = 'Zq8kP3vWm7xRt2n-sidecar';
    const { sessionId: id } = await f.store.create({}, { values: [secret] });
    for (const enc of ENCODINGS) {
      const err = await storeError(f.store.append(id, [user('fine'), user(`x ${enc.encode(secret)} y`)]), 'SecretRejected');
      expect(err.details.path, enc.name).toBe('records[1].message.content');
      expect(rulesFor(enc, secret), enc.name).toContain(err.details.rule);
      expect(`${err.message}${JSON.stringify(err.details)}`).not.toContain(secret);
    }
    expect(await readAll(f.store, id)).toEqual([]);
    // a secret registered for another session of this store is refused too
    const { sessionId: other } = await f.store.create({}, { values: ['Other-secret-9f8e7d6c'] });
    await storeError(f.store.append(id, [user('x Other-secret-9f8e7d6c')]), 'SecretRejected');
    expect(await f.store.append(id, [user('clean')])).toEqual({ firstSeq: 1, lastSeq: 1 });
    expect(await readAll(f.store, other)).toEqual([]);
  });

  it('refused secret values: too short, vocabulary, too long — InvalidArgument naming the index, nothing created', async () => {
    const f = await setup({ vocabulary: VOCABULARY, env: { WEAK_VAR: 'Xy7#q2!' } });
    for (const [value, rule] of [['Xy7#q2!', /at least 8 characters/], ['interruption', /vocabulary/], ['k'.repeat(4097), /at most 4096 characters/]] as const) {
      const err = await storeError(f.store.create({ title: 't' }, { values: ['Fine-Value-123', value] }), 'InvalidArgument');
      expect(err.details).toEqual({ path: 'secrets.values[1]' });
      expect(err.message).toMatch(rule);
    }
    expect((await storeError(f.store.create({ llm: { apiKeyEnv: 'WEAK_VAR' } }), 'InvalidArgument')).details).toEqual({ path: 'llm.apiKeyEnv' });
    expect((await f.store.list()).sessions).toEqual([]);
    const { sessionId } = await f.store.create({});
    await f.store.close(sessionId);
    expect((await storeError(f.store.open(sessionId, 'write', { values: ['short'] }), 'InvalidArgument')).details).toEqual({ path: 'secrets.values[0]' });
  });

  it('a secret given where an env var NAME belongs is refused: InvalidArgument naming where, never what; unsetEnv never echoes it (issue 27)', async () => {
    const f = await setup();
    const pasted = 'Zq8kP3vWm7xRt2nLq9Yb4cD6eF1gH5jK'; // a key pasted for its name: a valid name, no known prefix
    for (const [name, what] of [[pasted, 'secret-shaped'], [`MY_${pasted}`, 'secret-shaped part'], ['hunter2 Secret!', 'not a name'], ['x'.repeat(129), 'too long']] as const) {
      for (const [input, path] of [[{ llm: { apiKeyEnv: name } }, 'llm.apiKeyEnv'], [{}, 'secrets.env[1]']] as const) {
        const secrets = path === 'llm.apiKeyEnv' ? undefined : { env: ['SOME_UNSET_NAME', name] };
        const err = await storeError(f.store.create(input, secrets), 'InvalidArgument');
        expect(err.details, what).toEqual({ path });
        expect(`${err.message}${JSON.stringify(err.details)}`, what).not.toContain(name.slice(0, 12));
      }
    }
    expect((await f.store.list()).sessions).toEqual([]);
    const { sessionId } = await f.store.create({});
    await f.store.close(sessionId);
    const err = await storeError(f.store.open(sessionId, 'write', { env: [pasted] }), 'InvalidArgument');
    expect(err.details).toEqual({ path: 'secrets.env[0]' });
    expect(err.message).not.toContain(pasted.slice(0, 12));
    // a valid name that is unset is still reported as such
    expect((await f.store.create({}, { env: ['SOME_UNSET_NAME'] })).secrets).toEqual({ registered: 0, unsetEnv: ['SOME_UNSET_NAME'] });
  });

  it('after a restart env secrets protect again on open; sent values only once sent again; later values add up; unset env reported', async () => {
    const f = await setup({ env: { ...env, EMPTY_VAR: '' } });
    const created = await f.store.create({ llm: { apiKeyEnv: 'PROVIDER_KEY' } }, { env: ['LISTED_KEY', 'EMPTY_VAR', 'UNSET_OTHER'], values: [SENT] });
    expect(created.secrets).toEqual({ registered: 3, unsetEnv: ['EMPTY_VAR', 'UNSET_OTHER'] });
    const id = created.sessionId;
    for (const v of [API, LISTED, SENT]) await storeError(f.store.append(id, [user(`x ${v}`)]), 'SecretRejected');
    await f.store.append(id, [user('clean')]);
    await f.store.closeAll();
    const t = await f.reopen({ env });
    expect((await t.open(id, 'read')).secrets).toEqual({ registered: 2, unsetEnv: ['EMPTY_VAR', 'UNSET_OTHER'] });
    expect((await t.open(id, 'write')).secrets).toMatchObject({ registered: 2 });
    expect(await t.append(id, [user(`now ${SENT}`)])).toEqual({ firstSeq: 2, lastSeq: 2 }); // memory only: not sent again
    const reopened = await t.open(id, 'write', { values: [SENT] });
    expect(reopened.secrets).toMatchObject({ registered: 3 });
    for (const v of [API, LISTED, SENT]) {
      const err = await storeError(t.append(id, [user(`x ${Buffer.from(v).toString('base64')}`)]), 'SecretRejected');
      expect(err.details).toEqual({ path: 'records[0].message.content', rule: 'base64' });
    }
    expect((await t.open(id, 'write', { values: ['Another-Value-77665544'] })).secrets).toMatchObject({ registered: 4 });
    expect(await t.append(id, [user('still fine')])).toEqual({ firstSeq: 3, lastSeq: 3 });
  });

  it('the header: a registered secret is refused; credentials are redacted with seq 0 redactions; only env var names are stored', async () => {
    const f = await setup({ env });
    await storeError(f.store.create({ title: `t ${SENT}` }, { values: [SENT] }), 'SecretRejected');
    await storeError(f.store.create({ systemPrompt: `key ${API}`, llm: { apiKeyEnv: 'PROVIDER_KEY' } }), 'SecretRejected');
    expect((await f.store.list()).sessions).toEqual([]);
    const created = await f.store.create({ title: 'h', llm: { baseUrl: 'https://u:S3cretPass@llm.example.com/v1' }, metadata: { api_key: 'x' } }, { env: ['LISTED_KEY'] });
    expect(created.redactions).toEqual([{ seq: 0, path: 'llm.baseUrl', rule: 'url-password' }, { seq: 0, path: 'metadata.api_key', rule: 'credential-key' }]);
    const opened = await (await f.reopen({ env })).open(created.sessionId, 'read');
    expect(JSON.stringify(opened)).not.toContain('S3cretPass');
    expect(opened.metadata).toEqual({ api_key: expect.not.stringContaining('x') });
    expect(opened.secrets).toEqual({ registered: 1 });
  });

  it('every credential family of the corpus is redacted the same way, with the redaction reported at its seq and rule', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const batch: RecordInput[] = FAMILIES.map((fam) => user(fam.text));
    const r = await f.store.append(id, batch);
    expect(r.redactions).toEqual(FAMILIES.map((fam, i) => ({ seq: r.firstSeq + i, path: 'message.content', rule: fam.rule })));
    const stored = await readAll(await f.reopen(), id);
    for (const [i, fam] of FAMILIES.entries()) {
      expect((stored[i]!.message as { content: string }).content, fam.family).toBe(fam.text.split(fam.secret).join(placeholder(fam.rule)));
    }
    // an already redacted record appends with no redactions and is stored the same
    const again = await f.store.append(id, [user((stored[0]!.message as { content: string }).content)]);
    expect(again.redactions).toBeUndefined();
  });

  it('scrub redacts registered secrets, the secrets of a failed request and credentials from error and log text', async () => {
    const f = await setup({ env });
    await f.store.create({ llm: { apiKeyEnv: 'PROVIDER_KEY' } }, { values: [SENT] });
    const token = FAMILIES[0]!.secret;
    const text = `failed with ${API} and ${SENT} and ${token} and Extra-Value-12345678`;
    const out = f.store.scrub(text, { values: ['Extra-Value-12345678'] });
    for (const v of [API, SENT, token, 'Extra-Value-12345678']) expect(out).not.toContain(v);
    expect(out).toMatch(/^failed with /);
  });
});
