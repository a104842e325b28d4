import { randomBytes } from 'node:crypto';
import { expect, expectEqual, expectError, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession } from './util.js';

const unicodeEscaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const percentEncoded = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** §10: a registered secret is refused everywhere, in every documented encoding, and never echoed. */
export const secrets: Scenario = {
  name: 'secrets',
  summary: 'registered-secret refusal in every position and encoding (SecretRejected, nothing written, never echoed)',
  async run(t) {
    const S = `cfS3cret${randomBytes(12).toString('hex')}`;
    const p = await t.started();
    let sessionId = '';
    await t.check('create-registers', async () => {
      const r = await p.call<{ sessionId: string; secrets: Json }>('session/create', { secrets: { values: [S] } });
      sessionId = r.sessionId;
      expectEqual(r.secrets.registered, 1, 'secrets.registered');
    });
    await t.check('too-short-refused', async () => {
      expectError(await p.request('session/create', { secrets: { values: ['short'] } }), -32602);
    });
    const msg = (m: Json) => ({ kind: 'message', message: { role: 'assistant', ...m } });
    const args = (inner: unknown) => msg({ content: '', toolCalls: [{ id: 'c', name: 'x', arguments: JSON.stringify(inner) }] });
    const positions: Array<[string, Json]> = [
      ['string-value', msg({ content: `key is ${S}.` })],
      ['object-key', { kind: 'event', type: 'e', payload: { [S]: 1 } }],
      ['array', { kind: 'event', type: 'e', payload: [1, [`x${S}`]] }],
      ['tool-arguments-json', args({ token: S })],
      ['tool-arguments-json-twice', args(JSON.stringify({ token: S }))],
      ['tool-arguments-json-three-times', args(JSON.stringify(JSON.stringify({ token: S })))],
      ['reasoningDetails', msg({ content: 'ok', reasoningDetails: [{ text: S }] })],
      // a JSON text whose string holds the secret as \uXXXX escapes (either hex case)
      ['unicode-escapes-in-nested-json', msg({ content: '', toolCalls: [{ id: 'c', name: 'x', arguments: `{"token":"${unicodeEscaped(S).toUpperCase().replace(/\\U/g, '\\u')}"}` }] })],
      ['percent-encoding', msg({ content: `https://h/?k=${percentEncoded(S)}` })],
      ['hex', msg({ content: Buffer.from(S).toString('hex') })],
      ['runtime-api-payload', { kind: 'api', direction: 'request', payload: { headers: { h: S } } }],
      ['toolStream-text', { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: S }],
    ];
    // The rest of the documented encodings (§10): each computed here, independently of the server.
    const utf16le = Buffer.from(S, 'utf16le');
    const utf16be = Buffer.from(utf16le).swap16();
    const hex = Buffer.from(S).toString('hex');
    const longer = Buffer.concat([Buffer.from('a tool printed this: '.repeat(4)), Buffer.from(S), Buffer.from(' and more.'.repeat(6))]).toString('base64');
    const wrap = (text: string, every: number, eol: string) => (text.match(new RegExp(`.{1,${every}}`, 'g')) as string[]).join(eol);
    let nested: unknown = { token: S };
    for (let i = 0; i < 6; i++) nested = JSON.stringify(nested);
    positions.push(
      ['json-stringified-six-times', msg({ content: nested as string })],
      ['base64-wrapped-76-crlf', msg({ content: wrap(longer, 76, '\r\n') })],
      ['base64-wrapped-64-lf', msg({ content: wrap(longer, 64, '\n') })],
      ['base64-with-spaces', msg({ content: wrap(longer, 4, ' ') })],
      ['hex-mixed-case', msg({ content: [...hex].map((c, i) => (i % 3 ? c : c.toUpperCase())).join('') })],
      ['hex-colons', msg({ content: (hex.match(/../g) as string[]).join(':') })],
      ['hex-backslash-x', msg({ content: (hex.match(/../g) as string[]).map((h) => `\\x${h}`).join('') })],
      ['percent-lower-case', msg({ content: percentEncoded(S).toLowerCase() })],
      ['percent-double', msg({ content: percentEncoded(S).replace(/%/g, '%25') })],
      ['utf16le-hex', msg({ content: utf16le.toString('hex') })],
      ['utf16be-base64', msg({ content: utf16be.toString('base64') })],
      ['utf16le-raw-text', msg({ content: utf16le.toString('latin1') })],
      ['html-entities', msg({ content: [...S].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join('') })],
      ['toolStream-dataBase64-bytes', { kind: 'toolStream', toolSeq: 1, stream: 'stdout', dataBase64: Buffer.from(`out: ${S}\n`).toString('base64') }],
      ['attach-payload', msg({ content: { $attach: `log: ${S}` } })],
    );
    for (const align of [0, 1, 2]) {
      const bytes = Buffer.from(`${'ab'.slice(0, align)}${S}`);
      positions.push([`base64-align-${align}`, msg({ content: bytes.toString('base64') })]);
      positions.push([`base64url-align-${align}`, msg({ content: bytes.toString('base64url') })]);
    }
    for (const [name, record] of positions) {
      await t.check(`refused-${name}`, async () => {
        expectError(await p.request('session/append', { sessionId, records: [record] }), -31012, 'SecretRejected');
      });
    }
    await t.check('wire-unicode-escapes', async () => {
      const text = JSON.stringify({ jsonrpc: '2.0', id: 'wire', method: 'session/append', params: { sessionId, records: [msg({ content: 'PLACE' })] } })
        .replace('PLACE', unicodeEscaped(S));
      const a = p.expect('wire', 'session/append');
      p.writeRaw(p.frame(text));
      expectError(await a, -31012, 'SecretRejected');
    });
    await t.check('nothing-written', async () => {
      const r = await p.call<{ lastSeq: number }>('session/read', { sessionId });
      expectEqual(r.lastSeq, 0, 'lastSeq after the refused appends');
    });
    await t.check('state-refused', async () => expectError(await p.request('state/set', { sessionId, key: 'k', value: { v: S } }), -31012, 'SecretRejected'));
    await t.check('state-refused-base64', async () => expectError(await p.request('state/set', { sessionId, key: 'k', value: { v: Buffer.from(S).toString('base64') } }), -31012, 'SecretRejected'));
    await t.check('header-of-another-session-refused', async () => {
      expectError(await p.request('session/create', { title: `t ${S}` }), -31012, 'SecretRejected');
      expectError(await p.request('session/create', { metadata: { note: Buffer.from(S).toString('base64') } }), -31012, 'SecretRejected');
    });
    await t.check('compact-summary-refused', async () => {
      const other = await newSession(p);
      await p.call('session/append', { sessionId: other, records: [{ kind: 'event', type: 'e', payload: 1 }] });
      expectError(await p.request('session/compact', { sessionId: other, summary: `s ${S}`, throughSeq: 1 }), -31012, 'SecretRejected');
    });
    await t.check('never-echoed', async () => {
      await p.call('session/list', {});
      const variants = [S, Buffer.from(S).toString('hex'), Buffer.from(S).toString('base64').slice(4, -4)];
      const sent = JSON.stringify(p.received);
      for (const v of variants) expect(!sent.includes(v), 'a server message holds the secret (or an encoding of it)');
      expect(!p.stderr.includes(S), "the server's stderr holds the secret");
    });
  },
};
