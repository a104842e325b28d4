import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Framing } from '../../dist/src/framing/frameDecoder.js';
import { tempDir } from '../helpers.js';
import { parseFrames } from './frames.js';
import { FRAMINGS, type SidecarClient, SidecarError, spawnSidecar, startSidecar, rejection } from './harness.js';

/**
 * Leak scan (protocol/README.md section 10: "No credential reaches the disk, stderr or an error
 * message"): every error path reachable with secret-laden input, while the secret is registered
 * in the sidecar process; then every byte of stdout, all of stderr and every file of the store
 * are searched for the secret and its encodings.
 */

const CANARY = 'S3cr3t-Canary-7f3a9b2c1d';
// A syntactically valid, fake GitHub token (ghp_ + 36 alphanumerics): redacted by format.
const GHP = `ghp_${'R8q7P6o5N4m3L2k1J0i9H8g7F6e5D4c3B2a1'}`;
// A secret made of digits, to reach the errors that echo numbers (expectedLastSeq).
const NUMERIC = '4182736455463728';
const MAX_MESSAGE_BYTES = 262_144;

/** The base64 characters fixed by the secret alone, at each byte alignment (what a masker must find). */
function alignedBase64(bytes: Buffer, shift: number): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
  return encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
}

/** A secret's forms that must never be found: raw, base64/base64url at 3 alignments, hex. */
function formsOf(secret: string): Array<{ form: string; text: string }> {
  const bytes = Buffer.from(secret, 'utf8');
  const out = [{ form: 'raw', text: secret }];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = alignedBase64(bytes, shift);
    out.push({ form: `base64@${shift}`, text: b64 }, { form: `base64url@${shift}`, text: b64.replace(/\+/g, '-').replace(/\//g, '_') });
  }
  out.push({ form: 'hex', text: bytes.toString('hex') }, { form: 'HEX', text: bytes.toString('hex').toUpperCase() });
  return out;
}

interface Channel {
  name: string;
  bytes: Buffer;
}

function channelsOf(c: SidecarClient, store: string, label: string): Channel[] {
  const out: Channel[] = [
    { name: `${label} stdout`, bytes: Buffer.concat(c.stdout) },
    { name: `${label} stderr`, bytes: Buffer.from(c.stderr, 'utf8') },
  ];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push({ name: `${label} store file ${path.relative(store, p)}`, bytes: fs.readFileSync(p) });
    }
  };
  walk(store);
  return out;
}

/** Every (channel, secret form) found: must be empty. */
function leaks(channels: Channel[], secrets: Array<[string, Array<{ form: string; text: string }>]>): string[] {
  const found: string[] = [];
  for (const ch of channels) {
    for (const [name, forms] of secrets) {
      for (const { form, text } of forms) {
        const at = ch.bytes.indexOf(text);
        if (at !== -1) found.push(`${name} (${form}) in ${ch.name}: …${ch.bytes.toString('utf8', Math.max(0, at - 60), at + text.length + 20)}…`);
      }
    }
  }
  return found;
}


const rawFrame = (framing: Framing, body: string | Buffer) => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return framing === 'lsp' ? Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]) : Buffer.concat([b, Buffer.from('\n')]);
};

const msg = (role: string, content: unknown) => ({ kind: 'message' as const, message: { role, content } });

interface Scenario {
  framing: Framing;
  logLevel: 'warn' | 'debug';
  /** Also register the ghp_ token as a secret (else it is protected only by its well-known format). */
  ghpRegistered: boolean;
}

const SCENARIOS: Scenario[] = FRAMINGS.flatMap((framing) => [
  { framing, logLevel: 'debug' as const, ghpRegistered: true },
  { framing, logLevel: 'warn' as const, ghpRegistered: false },
]);

describe.each(SCENARIOS)('no secret leaks: $framing, --log-level $logLevel, ghp registered: $ghpRegistered', ({ framing, logLevel, ghpRegistered }) => {
  it('every reachable error path with secret-laden input leaves no trace on stdout, stderr or disk', async () => {
    const store = tempDir();
    const env = { ...process.env, SIDECAR_TEST_CANARY: CANARY };
    const c = spawnSidecar({ framing, store, env, args: ['--log-level', logLevel, '--max-message-bytes', String(MAX_MESSAGE_BYTES)] });
    const covered: string[] = [];
    /** Frames answered with id null, in order: their codes are checked at the end. */
    const nullIdCodes: number[] = [];
    const expectError = async (label: string, p: Promise<unknown>, code: number) => {
      const err = await rejection(p);
      expect(err.code, label).toBe(code);
      covered.push(label);
      return err;
    };
    const rawRequest = async (label: string, id: string, body: string | Buffer, code: number) => {
      const answered = c.expectResponse(id);
      c.writeRaw(rawFrame(framing, body));
      return expectError(label, answered, code);
    };
    const rawNullId = async (label: string, body: string | Buffer, code: number) => {
      c.writeRaw(rawFrame(framing, body));
      nullIdCodes.push(code);
      covered.push(label);
    };

    // --- before initialize (nothing registered yet; answers are fixed text) ---
    await expectError('request before initialize', c.open({ sessionId: CANARY }), -32002);
    await rawNullId('malformed JSON before initialize', `{"jsonrpc":"2.0","id":1,"method":"${CANARY}",`, -32700);
    await c.initialize({ clientInfo: { name: CANARY, version: GHP } });
    covered.push('initialize with clientInfo holding the secrets');

    // --- register the secrets: values AND an env var, on one session ---
    const values = [CANARY, NUMERIC, ...(ghpRegistered ? [GHP] : [])];
    const created = await c.create({ title: 'leak scan', secrets: { values, env: ['SIDECAR_TEST_CANARY'] } });
    expect(created.secrets).toEqual({ registered: values.length });
    const { sessionId } = created;
    // A second session guarded only by the env var.
    const byEnv = await c.create({ title: 'env guarded', secrets: { env: ['SIDECAR_TEST_CANARY'] } });
    expect(byEnv.secrets).toEqual({ registered: 1 });
    await c.append({ sessionId, records: [msg('user', 'hello'), msg('assistant', 'hi')] });
    if (!ghpRegistered) {
      // Unregistered, the token is redacted by its format on write.
      const r = await c.append({ sessionId, records: [msg('user', `use ${GHP} please`)] });
      expect(r.redactions).toEqual([{ seq: 3, path: 'message.content', rule: 'github-token' }]);
    }

    // --- session ids that ARE a secret (or its encodings) ---
    const hexId = Buffer.from(CANARY).toString('hex');
    const b64urlId = Buffer.from(CANARY).toString('base64url');
    for (const id of [CANARY, GHP, hexId, b64urlId, NUMERIC]) {
      await expectError(`session/open sessionId=${id === CANARY ? 'secret' : id === GHP ? 'ghp' : 'encoded secret'}`, c.open({ sessionId: id }), -31001);
      await expectError('session/open read mode, secret id', c.open({ sessionId: id, mode: 'read' }), -31001);
      await expectError('session/read secret id', c.read({ sessionId: id }), -31001);
      await expectError('session/append secret id', c.append({ sessionId: id, records: [msg('user', 'x')] }), -31001);
      await expectError('session/close secret id', c.close(id), -31001);
    }
    // Ids containing the secret that are not valid ids.
    for (const id of [`${CANARY}/..`, `.${CANARY}`, `${GHP}..x`, CANARY.repeat(6), `${CANARY} ${GHP}`]) {
      await expectError('InvalidSessionId holding the secret', c.open({ sessionId: id }), -31002);
      await expectError('InvalidSessionId holding the secret (append)', c.append({ sessionId: id, records: [msg('user', CANARY)] }), -31002);
    }

    // --- unknown methods ---
    for (const method of [`session/${CANARY}`, CANARY, `session/${GHP}`, `$/${CANARY}`, `session/${hexId}`]) {
      await expectError(`unknown method`, c.request(method, { sessionId: CANARY }), -32601);
    }

    // --- unknown params members, at every strict level ---
    await expectError('unknown params member = secret', c.request('session/list', { [CANARY]: 1 }), -32602);
    await expectError('unknown params member = ghp', c.request('session/list', { [GHP]: GHP }), -32602);
    await expectError('unknown params member = base64url secret', c.request('session/read', { sessionId, [b64urlId]: 1 }), -32602);
    await expectError('unknown llm member', c.create({ llm: { [CANARY]: CANARY } } as never), -32602);
    await expectError('unknown secrets member', c.create({ secrets: { [GHP]: [CANARY] } } as never), -32602);
    await expectError('unknown record member', c.append({ sessionId, records: [{ kind: 'event', type: 't', payload: null, [CANARY]: 1 } as never] }), -32602);
    await expectError('unknown initialize member (second initialize)', c.request('initialize', { protocolVersion: 1, [CANARY]: 1 }), -32600);
    await expectError('unknown shutdown member', c.request('shutdown', { [CANARY]: 1 }), -32602);

    // --- invalid cursors ---
    for (const cursor of [CANARY, GHP, Buffer.from(`["x","${CANARY}"`).toString('base64'), `${CANARY}${'='.repeat(3)}`]) {
      await expectError('invalid cursor holding the secret', c.list({ cursor }), -32602);
    }

    // --- wrong types and out-of-range values carrying the secret ---
    const wrong: Array<[string, string, unknown]> = [
      ['open mode', 'session/open', { sessionId, mode: CANARY }],
      ['open sessionId type', 'session/open', { sessionId: { [CANARY]: GHP } }],
      ['read limit', 'session/read', { sessionId, limit: CANARY }],
      ['read kinds type', 'session/read', { sessionId, kinds: CANARY }],
      ['read afterSeq negative', 'session/read', { sessionId, afterSeq: -1, kinds: [CANARY] }],
      ['list limit', 'session/list', { limit: GHP }],
      ['append records type', 'session/append', { sessionId, records: CANARY }],
      ['append empty records', 'session/append', { sessionId, records: [], expectedLastSeq: CANARY }],
      ['append record kind', 'session/append', { sessionId, records: [{ kind: CANARY, value: GHP }] }],
      ['append message type', 'session/append', { sessionId, records: [{ kind: 'message', message: CANARY }] }],
      ['append role too long', 'session/append', { sessionId, records: [msg(CANARY.repeat(3), GHP)] }],
      ['append role type', 'session/append', { sessionId, records: [{ kind: 'message', message: { role: { [CANARY]: 1 } } }] }],
      ['append toolCalls arguments type', 'session/append', { sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: CANARY, name: GHP, arguments: { token: CANARY } }] } }] }],
      ['append event without payload', 'session/append', { sessionId, records: [{ kind: 'event', type: CANARY }] }],
      ['append interruption missing phase', 'session/append', { sessionId, records: [{ kind: 'interruption', reason: CANARY }] }],
      ['append reserved member seq', 'session/append', { sessionId, records: [{ ...msg('user', CANARY), seq: CANARY }] }],
      ['append expectedLastSeq type', 'session/append', { sessionId, records: [msg('user', 'x')], expectedLastSeq: GHP }],
      ['create title type', 'session/create', { title: { [CANARY]: GHP } }],
      ['create title too long', 'session/create', { title: `${CANARY} ${GHP} `.repeat(40) }],
      ['create metadata type', 'session/create', { metadata: CANARY }],
      ['create apiKeyEnv not a name', 'session/create', { llm: { apiKeyEnv: CANARY } }],
      ['create apiKeyEnv not a name (ghp, with dash)', 'session/create', { llm: { apiKeyEnv: `${GHP}-x` } }],
      ['create secrets.env not a name', 'session/create', { secrets: { env: [CANARY] } }],
      ['create secrets.values type', 'session/create', { secrets: { values: { [CANARY]: GHP } } }],
      ['params as an array', 'session/list', [CANARY, GHP]],
      ['close sessionId type', 'session/close', { sessionId: [CANARY] }],
    ];
    for (const [label, method, params] of wrong) await expectError(`-32602 ${label}`, c.request(method, params), -32602);
    const deep = { sessionId, records: [{ kind: 'event', type: 'deep', payload: JSON.parse(`${'['.repeat(200)}"${CANARY}"${']'.repeat(200)}`) as unknown }] };
    await expectError('-32602 params nested too deep', c.request('session/append', deep), -32602);

    // --- registration refusals that carry a secret elsewhere ---
    await expectError('registration refused (short) next to the secret', c.create({ title: 'x', secrets: { values: [CANARY, 'tiny'] } }), -32602);
    await expectError('registration refused (vocabulary) on open', c.open({ sessionId, secrets: { values: [GHP, 'toolCallId'] } }), -32602);

    // --- SecretRejected itself, in every position and encoding ---
    const rejected: Array<[string, unknown[]]> = [
      ['raw in content', [msg('user', `the key is ${CANARY}`)]],
      ['base64 in content', [msg('user', Buffer.from(`xy${CANARY}`).toString('base64'))]],
      ['base64url in content', [msg('user', Buffer.from(`z${CANARY}`).toString('base64url'))]],
      ['hex in content', [msg('user', Buffer.from(CANARY).toString('hex').toUpperCase())]],
      ['percent-encoded', [msg('user', `q=${[...CANARY].map((ch) => `%${ch.charCodeAt(0).toString(16)}`).join('')}`)]],
      ['json \\u escapes', [msg('user', [...CANARY].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''))]],
      ['tool-call arguments JSON', [{ kind: 'message', message: { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'curl', arguments: JSON.stringify({ auth: CANARY }) }] } }]],
      ['arguments stringified twice', [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'x', arguments: JSON.stringify(JSON.stringify({ k: CANARY })) }] } }]],
      ['object key', [{ kind: 'event', type: 'env', payload: { [CANARY]: 'v' } }]],
      ['object key, not an identifier', [{ kind: 'event', type: 'env', payload: { [`${CANARY} ${GHP}`]: 'v' } }]],
      ['under a key that is the ghp token (the path names it)', [{ kind: 'event', type: 'env', payload: { [GHP]: { v: CANARY } } }]],
      ['number', [{ kind: 'event', type: 'n', payload: { n: Number(NUMERIC) } }]],
      ['reasoningDetails', [{ kind: 'message', message: { role: 'assistant', reasoningDetails: [{ data: CANARY }] } }]],
      ['interruption toolResults', [{ kind: 'interruption', reason: 'r', phase: 'p', toolResults: [{ id: 'a', name: 'b', result: { out: CANARY } }] }]],
      ['event type', [{ kind: 'event', type: `t.${CANARY}`, payload: null }]],
      ['role', [msg(`r-${CANARY}`, 'x')]],
      ['under a credential key (redaction would hide it)', [{ kind: 'event', type: 'e', payload: { api_key: CANARY } }]],
      ['under a kept key (toolCallId)', [{ kind: 'message', message: { role: 'tool', toolCallId: CANARY, content: 'x' } }]],
      ['under a kept key (signature)', [{ kind: 'event', type: 'e', payload: { signature: Buffer.from(CANARY).toString('base64') } }]],
      ...(ghpRegistered ? [['ghp token raw', [msg('user', `tok ${GHP}`)]], ['ghp token base64', [msg('user', Buffer.from(GHP).toString('base64'))]]] as Array<[string, unknown[]]> : []),
    ];
    for (const [label, records] of rejected) {
      await expectError(`SecretRejected: ${label}`, c.append({ sessionId, records: records as never }), -31012);
    }
    await expectError('SecretRejected: env-only session', c.append({ sessionId: byEnv.sessionId, records: [msg('user', CANARY)] }), -31012);
    await expectError('SecretRejected: header title', c.create({ title: CANARY, secrets: { values: [CANARY] } }), -31012);
    await expectError('SecretRejected: header metadata base64', c.create({ metadata: { blob: Buffer.from(CANARY).toString('base64') }, secrets: { env: ['SIDECAR_TEST_CANARY'] } }), -31012);
    await expectError('SecretRejected: header cwd', c.create({ cwd: `/home/${CANARY}`, secrets: { env: ['SIDECAR_TEST_CANARY'] } }), -31012);

    // --- domain errors whose messages echo numbers or ids ---
    await expectError('Conflict echoing expectedLastSeq = numeric secret', c.append({ sessionId, records: [msg('user', 'x')], expectedLastSeq: Number(NUMERIC) }), -31003);
    const closed = await c.create({ title: 'closed' });
    await c.close(closed.sessionId);
    await expectError('ReadOnly notOpen with the secret in the records', c.append({ sessionId: closed.sessionId, records: [msg('user', CANARY)] }), -31009);
    await c.open({ sessionId: closed.sessionId, mode: 'read' });
    await expectError('ReadOnly openedReadOnly with the secret in the records', c.append({ sessionId: closed.sessionId, records: [msg('user', GHP)] }), -31009);

    // --- framing-level faults holding the secret ---
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'session/append', params: { sessionId, records: [msg('user', CANARY.repeat(20_000))] } });
    expect(Buffer.byteLength(big)).toBeGreaterThan(MAX_MESSAGE_BYTES);
    await rawRequest('oversized message (id visible) holding the secret', 'big', big, -31010);
    await rawNullId('malformed JSON holding the secret', `{"jsonrpc":"2.0","id":2,"method":"session/append","params":{"x":"${CANARY}"`, -32700);
    await rawNullId('invalid UTF-8 next to the secret', Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":3,"params":"${CANARY}`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]), -32700);
    await rawNullId('batch holding the secret', JSON.stringify([{ jsonrpc: '2.0', id: 4, method: 'session/read', params: { sessionId: CANARY } }]), -32600);
    await rawNullId('not an object (a string secret)', JSON.stringify(CANARY), -32600);
    await rawNullId('id of a wrong type holding the secret', JSON.stringify({ jsonrpc: '2.0', id: { [CANARY]: GHP }, method: 'session/list' }), -32600);
    await rawNullId('neither request nor response', JSON.stringify({ jsonrpc: '2.0', result: CANARY }), -32600);
    await rawRequest('jsonrpc version holding the secret', 'v', JSON.stringify({ jsonrpc: CANARY, id: 'v', method: 'session/list' }), -32600);
    await rawRequest('params not an object (the secret)', 'p', JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'session/list', params: CANARY }), -32600);
    await rawRequest('method not a string', 'm', JSON.stringify({ jsonrpc: '2.0', id: 'm', method: { [CANARY]: 1 } }), -32600);
    await rawRequest('request with an object but no method', 'n', JSON.stringify({ jsonrpc: '2.0', id: 'n', params: { [GHP]: CANARY } }), -32600);

    // --- an id reused while in flight, cancellation ---
    const dup = (text: string) => c.frame({ jsonrpc: '2.0', id: 'dup', method: 'session/append', params: { sessionId, records: [msg('user', text)] } });
    const firstAnswer = c.expectResponse('dup').then(() => undefined, (e: unknown) => e); // the refusal comes first
    c.writeRaw(Buffer.concat([dup('fine'), dup(CANARY)]));
    expect(await firstAnswer).toMatchObject({ code: -32600 });
    await c.read({ sessionId }); // waits for the admitted append (read-your-writes)
    covered.push('id reused while in flight (second one holds the secret)');
    const cancelled = c.expectResponse('cancel-me');
    c.writeRaw(Buffer.concat([
      c.frame({ jsonrpc: '2.0', id: 'cancel-me', method: 'session/append', params: { sessionId, records: [msg('user', CANARY)] } }),
      c.frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 'cancel-me' } }),
    ]));
    const cancelErr = await rejection(cancelled);
    expect([-32800, -31012]).toContain(cancelErr.code);
    covered.push('$/cancelRequest of an append holding the secret');

    // --- notifications and client-sent responses (no answer; may only log) ---
    c.notify(`${CANARY}/notify`, { [GHP]: CANARY });
    c.notify('$/cancelRequest', { id: CANARY });
    c.notify('$/setTrace', { value: CANARY });
    c.notify('$/logTrace', { message: CANARY, verbose: GHP });
    c.notify('initialized', { [CANARY]: GHP });
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: null, error: { code: 1, message: CANARY, data: GHP } }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 'unsolicited', result: { token: CANARY } }));
    c.writeRaw(c.frame({ jsonrpc: '2.0', id: 'unsolicited-error', error: { code: -1, message: GHP } }));
    covered.push('unknown notification', '$/cancelRequest of an unknown id', '$/setTrace', '$/logTrace', 'initialized with params', 'client-sent responses (id null, unknown ids)');

    // --- lifecycle ---
    await expectError('second initialize', c.initialize({ clientInfo: { name: CANARY } }), -32600);
    expect((await c.list()).sessions.length).toBeGreaterThan(0); // the connection still works after all of the above
    await c.request('shutdown');
    await expectError('request after shutdown', c.open({ sessionId: CANARY, secrets: { values: [GHP] } }), -32600);
    await expectError('second shutdown', c.request('shutdown', { [CANARY]: 1 }), -32600);
    c.notify('exit');
    expect(await c.exited).toEqual({ code: 0, signal: null });

    // --- every frame parsed; the answers that carried id null are the ones expected ---
    const frames = parseFrames(Buffer.concat(c.stdout), framing);
    expect(frames.filter((f) => f.id === null).map((f) => (f.error as { code: number }).code)).toEqual(nullIdCodes);
    const dupAnswers = frames.filter((f) => f.id === 'dup');
    expect(dupAnswers.map((f) => (f.error as { code?: number } | undefined)?.code).sort()).toEqual([-32600, undefined]);
    if (logLevel === 'debug') expect(c.stderr).toContain('session-sidecar debug: ');
    expect(covered.length).toBeGreaterThan(100);

    // --- the scan ---
    const secrets: Array<[string, Array<{ form: string; text: string }>]> = [
      ['canary', formsOf(CANARY)],
      ['numeric secret', formsOf(NUMERIC)],
      ['ghp token', ghpRegistered ? formsOf(GHP) : [{ form: 'raw', text: GHP }]],
    ];
    expect(leaks(channelsOf(c, store, 'sidecar'), secrets)).toEqual([]);
  });
});

describe.each(FRAMINGS)('no secret leaks on fatal framing faults (%s)', (framing) => {
  const scenario = async (fault: (c: SidecarClient) => void) => {
    const store = tempDir();
    const c = await startSidecar({ framing, store, env: { ...process.env, SIDECAR_TEST_CANARY: CANARY }, args: ['--log-level', 'debug', '--max-message-bytes', '4096'] });
    const { sessionId } = await c.create({ secrets: { values: [CANARY, GHP], env: ['SIDECAR_TEST_CANARY'] } });
    await c.append({ sessionId, records: [msg('user', 'before the fault')] });
    fault(c);
    const { code } = await c.exited;
    expect(code).toBe(1);
    expect(c.stderr).toContain('session-sidecar error: closing the connection: ');
    expect(() => parseFrames(Buffer.concat(c.stdout), framing)).not.toThrow();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['canary', formsOf(CANARY)], ['ghp token', formsOf(GHP)]])).toEqual([]);
  };

  it('an oversized message whose id is not in its first 4 KiB', async () => {
    await scenario((c) => {
      const body = `{"jsonrpc":"2.0","method":"session/append","params":{"records":[{"kind":"message","message":{"role":"user","content":"${`${CANARY} ${GHP} `.repeat(2000)}"}}]},"id":"late"}`;
      c.writeRaw(rawFrame(framing, body));
    });
  });

  if (framing === 'lsp') {
    it('an LSP header whose Content-Length is the secret', async () => {
      await scenario((c) => c.writeRaw(`Content-Length: ${CANARY}\r\nX-Token: ${GHP}\r\n\r\n{}`));
    });

    it('an LSP header block longer than 8 KiB holding the secret', async () => {
      await scenario((c) => c.writeRaw(`X-Secret: ${`${CANARY}${GHP}`.repeat(400)}\r\n`));
    });
  }
});

/**
 * Results are not scrubbed like errors are, so they must never carry back a credential the
 * sidecar itself recognized (and redacted on disk).
 */
describe.each(FRAMINGS)('results never echo a recognized credential (%s)', (framing) => {
  const BEARER = 'Bearer abcdefghijklmnop1234';

  it('redactions[].path does not name a credential-shaped object key it redacted', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const created = await c.create({ metadata: { [GHP]: 'v' } });
    expect(created.redactions?.map((r) => r.rule)).toEqual(['github-token']);
    const appended = await c.append({
      sessionId: created.sessionId,
      records: [
        { kind: 'event', type: 'env', payload: { [GHP]: { api_key: 'zzzzzzzz' } } },
        { kind: 'event', type: 'req', payload: { headers: { [BEARER]: true } } },
      ],
    });
    expect(appended.redactions?.map((r) => r.rule)).toEqual(['github-token', 'credential-key', 'bearer-token']);
    await c.shutdown();
    // The keys were redacted on disk; the answers (stdout) must not hand them back either.
    const found = leaks(channelsOf(c, store, 'sidecar'), [['ghp token', formsOf(GHP)], ['bearer token', [{ form: 'raw', text: BEARER.slice(7) }]]]);
    expect(found).toEqual([]);
  });

  it('secrets.unsetEnv does not echo a credential given where an environment variable name belongs', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    // A GitHub token is also a valid environment variable name: a client that passes the key instead of its name.
    // It is refused as a name (-32602, naming where), and the answer never repeats it.
    const viaLlm = await c.create({ llm: { provider: 'github', apiKeyEnv: GHP } }).then(() => undefined, (e: unknown) => e);
    const viaSecrets = await c.create({ secrets: { env: [GHP] } }).then(() => undefined, (e: unknown) => e);
    expect(viaLlm).toMatchObject({ code: -32602, data: { issues: [{ path: 'llm.apiKeyEnv' }] } });
    expect(viaSecrets).toMatchObject({ code: -32602, data: { issues: [{ path: 'secrets.env[0]' }] } });
    expect((await c.list()).sessions).toEqual([]);
    await c.shutdown();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['ghp token', formsOf(GHP)]])).toEqual([]);
  });

  it('a random key with no known prefix given as an env var name is refused too, and echoed nowhere (issue 27)', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const pasted = 'Zq8kP3vWm7xRt2nLq9Yb4cD6eF1gH5jK'; // a valid name by its characters, secret-shaped
    const viaLlm = await c.create({ llm: { provider: 'x', apiKeyEnv: pasted } }).then(() => undefined, (e: unknown) => e);
    const viaSecrets = await c.create({ secrets: { env: ['SIDECAR_TEST_UNSET', pasted] } }).then(() => undefined, (e: unknown) => e);
    expect(viaLlm).toMatchObject({ code: -32602, data: { issues: [{ path: 'llm.apiKeyEnv' }] } });
    expect(viaSecrets).toMatchObject({ code: -32602, data: { issues: [{ path: 'secrets.env[1]' }] } });
    expect((await c.list()).sessions).toEqual([]);
    await c.shutdown();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['pasted key', formsOf(pasted)]])).toEqual([]);
  });
});

describe.each(FRAMINGS)('secrets carried by the failing request itself, glued tokens, other sessions (%s)', (framing) => {
  it('an error caused by the request that carried a secret never echoes that secret', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const unknownMember = await rejection(c.request('session/create', { secrets: { values: [CANARY] }, [CANARY]: 1 }));
    expect(unknownMember.code).toBe(-32602);
    const notFound = await rejection(c.request('session/open', { sessionId: CANARY, secrets: { values: [CANARY] } }));
    expect(notFound.code).toBe(-31001);
    await c.shutdown();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['canary', formsOf(CANARY)]])).toEqual([]);
  });

  it('a token glued to a name (GITHUB_TOKEN_ghp_…) is still redacted on write and in errors', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    const r = await c.append({ sessionId, records: [msg('tool', `GITHUB_TOKEN_${GHP}`)] });
    expect(r.redactions).toEqual([{ seq: 1, path: 'message.content', rule: 'github-token' }]);
    expect((await rejection(c.open({ sessionId: `x_${GHP}` }))).code).toBe(-31001);
    await c.shutdown();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['ghp token', formsOf(GHP)]])).toEqual([]);
  });

  it('a secret registered for one session is refused in every other session of the process', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    await c.create({ secrets: { values: [CANARY] } });
    const { sessionId: other } = await c.create({ title: 'other' });
    const err = await rejection(c.append({ sessionId: other, records: [msg('user', `the canary is ${CANARY}`)] }));
    expect(err.kind).toBe('SecretRejected');
    expect((await rejection(c.create({ title: CANARY }))).kind).toBe('SecretRejected');
    await c.shutdown();
    expect(leaks(channelsOf(c, store, 'sidecar'), [['canary', formsOf(CANARY)]])).toEqual([]);
  });
});
