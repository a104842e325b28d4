import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../helpers.js';
import { FRAMINGS, SidecarError, startSidecar, rejection } from './harness.js';

/**
 * Secret safety (protocol/README.md section 10, SecretRejected -31012 in 6.2) over real pipes,
 * against the built binary.
 */

const SECRET = 'tok-9Qx7Lm2Vb4Np6Rs8';
const ENV_KEY_VALUE = 'EnvKey-4dF8kL2pQ9zX7wR1';
// A syntactically valid, fake GitHub token (ghp_ + 36 alphanumerics).
const GH_TOKEN = `ghp_${'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8'}`;

const msg = (role: string, content: unknown) => ({ kind: 'message' as const, message: { role, content } });


const journalOf = (store: string, sessionId: string) => path.join(store, 'sessions', sessionId, 'journal.jsonl');

/** Every file under the store, concatenated (for "this value is nowhere on disk"). */
function storeBytes(store: string): Buffer {
  return Buffer.concat(Object.values(snapshotTree(store)).map((b64) => Buffer.from(b64, 'base64')));
}

/** Lets a scheduled index write (at most every 50 ms) land, so a snapshot is stable. */
async function settled(c: { read: (p: { sessionId: string }) => Promise<unknown> }, sessionId: string): Promise<void> {
  await c.read({ sessionId });
  await sleep(150);
}

describe.each(FRAMINGS)('secret safety over %s', (framing) => {
  it('a record holding a registered secret is refused whole with SecretRejected (-31012); nothing is written', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId, secrets } = await c.create({ title: 'guarded', secrets: { values: [SECRET] } });
    expect(secrets).toEqual({ registered: 1 });
    expect(await c.append({ sessionId, records: [msg('user', 'nothing to hide')] })).toEqual({ firstSeq: 1, lastSeq: 1 });
    await settled(c, sessionId);

    const b64 = Buffer.from(`xy${SECRET}`, 'utf8').toString('base64'); // the secret 2 bytes into a base64 group
    expect(b64).not.toContain(SECRET);
    const cases: Array<{ name: string; records: unknown[]; path: string; rule: string }> = [
      { name: 'raw, in content', records: [msg('user', `my key is ${SECRET}, keep it`)], path: 'records[0].message.content', rule: 'raw' },
      {
        name: 'base64, in the second record of a batch',
        records: [msg('user', 'harmless'), msg('tool', `blob: ${b64}`)],
        path: 'records[1].message.content', rule: 'base64',
      },
      {
        name: 'nested in tool-call arguments JSON',
        records: [{
          kind: 'message',
          message: { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'http', arguments: JSON.stringify({ url: 'https://api.example', headers: { token: SECRET } }) }] },
        }],
        path: 'records[0].message.toolCalls[0].arguments<json>.headers.token', rule: 'nested-json',
      },
      {
        name: 'as an object key',
        records: [{ kind: 'event', type: 'env.snapshot', payload: { vars: { [SECRET]: true } } }],
        path: 'records[0].payload.vars.<key>', rule: 'raw',
      },
      {
        name: 'hex, in an interruption',
        records: [{ kind: 'interruption', reason: 'user cancelled', phase: 'providerStream', assistantText: Buffer.from(SECRET).toString('hex') }],
        path: 'records[0].assistantText', rule: 'hex',
      },
    ];
    const journal = journalOf(store, sessionId);
    for (const { name, records, path: where, rule } of cases) {
      const before = snapshotTree(store);
      const size = fs.statSync(journal).size;
      const err = await rejection(c.append({ sessionId, records: records as never }));
      expect(err.code, name).toBe(-31012);
      expect(err.data, name).toEqual({ kind: 'SecretRejected', path: where, rule });
      expect(err.message, name).not.toContain(SECRET);
      expect(JSON.stringify(err.data), name).not.toContain(SECRET);
      expect(fs.statSync(journal).size, name).toBe(size);
      expect(snapshotTree(store), name).toEqual(before);
    }
    // No seq was consumed by the refused batches.
    expect(await c.append({ sessionId, records: [msg('user', 'still fine')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    const page = await c.read({ sessionId });
    expect(page.records.map((r) => r.seq)).toEqual([1, 2]);
    await c.shutdown();
    expect(storeBytes(store).includes(SECRET)).toBe(false);
    expect(storeBytes(store).includes(Buffer.from(SECRET).toString('hex'))).toBe(false);
    expect(c.stderr).not.toContain(SECRET);
  });

  it('a header holding a registered secret is refused at create; no session appears', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const before = snapshotTree(store);
    const err = await rejection(c.create({ title: `deploy with ${SECRET}`, secrets: { values: [SECRET] } }));
    expect(err.code).toBe(-31012);
    expect(err.data).toEqual({ kind: 'SecretRejected', path: 'header.title', rule: 'raw' });
    expect(err.message).not.toContain(SECRET);
    expect(snapshotTree(store)).toEqual(before);
    expect((await c.list()).sessions).toEqual([]);
  });

  it('well-known credentials are redacted on write and reported; ids, usage counters and signatures are kept exactly', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const created = await c.create({ systemPrompt: `Use ${GH_TOKEN} for the API.`, metadata: { api_key: 'plain-api-key-value-1' } });
    expect(created.redactions).toEqual([
      { seq: 0, path: 'systemPrompt', rule: 'github-token' },
      { seq: 0, path: 'metadata.api_key', rule: 'credential-key' },
    ]);
    const { sessionId } = created;
    // Values that a redaction rule would change if their member names did not protect them.
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    const toolCallId = 'call-AKIAIOSFODNN7EXAMPLE';
    const usage = { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 7 };
    const records = [
      msg('user', `here is my token: ${GH_TOKEN} — please push`),
      { kind: 'event' as const, type: 'provider.request', payload: { api_key: 'sk_not_a_known_format_1', model: 'm', usage } },
      { kind: 'message' as const, message: { role: 'tool', toolCallId, content: 'ok' } },
      {
        kind: 'message' as const,
        message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: jwt }, { type: 'text', text: 'done' }], usage },
      },
    ];
    const result = await c.append({ sessionId, records });
    expect(result).toEqual({
      firstSeq: 1, lastSeq: 4,
      redactions: [
        { seq: 1, path: 'message.content', rule: 'github-token' },
        { seq: 2, path: 'payload.api_key', rule: 'credential-key' },
      ],
    });
    const page = await c.read({ sessionId });
    const stored = page.records.map(({ seq: _s, ts: _t, ...r }) => r);
    expect(stored[0]).toEqual(msg('user', 'here is my token: <redacted:github-token> — please push'));
    expect(stored[1]).toEqual({ kind: 'event', type: 'provider.request', payload: { api_key: '<redacted>', model: 'm', usage } });
    expect(stored[2]).toEqual(records[2]);
    expect(stored[3]).toEqual(records[3]);
    expect(JSON.stringify(stored[3])).toContain(jwt);
    const opened = await c.open({ sessionId, mode: 'read' });
    expect(opened.systemPrompt).toBe('Use <redacted:github-token> for the API.');
    expect(opened.metadata).toEqual({ api_key: '<redacted>' });
    await c.shutdown();
    const disk = storeBytes(store);
    for (const value of [GH_TOKEN, 'plain-api-key-value-1', 'sk_not_a_known_format_1']) expect(disk.includes(value), value).toBe(false);
    expect(disk.includes(toolCallId)).toBe(true);
    expect(disk.includes(jwt)).toBe(true);
  });

  it('an env-var secret via llm.apiKeyEnv is protected again after a restart; secrets.values only when re-sent', async () => {
    const store = tempDir();
    const env = { ...process.env, SIDECAR_TEST_API_KEY: ENV_KEY_VALUE };
    const first = await startSidecar({ framing, store, env });
    const created = await first.create({
      llm: { provider: 'openai', model: 'gpt-4o', apiKeyEnv: 'SIDECAR_TEST_API_KEY' },
      secrets: { values: [SECRET] },
    });
    expect(created.secrets).toEqual({ registered: 2 });
    const { sessionId } = created;
    const tryAppend = (c: typeof first, text: string) => c.append({ sessionId, records: [msg('user', text)] });
    for (const value of [ENV_KEY_VALUE, SECRET]) {
      const err = await rejection(tryAppend(first, `v=${value}`));
      expect(err.code).toBe(-31012);
      expect(err.data).toEqual({ kind: 'SecretRejected', path: 'records[0].message.content', rule: 'raw' });
    }
    await first.shutdown();

    // Restart, same environment: the variable's name is in the header and resolved again; values are not remembered.
    const second = await startSidecar({ framing, store, env });
    const reopened = await second.open({ sessionId });
    expect(reopened.secrets).toEqual({ registered: 1 });
    expect(reopened.llm).toEqual({ provider: 'openai', model: 'gpt-4o', apiKeyEnv: 'SIDECAR_TEST_API_KEY' });
    expect(JSON.stringify(reopened)).not.toContain(ENV_KEY_VALUE);
    expect((await rejection(tryAppend(second, `again ${ENV_KEY_VALUE}`))).data).toEqual({
      kind: 'SecretRejected', path: 'records[0].message.content', rule: 'raw',
    });
    const b64 = await rejection(tryAppend(second, Buffer.from(ENV_KEY_VALUE).toString('base64')));
    expect(b64).toMatchObject({ code: -31012, data: { kind: 'SecretRejected', rule: 'base64' } });
    // Documented contract: a value sent only at create is not known after a restart until it is sent again.
    expect(await tryAppend(second, `v=${SECRET}`)).toEqual({ firstSeq: 1, lastSeq: 1 });
    await second.shutdown();

    const third = await startSidecar({ framing, store, env });
    expect((await third.open({ sessionId, secrets: { values: [SECRET] } })).secrets).toEqual({ registered: 2 });
    const err = await rejection(tryAppend(third, `v=${SECRET}`));
    expect(err).toMatchObject({ code: -31012, data: { kind: 'SecretRejected', path: 'records[0].message.content', rule: 'raw' } });
    expect(await tryAppend(third, 'clean')).toEqual({ firstSeq: 2, lastSeq: 2 });
    await third.shutdown();

    // The env-based secret never reached the disk, nor any output channel.
    const disk = storeBytes(store);
    expect(disk.includes(ENV_KEY_VALUE)).toBe(false);
    expect(disk.includes(Buffer.from(ENV_KEY_VALUE).toString('base64'))).toBe(false);
    for (const c of [first, second, third]) {
      expect(Buffer.concat(c.stdout).includes(ENV_KEY_VALUE)).toBe(false);
      expect(c.stderr).not.toContain(ENV_KEY_VALUE);
    }
    expect(disk.toString('utf8')).toContain('"apiKeyEnv":"SIDECAR_TEST_API_KEY"');
  });

  it('env names given in secrets.env at create are stored and resolved again by session/open after a restart', async () => {
    const store = tempDir();
    const OTHER_ENV_VALUE = 'Other-Env-Secret-55aa77';
    const env = { ...process.env, SIDECAR_TEST_OTHER: OTHER_ENV_VALUE };
    const first = await startSidecar({ framing, store, env });
    const created = await first.create({ secrets: { env: ['SIDECAR_TEST_OTHER', 'SIDECAR_TEST_NOT_SET'] } });
    expect(created.secrets).toEqual({ registered: 1, unsetEnv: ['SIDECAR_TEST_NOT_SET'] });
    const { sessionId } = created;
    const tryAppend = (c: typeof first, text: string) => c.append({ sessionId, records: [msg('user', text)] });
    expect((await rejection(tryAppend(first, `v=${OTHER_ENV_VALUE}`))).code).toBe(-31012);
    await first.shutdown();

    const second = await startSidecar({ framing, store, env });
    const reopened = await second.open({ sessionId });
    const appended = await tryAppend(second, `v=${OTHER_ENV_VALUE}`).then((r) => r, (e: unknown) => e);
    await second.shutdown();
    // protocol/README.md section 10: "the names are stored in the header, so a later session/open resolves them again".
    expect(reopened.secrets).toEqual({ registered: 1, unsetEnv: ['SIDECAR_TEST_NOT_SET'] });
    expect(appended).toBeInstanceOf(SidecarError);
    expect((appended as SidecarError).data).toEqual({ kind: 'SecretRejected', path: 'records[0].message.content', rule: 'raw' });
    expect(storeBytes(store).includes(OTHER_ENV_VALUE), 'the env secret reached the journal').toBe(false);
  });

  it('registration refusals: too short, protocol vocabulary, too long, short env values — -32602 naming the rule, never the value', async () => {
    const store = tempDir();
    const SHORT_VALUE = 'Zq9!x7';
    const env = { ...process.env, SIDECAR_TEST_SHORT: SHORT_VALUE, SIDECAR_TEST_GOOD: ENV_KEY_VALUE };
    const c = await startSidecar({ framing, store, env });
    const before = snapshotTree(store);
    const cases: Array<{ params: Record<string, unknown>; path: string; rule: RegExp; hidden: string }> = [
      { params: { secrets: { values: [SECRET, SHORT_VALUE] } }, path: 'secrets.values[1]', rule: /at least 8 characters/, hidden: SHORT_VALUE },
      { params: { secrets: { values: ['expectedLastSeq'] } }, path: 'secrets.values[0]', rule: /vocabulary/, hidden: 'expectedLastSeq' },
      { params: { secrets: { values: ['reasoningDet'] } }, path: 'secrets.values[0]', rule: /vocabulary/, hidden: 'reasoningDet' },
      { params: { secrets: { values: [`Long-${'q'.repeat(5000)}`] } }, path: 'secrets.values[0]', rule: /at most 4096 characters/, hidden: 'qqqqqqqqqq' },
      { params: { llm: { apiKeyEnv: 'SIDECAR_TEST_SHORT' } }, path: 'llm.apiKeyEnv', rule: /SIDECAR_TEST_SHORT.*at least 8 characters/, hidden: SHORT_VALUE },
      { params: { secrets: { env: ['SIDECAR_TEST_GOOD', 'SIDECAR_TEST_SHORT'] } }, path: 'secrets.env[1]', rule: /SIDECAR_TEST_SHORT.*at least 8 characters/, hidden: SHORT_VALUE },
    ];
    for (const { params, path: where, rule, hidden } of cases) {
      const err = await rejection(c.create(params));
      const label = JSON.stringify(params).slice(0, 80);
      expect(err.code, label).toBe(-32602);
      expect(err.data?.kind, label).toBe('InvalidParams');
      const issues = err.data?.issues as Array<{ path: string; message: string }>;
      expect(issues[0]?.path, label).toBe(where);
      expect(issues[0]?.message, label).toMatch(rule);
      expect(`${err.message} ${JSON.stringify(err.data)}`, label).not.toContain(hidden);
    }
    expect(snapshotTree(store), 'a refused registration creates nothing').toEqual(before);
    expect((await c.list()).sessions).toEqual([]);

    // The same rules on session/open.
    const { sessionId } = await c.create({ title: 'x' });
    const err = await rejection(c.open({ sessionId, secrets: { values: ['longenough-1', SHORT_VALUE] } }));
    expect(err.code).toBe(-32602);
    expect((err.data?.issues as Array<{ path: string }>)[0]?.path).toBe('secrets.values[1]');
    expect(`${err.message} ${JSON.stringify(err.data)}`).not.toContain(SHORT_VALUE);
    await c.shutdown();
    expect(c.stderr).not.toContain(SHORT_VALUE);
    expect(Buffer.concat(c.stdout).includes(SHORT_VALUE)).toBe(false);
  });
});
