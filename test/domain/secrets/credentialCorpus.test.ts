import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCredentialKey, isKeptKey } from '../../../src/domain/secrets/credentialKeys.js';
import { REDACTED, redactValue } from '../../../src/domain/secrets/redact.js';
import { placeholder, redactTokens, TOKEN_RULES } from '../../../src/domain/secrets/tokenRules.js';
import type { RecordInput } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { journalOf } from '../../backends/file/storeHelpers.js';
import { FAMILIES, MEMBER_NAMES } from './corpus/families.js';
import { PRECISION } from './corpus/precision.js';
import { storeOn } from './secretsHelpers.js';

/**
 * The credential corpus of issue 13 (protocol/README.md section 10): one fake credential per
 * family, in message content, tool-call arguments and tool results, must be redacted with
 * nothing else changed; every precision case must be stored byte-exact. The rates over the
 * corpus are printed by `npm run secrets:report`.
 */

const redactedText = (text: string, secret: string, rule: string) => text.split(secret).join(placeholder(rule));

/** The three positions a pasted credential arrives in. */
function positions(text: string): Array<[string, RecordInput, (t: string) => RecordInput]> {
  const content = (t: string): RecordInput => ({ kind: 'message', message: { role: 'user', content: t } });
  const args = (t: string): RecordInput => ({
    kind: 'message', message: { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'shell', arguments: JSON.stringify({ command: t }) }] },
  });
  const result = (t: string): RecordInput => ({ kind: 'message', message: { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: `$ run\n${t}\nexit 0` }] } });
  return [['message content', content(text), content], ['tool arguments', args(text), args], ['tool result', result(text), result]];
}

describe('true positives: every family is redacted, nothing else changes', () => {
  it('every rule of TOKEN_RULES has a family in the corpus', () => {
    const covered = new Set(FAMILIES.map((f) => f.rule));
    for (const r of TOKEN_RULES) expect(covered, r.id).toContain(r.id);
  });

  it.each(FAMILIES.map((f) => [f.family, f] as const))('%s', (_label, f) => {
    expect(f.text.split(f.secret).length, 'the secret stands once in its text').toBe(2);
    for (const [where, record, build] of positions(f.text)) {
      const r = redactValue(record, JSON.stringify(record));
      expect(JSON.stringify(r.value), where).toBe(JSON.stringify(build(redactedText(f.text, f.secret, f.rule))));
      expect(r.redactions.map((x) => x.rule), where).toEqual([f.rule]);
      const again = redactValue(r.value, JSON.stringify(r.value)); // idempotent
      expect(again.redactions, where).toEqual([]);
    }
  });

  it('through the store: the journal holds no secret of the corpus, and the placeholders where they stood', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({});
    const records = FAMILIES.flatMap((f) => positions(f.text).map(([, rec]) => rec));
    const r = await s.append(sessionId, records);
    expect(r.redactions).toHaveLength(records.length);
    await s.closeAll();
    const journal = fs.readFileSync(journalOf(root, sessionId), 'utf8');
    for (const f of FAMILIES) {
      expect(journal.includes(f.secret), f.family).toBe(false);
      expect(journal.includes(JSON.stringify(f.secret).slice(1, -1)), f.family).toBe(false);
    }
  });
});

describe('credential member names', () => {
  it.each(MEMBER_NAMES)('%s: its string value is stored as "<redacted>"', (name, value) => {
    expect(isCredentialKey(name)).toBe(true);
    expect(isKeptKey(name)).toBe(false);
    const record = { kind: 'event', type: 'cfg', payload: { [name]: value, region: 'eu-west-1' } };
    const r = redactValue(record, JSON.stringify(record));
    expect(r.value).toEqual({ ...record, payload: { [name]: REDACTED, region: 'eu-west-1' } });
    expect(r.redactions).toEqual([{ path: `payload${/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`}`, rule: 'credential-key' }]);
  });

  it('usage counters, other *_id members and *signature members are not credential names', () => {
    for (const k of ['input_tokens', 'max_tokens', 'output_tokens', 'cache_read_input_tokens', 'token_count', 'totalTokenCount', 'next_page_token', 'tokenizer']) {
      expect(isCredentialKey(k), k).toBe(false);
    }
    for (const k of ['tool_use_id', 'toolCallId', 'request_id', 'key_id', 'signature', 'thinkingSignature']) expect(isKeptKey(k), k).toBe(true);
  });

  it('a weak name (token, credentials, pwd) redacts a secret-shaped value only', () => {
    const record = { kind: 'event', type: 'x', payload: { a: { token: 'Hello' }, b: { token: 'tk9Qx2Lm8Rv4Zp7Wd3' }, c: { pwd: '/srv/app' }, d: { pwd: 'Pw9x!kQ2zL' } } };
    const r = redactValue(record, JSON.stringify(record));
    expect(r.value).toEqual({ ...record, payload: { a: { token: 'Hello' }, b: { token: REDACTED }, c: { pwd: '/srv/app' }, d: { pwd: REDACTED } } });
  });
});

describe('precision: stored byte-exact', () => {
  it('the corpus holds at least 200 cases', () => expect(PRECISION.length).toBeGreaterThanOrEqual(200));

  it.each(PRECISION.map(([label, v], i) => [`${i} ${label}`, v] as const))('%s', (_label, payload) => {
    const record = { kind: 'event', type: 'p', payload };
    const r = redactValue(record, JSON.stringify(record));
    expect(r.redactions).toEqual([]);
    expect(r.value).toBe(record);
    if (typeof payload === 'string') expect(redactTokens(payload)).toBe(payload);
  });

  it('through the store: every case is in the journal byte for byte', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({});
    const r = await s.append(sessionId, PRECISION.map(([, payload]) => ({ kind: 'event', type: 'p', payload })));
    expect(r.redactions).toBeUndefined();
    await s.closeAll();
    const journal = fs.readFileSync(journalOf(root, sessionId), 'utf8');
    for (const [label, payload] of PRECISION) expect(journal.includes(JSON.stringify(payload)), label).toBe(true);
  });
});
