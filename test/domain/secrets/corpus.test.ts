import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { needlesOf } from '../../../src/domain/secrets/encodings.js';
import { guardValue } from '../../../src/domain/secrets/gate.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import type { RecordInput, SessionHeaderInput } from '../../../src/domain/types.js';
import { indexSettled } from '../../backends/file/storeHelpers.js';
import {
  ENCODINGS, type Encoding, expectNoLeak, leaksUnder, nestedJson, rejects, rulesFor, sharedDir, storeOn, writtenState,
} from './secretsHelpers.js';

/**
 * The known-secret corpus (protocol/README.md section 10): every position a record or header can
 * hold text in, times every encoding a client could send a secret in, through the real store.
 * Each case must be refused whole with SecretRejected naming the path and the rule, with
 * nothing written, and the error must hold no 6-character run or encoding of the secret.
 */

const PLAIN = 'Zq9kL2vX8mN4pR7t';
const SPECIAL = 'Qu"ot\\e+/=Wk9!x'; // a quote, a backslash, + / =
const NON_ASCII = 'pässwörd-Ünïcødé-42';
const EMOJI = 'vault-\u{1F511}-k3y-\u{1F5DD}-Z9'; // two non-BMP characters (surrogate pairs)
const FROM_API_KEY_ENV = 'EnvApiKey-7f3a9c2e41';
const FROM_SECRETS_ENV = 'EnvList-4b8d0e6f22';
const NUMERIC = '31415926535897';

const ENV = { CORPUS_API_KEY: FROM_API_KEY_ENV, CORPUS_TOKEN: FROM_SECRETS_ENV };
const REGISTRATION = { env: ['CORPUS_TOKEN'], values: [PLAIN, SPECIAL, NON_ASCII, EMOJI, NUMERIC] };
const HEADER_BASE: SessionHeaderInput = { title: 'corpus', llm: { provider: 'test', apiKeyEnv: 'CORPUS_API_KEY' } };

const SECRETS: Array<[string, string]> = [
  ['alphanumeric', PLAIN],
  ['quote, backslash, + / =', SPECIAL],
  ['non-ASCII', NON_ASCII],
  ['non-BMP (emoji)', EMOJI],
  ['from llm.apiKeyEnv', FROM_API_KEY_ENV],
  ['from secrets.env', FROM_SECRETS_ENV],
];

interface Position {
  name: string;
  build: (secret: string, enc: Encoding) => { records: RecordInput[]; path: string };
}

const msg = (role: string, content: unknown, extra: Record<string, unknown> = {}): RecordInput => ({
  kind: 'message', message: { role, content, ...extra },
});
const toolCall = (args: string) => msg('assistant', '', { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: args }] });
const TC = 'records[0].message.toolCalls[0].arguments';

const POSITIONS: Position[] = [
  { name: 'message content', build: (s, e) => ({ records: [msg('user', `see ${e.encode(s)} here`)], path: 'records[0].message.content' }) },
  {
    name: 'content array element',
    build: (s, e) => ({
      records: [msg('user', [{ type: 'text', text: 'hello' }, { type: 'text', text: e.encode(s) }])],
      path: 'records[0].message.content[1].text',
    }),
  },
  {
    name: 'object key',
    build: (s, e) => ({ records: [{ kind: 'event', type: 'x', payload: { meta: { [`k-${e.encode(s)}`]: true } } }], path: 'records[0].payload.meta.<key>' }),
  },
  { name: 'tool arguments, stringified once', build: (s, e) => ({ records: [toolCall(nestedJson(s, e, 1))], path: `${TC}<json>.q` }) },
  { name: 'tool arguments, stringified twice', build: (s, e) => ({ records: [toolCall(nestedJson(s, e, 2))], path: `${TC}<json><json>.q` }) },
  { name: 'tool arguments, stringified three times', build: (s, e) => ({ records: [toolCall(nestedJson(s, e, 3))], path: `${TC}<json><json><json>.q` }) },
  { name: 'key inside tool arguments', build: (s, e) => ({ records: [toolCall(nestedJson(s, e, 1, true))], path: `${TC}<json>.<key>` }) },
  {
    name: 'reasoningDetails',
    build: (s, e) => ({
      records: [msg('assistant', 'done', { reasoningDetails: [{ type: 'reasoning.text', text: 'hm' }, { type: 'reasoning.encrypted', data: e.encode(s) }] })],
      path: 'records[0].message.reasoningDetails[1].data',
    }),
  },
  {
    name: 'nested arrays',
    build: (s, e) => ({ records: [{ kind: 'event', type: 'arr', payload: [[1, [e.encode(s)]]] }], path: 'records[0].payload[0][1][0]' }),
  },
  {
    name: 'interruption tool result',
    build: (s, e) => ({
      records: [{
        kind: 'interruption', reason: 'cancelled', phase: 'executingTools',
        toolResults: [{ id: 'call_1', name: 'sh', result: { stdout: ['line one', `x ${e.encode(s)}`] } }],
      }],
      path: 'records[0].toolResults[0].result.stdout[1]',
    }),
  },
  {
    name: 'third record of a batch',
    build: (s, e) => ({
      records: [msg('user', 'fine'), { kind: 'event', type: 'ok', payload: { n: 1 } }, msg('tool', `out: ${e.encode(s)}`)],
      path: 'records[2].message.content',
    }),
  },
];

interface HeaderPosition {
  name: string;
  build: (secret: string, enc: Encoding) => { header: SessionHeaderInput; path: string };
}

const HEADER_POSITIONS: HeaderPosition[] = [
  { name: 'title', build: (s, e) => ({ header: { ...HEADER_BASE, title: `t ${e.encode(s)}` }, path: 'header.title' }) },
  { name: 'cwd', build: (s, e) => ({ header: { ...HEADER_BASE, cwd: `/home/u/${e.encode(s)}` }, path: 'header.cwd' }) },
  { name: 'systemPrompt', build: (s, e) => ({ header: { ...HEADER_BASE, systemPrompt: `You are terse. ${e.encode(s)}` }, path: 'header.systemPrompt' }) },
  { name: 'metadata member', build: (s, e) => ({ header: { ...HEADER_BASE, metadata: { notes: e.encode(s) } }, path: 'header.metadata.notes' }) },
  {
    name: 'metadata, deep',
    build: (s, e) => ({ header: { ...HEADER_BASE, metadata: { deep: [{ x: [0, e.encode(s)] }] } }, path: 'header.metadata.deep[0].x[1]' }),
  },
  { name: 'metadata key', build: (s, e) => ({ header: { ...HEADER_BASE, metadata: { [`k-${e.encode(s)}`]: 1 } }, path: 'header.metadata.<key>' }) },
  {
    name: 'metadata, JSON text stringified twice',
    build: (s, e) => ({ header: { ...HEADER_BASE, metadata: { args: nestedJson(s, e, 2) } }, path: 'header.metadata.args<json><json>.q' }),
  },
  { name: 'llm.baseUrl', build: (s, e) => ({ header: { ...HEADER_BASE, llm: { ...HEADER_BASE.llm, baseUrl: `https://h/${e.encode(s)}` } }, path: 'header.llm.baseUrl' }) },
];

let root: string;
let remove: () => void;
let s: FileSessionStore;
let sessionId: string;

beforeAll(async () => {
  ({ dir: root, remove } = sharedDir());
  s = storeOn(root, { env: ENV });
  const created = await s.create(HEADER_BASE, REGISTRATION);
  expect(created.secrets).toEqual({ registered: 7 });
  sessionId = created.sessionId;
  expect(await s.append(sessionId, [msg('user', 'nothing to hide')])).toEqual({ firstSeq: 1, lastSeq: 1 });
  await indexSettled(s);
});

afterAll(async () => {
  await s.closeAll();
  expect(leaksUnder(root, SECRETS.map(([, v]) => v).concat(NUMERIC))).toEqual([]);
  remove();
});

describe.each(SECRETS)('a secret (%s)', (_label, secret) => {
  describe.each(POSITIONS.map((p) => [p.name, p] as const))('in a record: %s', (_pos, position) => {
    it.each(ENCODINGS.map((e) => [e.name, e] as const))('%s: refused whole, path and rule named, nothing written', async (_enc, enc) => {
      const { records, path } = position.build(secret, enc);
      const before = writtenState(root);
      const err = await rejects(s.append(sessionId, records), 'SecretRejected');
      expect(err.details.path).toBe(path);
      expect(rulesFor(enc, secret)).toContain(err.details.rule);
      expectNoLeak(err, secret);
      expect(writtenState(root)).toEqual(before);
    });
  });

  describe.each(HEADER_POSITIONS.map((p) => [p.name, p] as const))('in the header: %s', (_pos, position) => {
    it.each(ENCODINGS.map((e) => [e.name, e] as const))('%s: create refused, no session appears', async (_enc, enc) => {
      const { header, path } = position.build(secret, enc);
      const before = writtenState(root);
      const err = await rejects(s.create(header, REGISTRATION), 'SecretRejected');
      expect(err.details.path).toBe(path);
      expect(rulesFor(enc, secret)).toContain(err.details.rule);
      expectNoLeak(err, secret);
      expect(writtenState(root)).toEqual(before);
    });
  });
});

describe('the text of numbers', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a number member', { kind: 'event', type: 'n', payload: { n: Number(NUMERIC) } }, 'records[0].payload.n'],
    ['a negative number', { kind: 'event', type: 'n', payload: { n: -Number(NUMERIC) } }, 'records[0].payload.n'],
    ['a number in an array', { kind: 'event', type: 'n', payload: [1, 2, Number(NUMERIC)] }, 'records[0].payload[2]'],
    ['a number under a credential key', { kind: 'event', type: 'n', payload: { password: Number(NUMERIC) } }, 'records[0].payload.password'],
    ['a number in tool arguments', toolCall(`{"n":${NUMERIC}}`), `${TC}<json>.n`],
    ['a number in tool arguments, stringified twice', toolCall(JSON.stringify(`{"n":${NUMERIC}}`)), `${TC}<json><json>.n`],
    ['digits as an object key', { kind: 'event', type: 'n', payload: { [NUMERIC]: 1 } }, 'records[0].payload.<key>'],
  ];
  it.each(cases)('%s is refused', async (_name, record, path) => {
    const before = writtenState(root);
    const err = await rejects(s.append(sessionId, [record as RecordInput]), 'SecretRejected');
    expect(err.details.path).toBe(path);
    expect(['raw', 'nested-json']).toContain(err.details.rule);
    expectNoLeak(err, NUMERIC);
    expect(writtenState(root)).toEqual(before);
  });

  it('a number whose text does not hold the secret is kept, also under a credential key', async () => {
    const r = await s.append(sessionId, [{ kind: 'event', type: 'n', payload: { password: 3141592653, n: 2.5 } }]);
    expect(r.redactions).toBeUndefined();
    const page = await s.read(sessionId, { afterSeq: r.firstSeq - 1 });
    expect(page.records[0]?.payload).toEqual({ password: 3141592653, n: 2.5 });
  });
});

describe('refusals beyond the table', () => {
  it('a secret that only forms in the JSON text (across a key and its value) is refused at the record', async () => {
    const { dir, remove: rm } = sharedDir();
    try {
      const t = storeOn(dir);
      const joint = 'kk7":"Vw3x'; // registered as is: the JSON text of {"kk7":"Vw3x…"} holds it
      const { sessionId: id } = await t.create({}, { values: [joint] });
      const err = await rejects(t.append(id, [{ kind: 'event', type: 'x', payload: { kk7: 'Vw3x and more' } }]), 'SecretRejected');
      expect(err.details).toEqual({ path: 'records[0]', rule: 'raw' });
      await t.closeAll();
      expect(leaksUnder(dir, [joint])).toEqual([]);
    } finally {
      rm();
    }
  });

  it('a key on the reported path sharing a run of the secret is not shown', async () => {
    const record = { kind: 'event', type: 'x', payload: { [PLAIN.slice(0, 9)]: { inner: `is ${PLAIN}` } } };
    const err = await rejects(s.append(sessionId, [record]), 'SecretRejected');
    expect(String(err.details.path)).toMatch(/^records\[0\]\.payload.*inner$/);
    expectNoLeak(err, PLAIN);
  });

  it('a batch is refused whole: the clean records before the secret are not written, the next append gets the next seq', async () => {
    const before = writtenState(root);
    const err = await rejects(s.append(sessionId, [msg('user', 'a'), msg('user', 'b'), msg('user', `c ${EMOJI}`), msg('user', 'd')]), 'SecretRejected');
    expect(err.details).toEqual({ path: 'records[2].message.content', rule: 'raw' });
    expect(writtenState(root)).toEqual(before);
    const { lastSeq } = await s.read(sessionId);
    expect(await s.append(sessionId, [msg('user', 'after')])).toEqual({ firstSeq: lastSeq + 1, lastSeq: lastSeq + 1 });
    await indexSettled(s);
  });

  it('a secret registered with one session is refused in every session of the store', async () => {
    const other = await s.create({ title: 'other' });
    await indexSettled(s);
    const before = writtenState(root);
    const err = await rejects(s.append(other.sessionId, [msg('user', `x ${FROM_SECRETS_ENV}`)]), 'SecretRejected');
    expect(err.details).toEqual({ path: 'records[0].message.content', rule: 'raw' });
    expect(writtenState(root)).toEqual(before);
  });
});

describe('SecretSet and the gate, directly', () => {
  const set = new SecretSet();
  for (const [, v] of SECRETS) set.add(v);

  it.each(SECRETS)('scrub removes every encoding of a secret (%s) from text', (_label, secret) => {
    for (const enc of ENCODINGS) {
      const text = `error near ${enc.encode(secret)} and ${JSON.stringify(enc.encode(secret))}`;
      const out = set.scrub(text);
      for (const n of needlesOf(secret)) expect(out.includes(n.text), `${enc.name}: ${n.rule} left in ${out}`).toBe(false);
      expect(out.includes(secret)).toBe(false);
      expect(set.findInText(out), `${enc.name}: still found in ${out}`).toBeUndefined();
    }
  });

  it.each(SECRETS)('findInBytes finds every needle of a secret (%s) in a serialized line', (_label, secret) => {
    for (const n of needlesOf(secret)) expect(set.findInBytes(Buffer.from(`{"seq":1,"x":"${n.text}"}\n`))).toBe(n.rule);
  });

  it('guardValue reports the path within `where` and leaves clean values alone', () => {
    expect(() => guardValue({ a: [{ b: `x${PLAIN}` }] }, set, 'records[3]')).toThrow(/records\[3\]\.a\[0\]\.b/);
    const clean = { a: [{ b: 'fine' }] };
    expect(guardValue(clean, set, 'records[0]')).toEqual({ value: clean, text: JSON.stringify(clean), redactions: [] });
  });
});
