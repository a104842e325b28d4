import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactValue } from '../../../src/domain/secrets/redact.js';
import { placeholder } from '../../../src/domain/secrets/tokenRules.js';
import { prng } from './secretsHelpers.js';

/**
 * Redaction inside JSON held in a string splices: the credential's bytes in the original text
 * are replaced by the marker, every other byte is kept (indentation, the final newline, number
 * spellings, escapes, duplicate members). Nothing is re-serialized.
 */

const rand = prng(0x51ce);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const fake = (n: number) => [...rand(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
const GH = `ghp_${fake(36)}`;

const toolResult = (text: string) => ({ kind: 'message', message: { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text }] } });
const resultText = (v: unknown) => (v as ReturnType<typeof toolResult>).message.content[0]!.text;
const toolCall = (args: string) => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'f', arguments: args }] } });
const argsOf = (v: unknown) => (v as ReturnType<typeof toolCall>).message.toolCalls[0]!.arguments;
const redact = (v: unknown) => redactValue(v, JSON.stringify(v));

describe('redaction inside JSON held in a string keeps every other byte', () => {
  it('a pretty-printed package.json with one password: only the password changes', () => {
    const doc = [
      '{',
      '  "name": "caf\\u00e9-app",',
      '  "version": "1.0.0",',
      '  "build": 12345678901234567890,',
      '  "price": 19.90,',
      '  "ratio": 1E+2,',
      '  "dup": 1,',
      '  "dup": 2,',
      '  "config": {',
      '    "registry": "https:\\/\\/registry.example.com",',
      '    "password": "hunter2-Correct-Horse"',
      '  }',
      '}',
      '',
    ].join('\n');
    const r = redact(toolResult(doc));
    expect(resultText(r.value)).toBe(doc.replace('hunter2-Correct-Horse', REDACTED));
    expect(r.redactions).toEqual([{ path: 'message.content[0].text<json>.config.password', rule: 'credential-key' }]);
  });

  it('tool-call arguments holding a ghp_ token: only the token changes', () => {
    const args = `{"cmd": "git push https://x@github.com --token ${GH} && echo caf\\u00e9", "n": 1.50, "big": 98765432109876543210}`;
    const r = redact(toolCall(args));
    expect(argsOf(r.value)).toBe(args.replace(GH, placeholder('github-token')));
    expect(r.redactions).toEqual([{ path: 'message.toolCalls[0].arguments<json>.cmd', rule: 'github-token' }]);
  });

  it('a credential written with escapes: its whole span is replaced, escapes and all, the quotes kept', () => {
    const args = '{"api_key" : "k\\u002d12\\/34\\n56", "note":"caf\\u00e9"}';
    const r = redact(toolCall(args));
    expect(argsOf(r.value)).toBe('{"api_key" : "<redacted>", "note":"caf\\u00e9"}');
  });

  it('duplicate members: each credential is redacted, the first one too, and both members stay', () => {
    const args = '{"password":"first-secret-1","password":"second-secret-2","x":1.0}';
    const r = redact(toolCall(args));
    expect(argsOf(r.value)).toBe('{"password":"<redacted>","password":"<redacted>","x":1.0}');
  });

  it('JSON nested twice: the token is spliced at the inner level, both levels keep their bytes', () => {
    const inner = `{ "q" : "use ${GH}\\tnow", "n": 10.0 }`;
    const outer = `{"wrapped": ${JSON.stringify(inner)}, "pad":    1e3}`;
    const r = redact(toolCall(outer));
    expect(argsOf(r.value)).toBe(outer.replace(GH, placeholder('github-token')));
    expect(r.redactions.map((x) => x.path)).toEqual(['message.toolCalls[0].arguments<json>.wrapped<json>.q']);
  });

  it('a token inside a member name is spliced in the name', () => {
    const args = `{"k ${GH}": 1,  "z": 2.50}`;
    const r = redact(toolCall(args));
    expect(argsOf(r.value)).toBe(args.replace(GH, placeholder('github-token')));
  });

  it('a credential name over an array redacts its strings in place; an object below it is kept', () => {
    const args = '{"cookie": [ "a=1234567", 7, "b=7654321" ], "auth": {"type": "oauth2", "n": 1.10}}';
    const r = redact(toolCall(args));
    expect(argsOf(r.value)).toBe('{"cookie": [ "<redacted>", 7, "<redacted>" ], "auth": {"type": "oauth2", "n": 1.10}}');
  });
});

// ---------------------------------------------------------------------------------------------
// Property: random JSON documents, one planted credential.

const ws = fc.constantFrom('', ' ', '  ', '\n', '\n  ', '\t', '\r\n', ' \n\t ');
const numberText = fc.oneof(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.tuple(fc.integer({ min: 0, max: 99999 }), fc.integer({ min: 0, max: 999 }), fc.nat(4)).map(([a, b, z]) => `${a}.${b}${'0'.repeat(z)}`),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'), fc.integer({ min: 0, max: 400 })).map(([m, e, x]) => `${m}${e}${x}`),
  fc.constantFrom('0', '-0', '0.0', '-0.000', '19.90', '12345678901234567890'),
);
/** String content as a JSON text holds it: plain characters and every kind of escape. */
const stringContent = fc.array(fc.constantFrom('q', 'z', 'Y', '7', ' ', 'é', '😀', '\\n', '\\t', '\\"', '\\\\', '\\/', '\\u00e9', '\\u0041', '\\uD83D\\uDE00', '\\b', '\\f', '\\r'), { maxLength: 12 })
  .map((parts) => parts.join(''));
const key = fc.constantFrom('a', 'b', 'q', 'a', 'zz', 'caf\\u00e9', 'n');

interface Doc { text: string }
const { value } = fc.letrec<{ value: Doc; object: Doc; array: Doc }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText.map((text) => ({ text })),
    stringContent.map((c) => ({ text: `"${c}"` })),
    fc.constantFrom('true', 'false', 'null').map((text) => ({ text })),
    tie('object'),
    tie('array'),
  ),
  object: fc.array(fc.tuple(ws, key, ws, ws, tie('value'), ws), { maxLength: 4 })
    .chain((members) => ws.map((w) => ({ text: members.length === 0 ? `{${w}}` : `{${members.map(([a, k, b, c, v, d]) => `${a}"${k}"${b}:${c}${v.text}${d}`).join(',')}}` }))),
  array: fc.array(fc.tuple(ws, tie('value'), ws), { maxLength: 4 })
    .chain((items) => ws.map((w) => ({ text: items.length === 0 ? `[${w}]` : `[${items.map(([a, v, b]) => `${a}${v.text}${b}`).join(',')}]` }))),
}));

/** A credential as JSON string content: escapes inside it too. */
const credential = fc.array(fc.constantFrom('h', 'U', '2', '-', '\\u0041', '\\/', '\\n', 'é', '\\"', '!'), { minLength: 6, maxLength: 16 })
  .map((parts) => `pw${parts.join('')}`);

/** The document with a member planted as the `at`-th member of its top-level object. */
function plant(members: Array<[string, string]>, at: number, planted: string, w: string): string {
  const list = members.map(([k, v]) => `${w}"${k}"${w}:${w}${v}${w}`);
  list.splice(Math.min(at, list.length), 0, planted);
  return `{${list.join(',')}}${w}`;
}

describe('property: one planted credential in a random JSON document', () => {
  it('a credential member: the output is the input with exactly the credential span replaced', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(key, value.map((d) => d.text)), { maxLength: 5 }), fc.nat(6), credential, ws, ws, fc.boolean(),
      (members, at, cred, w1, w2, nestTwice) => {
        const planted = `${w1}"password"${w2}:${w1}"${cred}"${w2}`;
        const doc = plant(members, at, planted, w2);
        JSON.parse(doc); // a valid document
        const expected = doc.replace(planted, `${w1}"password"${w2}:${w1}"${REDACTED}"${w2}`);
        const outer = nestTwice ? `{"inner":${w1}${JSON.stringify(doc)}${w2}}` : doc;
        const want = nestTwice ? `{"inner":${w1}${JSON.stringify(expected)}${w2}}` : expected;
        const r = redact(toolCall(outer));
        expect(argsOf(r.value)).toBe(want);
        expect(r.redactions).toHaveLength(1);
      },
    ), { numRuns: 300 });
  });

  it('a token in a string value: the output is the input with exactly the token replaced', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(key, value.map((d) => d.text)), { maxLength: 5 }), fc.nat(6), stringContent, stringContent, ws,
      (members, at, before, after, w) => {
        const planted = `"note":${w}"${before} ${GH} ${after}"`;
        const doc = plant(members, at, planted, w);
        JSON.parse(doc);
        const r = redact(toolResult(doc));
        expect(resultText(r.value)).toBe(doc.replace(GH, placeholder('github-token')));
        expect(r.redactions).toHaveLength(1);
      },
    ), { numRuns: 300 });
  });
});
