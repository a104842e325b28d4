import { afterAll, describe, expect, it } from 'vitest';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { redactValue } from '../../../src/domain/secrets/redact.js';
import { redactTokens } from '../../../src/domain/secrets/tokenRules.js';
import { tempDir } from '../../helpers.js';
import { rejects, storeOn, uEscapeAll } from './secretsHelpers.js';

/**
 * Inputs built to make the token rules and the known-secret scan backtrack: each must finish
 * (within the test timeout) and give the right answer. No timing is asserted; the times seen
 * are printed at the end.
 */

const MB = 1 << 20;
const fill = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const timings: Array<[string, number]> = [];

function timed<T>(label: string, f: () => T): T {
  const t0 = performance.now();
  const out = f();
  timings.push([label, performance.now() - t0]);
  return out;
}

afterAll(() => {
  const width = Math.max(...timings.map(([l]) => l.length));
  console.log(`adversarial 1 MB inputs (ms):\n${timings.map(([l, ms]) => `  ${l.padEnd(width)} ${ms.toFixed(1).padStart(9)}`).join('\n')}`);
});

/** [label, input, check of the output]. */
const TOKEN_INPUTS: Array<[string, string, (out: string) => void]> = [
  ['a run of token characters', fill('a'), (out) => expect(out).toBe(fill('a'))],
  ['"eyJ-" repeated (JWT header candidates in one run)', fill('eyJ-'), (out) => expect(out).toBe(fill('eyJ-'))],
  ['"eyJ_" repeated', fill('eyJ_'), (out) => expect(out).toBe(fill('eyJ_'))],
  ['a JWT header, then "eyJ-" repeated', `eyJaaaaa.${fill('eyJ-')}`, (out) => expect(out).toBe(`eyJaaaaa.${fill('eyJ-')}`)],
  ['JWT payloads without a signature', fill(`-eyJaaaaa.eyJ${'b'.repeat(8000)}!`), (out) => expect(out).toBe(fill(`-eyJaaaaa.eyJ${'b'.repeat(8000)}!`))],
  ['"Bearer " repeated', fill('Bearer '), (out) => expect(out).toBe(fill('Bearer '))],
  // Longer than any bearer token (4,000) and of low entropy: not a token, kept (the old rule
  // replaced its first 4,000 characters and kept the rest).
  ['"Bearer\\t" then one long token', `Bearer\t${fill('a1', MB - 7)}`, (out) => expect(out).toBe(`Bearer\t${fill('a1', MB - 7)}`)],
  ['"Token\\t" repeated', fill('Token\t'), (out) => expect(out).toBe(fill('Token\t'))],
  // Headers with no key lines after them hold no key: kept (the old rule deleted everything after the first).
  ['"-----BEGIN PRIVATE KEY-----" repeated, no END', fill('-----BEGIN PRIVATE KEY-----'), (out) => expect(out).toBe(fill('-----BEGIN PRIVATE KEY-----'))],
  ['one PEM block of 1 MB', `-----BEGIN PRIVATE KEY-----\n${fill('A')}\n-----END PRIVATE KEY-----`, (out) => expect(out).toBe('<redacted:private-key>')],
  ['"-----END X X X" fragments after a BEGIN', `x -----BEGIN RSA PRIVATE KEY-----\n${fill('-----END AAAAAAAAAAAAAAAAAAAA AAAAAAAAAAAAAAAAAAAA AAAAAAAAAAAAAAAAAAAA ')}`, (out) => expect(out).toBe(`x -----BEGIN RSA PRIVATE KEY-----\n${fill('-----END AAAAAAAAAAAAAAAAAAAA AAAAAAAAAAAAAAAAAAAA AAAAAAAAAAAAAAAAAAAA ')}`)],
  ['"://a:" repeated', fill('://a:'), (out) => expect(out).toBe(fill('://a:'))],
  ['"a://a:" repeated', fill('a://a:'), (out) => expect(out).toBe(fill('a://a:'))],
  ['URLs with long users and passwords but no @', fill(`a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d://${'u'.repeat(256)}:${'p'.repeat(256)} `),
    (out) => expect(out.includes('<redacted')).toBe(false)],
  ['"sk-" repeated', fill('sk-'), (out) => expect(out).toBe(fill('sk-'))],
  ['"sk-proj-" with short tails', fill(`sk-proj-${'a'.repeat(39)}!`), (out) => expect(out).toBe(fill(`sk-proj-${'a'.repeat(39)}!`))],
  ['"-hf_" with over-long tails', fill(`-hf_${'a'.repeat(80)}`), (out) => expect(out).toBe(fill(`-hf_${'a'.repeat(80)}`))],
  ['"_npm_" with over-long tails', fill(`_npm_${'a'.repeat(40)}`), (out) => expect(out).toBe(fill(`_npm_${'a'.repeat(40)}`))],
  ['"AKIA" repeated', fill('AKIA'), (out) => expect(out).toBe(fill('AKIA'))],
  ['"ghp_" repeated', fill('ghp_'), (out) => expect(out).toBe(fill('ghp_'))],
  // Each xoxb- is followed by 4 characters only (the tail stops at the next prefix): no token.
  ['"xoxb-" repeated', fill('xoxb-'), (out) => expect(out).toBe(fill('xoxb-'))],
  ['"xoxb-" + 12 digits, repeated with a blank (each one a token)', fill('xoxb-123456789012 '), (out) => {
    const unit = 'xoxb-123456789012 ';
    expect(out.split('<redacted:slack-token> ').join('')).toBe(fill(unit).slice(Math.floor(MB / unit.length) * unit.length));
    expect(redactTokens(out)).toBe(out);
  }],
  ['"sk-ant-" repeated (each one a token)', fill('sk-ant-'), (out) => expect(redactTokens(out)).toBe(out)],
];

describe('redactTokens on hostile 1 MB inputs', () => {
  it.each(TOKEN_INPUTS)('%s', (label, input, check) => {
    check(timed(`redactTokens: ${label}`, () => redactTokens(input)));
  });

  it('redactValue over JSON text built against its member-name hint', () => {
    const value = { kind: 'event', payload: { note: `token"${' '.repeat(MB)}`, more: fill('api_key"') } };
    const r = timed('redactValue: member-name hint, long blank run', () => redactValue(value, JSON.stringify(value)));
    expect(r.redactions).toEqual([]);
  });
});

const SECRETS = ['Zq9kL2vX8mN4pR7t', 'Qu"ot\\e+/=Wk9!x', 'vault-\u{1F511}-k3y-\u{1F5DD}-Z9'];
const set = new SecretSet();
for (const s of SECRETS) set.add(s);

const SCAN_INPUTS: Array<[string, string]> = [
  ['a run of backslashes after "\\u"', `\\u${fill('\\')}`],
  ['a run of backslashes before "/"', `${fill('\\', MB - 1)}/`],
  ['"\\u00" repeated', fill('\\u00')],
  ['"\\\\\\u0041" repeated', fill('\\\\\\u0041')],
  ['"%4" repeated', fill('%4')],
  ['"%41" repeated', fill('%41')],
  ['"%F0%9F" repeated (cut UTF-8)', fill('%F0%9F')],
  ['"eyJ-" repeated', fill('eyJ-')],
  ['"Bearer " repeated', fill('Bearer ')],
  ['"-----BEGIN PRIVATE KEY-----" repeated', fill('-----BEGIN PRIVATE KEY-----')],
  ['"://a:" repeated', fill('://a:')],
  ['a run of token characters', fill('Zq9kL2vX8mN4pR7')],
];

describe('SecretSet.findInText on hostile 1 MB inputs', () => {
  it.each(SCAN_INPUTS)('%s: nothing found, and a secret planted at the end is found', (label, input) => {
    expect(timed(`findInText: ${label}`, () => set.findInText(input))).toBeUndefined();
    expect(set.findInText(`${input}${SECRETS[0]}`)).toBe('raw');
    expect(set.findInText(`${input} ${uEscapeAll(SECRETS[1]!)}`)).toBe('json-escape');
    expect(set.findInText(`${input} ${encodeURIComponent(SECRETS[2]!)}`)).toBe('percent');
    expect(timed(`scrub: ${label}`, () => set.scrub(input))).toBe(input);
  });
});

describe('through the store', () => {
  it('a 1 MB record of backslashes is appended; the same with a \\u-escaped secret at its end is refused', async () => {
    const root = tempDir();
    const s = storeOn(root);
    const { sessionId } = await s.create({}, { values: SECRETS });
    const text = `\\u${fill('\\')}`;
    const ok = await timed('store append: 1 MB of backslashes', () => s.append(sessionId, [{ kind: 'event', type: 'x', payload: text }]));
    expect(ok).toEqual({ firstSeq: 1, lastSeq: 1 });
    const err = await rejects(
      timed('store append: 1 MB of backslashes + secret', () => s.append(sessionId, [{ kind: 'event', type: 'x', payload: `${text}${uEscapeAll(SECRETS[0]!)}` }])),
      'SecretRejected',
    );
    expect(err.details).toEqual({ path: 'records[0].payload', rule: 'json-escape' });
    const bearer = await timed('store append: "eyJ-" and "Bearer " 1 MB', () =>
      s.append(sessionId, [{ kind: 'event', type: 'x', payload: { a: fill('eyJ-', MB / 2), b: fill('Bearer ', MB / 2) } }]));
    expect(bearer.redactions).toBeUndefined();
    await s.closeAll();
  });
});
