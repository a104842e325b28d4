import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { oracleLeaks } from '../secretOracle.js';
import { runCli } from '../cli/helpers.js';
import { FRAMINGS, startSidecar } from './harness.js';

/**
 * Issue 13 §1 over the built binary: a registered secret, in every encoding a tool commonly
 * prints and in every position a record, a state value, a blob or a compaction summary offers,
 * is refused with SecretRejected (-31012) — and afterwards not one form of it is found by the
 * tests' own oracle in stdout, stderr, any file of the store, or the CLI's `list --json`.
 */

const SECRET_REJECTED = -31012;
const SECRET = 'Op3n "s3same\\ door 42';
const NUMERIC = '564629869386547';

function utf16be(s: string): Buffer {
  const le = Buffer.from(s, 'utf16le');
  for (let i = 0; i + 1 < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1] as number, le[i] as number];
  return le;
}

function wrap(text: string, every: number, eol: string): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += every) lines.push(text.slice(i, i + every));
  return lines.join(eol);
}

/** The encodings of the issue's list, each computed here (not by the store). */
function encodings(secret: string): Array<[string, string]> {
  const utf8 = Buffer.from(secret, 'utf8');
  const b64 = (b: Buffer) => b.toString('base64');
  const long = Buffer.concat([Buffer.from('prefix bytes of a tool output, '.repeat(3)), utf8, Buffer.from(' and after it.'.repeat(4))]);
  let nested: string = secret;
  for (let i = 0; i < 6; i++) nested = JSON.stringify({ level: i, v: nested });
  const hex = utf8.toString('hex');
  return [
    ['raw', secret],
    ['base64', b64(utf8)],
    ['base64url unpadded', utf8.toString('base64url')],
    ['base64 at offset 1', b64(Buffer.concat([Buffer.from('x'), utf8]))],
    ['base64 at offset 2', b64(Buffer.concat([Buffer.from('xy'), utf8]))],
    ['base64 wrapped every 76 with CRLF (MIME)', wrap(b64(long), 76, '\r\n')],
    ['base64 wrapped every 64 with LF', wrap(b64(long), 64, '\n')],
    ['base64 with spaces inside', wrap(b64(long), 4, ' ')],
    ['hex mixed case', [...hex].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('')],
    ['hex with colons', hex.match(/../g)?.join(':') as string],
    ['hex with spaces', hex.match(/../g)?.join(' ') as string],
    ['hex with \\x', (hex.match(/../g) as string[]).map((h) => `\\x${h}`).join('')],
    ['percent with + for space', encodeURIComponent(secret).replace(/%20/g, '+')],
    ['percent lower case', encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['double percent', encodeURIComponent(encodeURIComponent(secret))],
    ['UTF-16LE hex', Buffer.from(secret, 'utf16le').toString('hex')],
    ['UTF-16BE hex', utf16be(secret).toString('hex')],
    ['UTF-16LE base64', b64(Buffer.from(secret, 'utf16le'))],
    ['UTF-16LE raw code units', Buffer.from(secret, 'utf16le').toString('latin1')],
    ['HTML hex entities', [...secret].map((c) => `&#x${(c.codePointAt(0) as number).toString(16)};`).join('')],
    ['HTML decimal entities', [...secret].map((c) => `&#${c.codePointAt(0)};`).join('')],
    ['JSON stringified six times', nested],
  ];
}

describe.each(FRAMINGS)('registered secrets in every encoding and position are refused (%s)', (framing) => {
  it('refused with SecretRejected; no form reaches stdout, stderr, the store or the CLI', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'encodings', secrets: { values: [SECRET, NUMERIC] } });
    await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hello' } }] });
    const refused: string[] = [];
    const wrong: string[] = [];
    const expectRefused = async (label: string, p: Promise<unknown>) => {
      const err = await p.then(() => undefined, (e: unknown) => e as { code?: number; message?: string });
      if (err?.code === SECRET_REJECTED) refused.push(label);
      else wrong.push(`${label}: ${err ? `${err.code} ${err.message}` : 'accepted'}`);
    };
    for (const [name, form] of encodings(SECRET)) {
      const b64 = Buffer.from(form, 'latin1').toString('base64');
      await expectRefused(`${name} in content`, c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: `see: ${form}` } }] }));
      await expectRefused(`${name} as a key`, c.append({ sessionId, records: [{ kind: 'event', type: 't', payload: { [form]: 1 } }] }));
      await expectRefused(`${name} in tool arguments`, c.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'f', arguments: JSON.stringify({ q: form }) }] } }] }));
      await expectRefused(`${name} in a state value`, c.setState(sessionId, 'k', { out: form }));
      await expectRefused(`${name} in an $attach payload`, c.append({ sessionId, records: [{ kind: 'message', message: { role: 'tool', content: { $attach: `out: ${form}` } } }] }));
      await expectRefused(`${name} in a compaction summary`, c.request('session/compact', { sessionId, throughSeq: 1, summary: `so far: ${form}` }));
      if (name !== 'UTF-16LE raw code units') {
        await expectRefused(`${name} in toolStream dataBase64`, c.append({ sessionId, records: [{ kind: 'toolStart', requestId: 'r', tool: 'sh' }, { kind: 'toolStream', toolSeq: 1, stream: 'stdout', dataBase64: b64 }] }));
      }
    }
    await expectRefused('numeric secret in exponent form, rebuilt by redaction', c.setState(sessionId, 'n', { v: '{"n":5.64629869386547e14,"api_key":"zzzzzzzzzzzz"}' }));
    await expectRefused('numeric secret as a number', c.append({ sessionId, records: [{ kind: 'event', type: 't', payload: { n: 564629869386547 } }] }));
    // Its blanks written as line breaks: a lossless form of the secret, refused like the others.
    await expectRefused('the secret with its blanks as line breaks', c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: SECRET.replace(/ /g, '\n') } }] }));
    const listed = await c.list({});
    await c.shutdown();
    const cli = await runCli(['list', '--json', '--store', store]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(wrong).toEqual([]);
    expect(refused.length).toBeGreaterThan(100);
    const channels: Array<[string, Buffer]> = [
      ['stdout', Buffer.concat(c.stdout)], ['stderr', Buffer.from(c.stderr)], ['list answer', Buffer.from(JSON.stringify(listed))], ['cli list --json', Buffer.from(cli.stdout + cli.stderr)],
    ];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else channels.push([path.relative(store, p), fs.readFileSync(p)]);
      }
    };
    walk(store);
    const found = channels.flatMap(([where, bytes]) => [SECRET, NUMERIC].flatMap((s) => oracleLeaks(bytes, s).map((f) => `${where}: ${f}`)));
    // The client's own request frames are not on stdout; the server's answers never repeat the secret.
    expect(found).toEqual([]);
  });
});
