import { describe, expect, it } from 'vitest';
import { FinalGate } from '../../src/core/gate.js';
import { StoreError } from '../../src/domain/errors.js';
import { SecretSet } from '../../src/domain/secrets/knownSecrets.js';

const SECRET = 'correct horse battery staple';
const secrets = new SecretSet();
secrets.add(SECRET);
const gate = new FinalGate(secrets);
const b64 = Buffer.from(SECRET).toString('base64');

function refusal(run: () => unknown): StoreError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).kind).toBe('SecretRejected');
    expect((err as StoreError).message).not.toContain(SECRET);
    return err as StoreError;
  }
  throw new Error('not refused');
}

describe('core final gate', () => {
  it('seals a request\'s records with their kinds, or names the rule that stops the whole request', () => {
    expect(gate.records(['{"kind":"a"}', '{"kind":"b"}'], ['a', 'b'], 7, 'T')).toEqual({
      sealed: [{ seq: 7, ts: 'T', kind: 'a', text: '{"kind":"a"}' }, { seq: 8, ts: 'T', kind: 'b', text: '{"kind":"b"}' }],
    });
    expect(gate.records(['{"kind":"a"}', `{"kind":"b","x":"${b64}"}`], ['a', 'b'], 1, 'T')).toHaveProperty('rule');
  });

  it('refuses a secret in any form in a checkpoint, fork copies, a header, a state value or key, a blob', () => {
    expect(refusal(() => gate.checkpoint({ seq: 3, ts: 'T', kind: 'checkpoint', text: `{"summary":"${SECRET}"}` })).details.path).toBe('(checkpoint)');
    expect(refusal(() => gate.copies([{ seq: 1, ts: 'T', kind: 'm', text: `{"x":"${encodeURIComponent(SECRET)}"}` }])).message)
      .toMatch(/^the records to fork hold a registered secret/);
    expect(refusal(() => gate.header({ sessionId: 'S', createdAt: 'T', text: `{"title":"${b64}"}` }, 1 << 20)).details).toMatchObject({ path: 'header', rule: 'raw' });
    expect(refusal(() => gate.stateEntry({ key: 'k', text: `{"value":"${SECRET}"}\n` })).details.path).toBe('value');
    refusal(() => gate.blob(Buffer.from(`bytes ${SECRET} bytes`)));
    expect(() => gate.header({ sessionId: 'S', createdAt: 'T', text: '{"title":"long"}' }, 4)).toThrow(/larger than 4 bytes/);
  });

  it('leaves a summary that puts a secret together out of the snapshot; any other member refuses it', () => {
    const joined = `user: ${SECRET}`;
    expect(gate.admitsSummary(joined)).toBe(false);
    expect(gate.admitsSummary('user: correct horse')).toBe(true);
    const s = gate.snapshot({ turn: null, runtime: null, usage: '{}', firstMessage: joined, lastMessage: 'user: fine', header: null });
    expect([s.firstMessage, s.lastMessage]).toEqual([null, 'user: fine']);
    expect(refusal(() => gate.snapshot({ turn: null, runtime: null, usage: null, firstMessage: null, lastMessage: null, header: `{"title":"${SECRET}"}` })).details.path)
      .toBe('(snapshot)');
  });

  it('with no secret registered, passes everything unchanged', () => {
    const open = new FinalGate(new SecretSet());
    const rec = { seq: 1, ts: 'T', kind: 'm', text: `{"x":"${SECRET}"}` };
    expect(open.checkpoint(rec)).toBe(rec);
    expect(open.snapshot({ turn: null, runtime: null, usage: null, firstMessage: `user: ${SECRET}`, lastMessage: null, header: null }).firstMessage).toBe(`user: ${SECRET}`);
  });
});
