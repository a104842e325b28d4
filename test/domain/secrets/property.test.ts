import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { StoreError } from '../../../src/domain/errors.js';
import { needlesOf } from '../../../src/domain/secrets/encodings.js';
import { guardValue } from '../../../src/domain/secrets/gate.js';
import { refuseSecret, SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import type { RecordInput } from '../../../src/domain/types.js';
import { ENCODINGS, expectNoLeak, leaksUnder, nestedJson, sharedDir, storeOn, VOCABULARY, writtenState } from './secretsHelpers.js';

/**
 * Property: whatever the record's shape, wherever a registered secret is put in it and in
 * whatever encoding, through any sequence of create / append / open / close / restart on a
 * real store, the append is refused with nothing written, clean appends go through with
 * gapless seqs, and no file of the store ever holds the secret or one of its encodings.
 */

// Clean records are made of these, so no clean record can hold a secret by chance: every
// secret below has, in each of its encodings, a character the clean JSON text never has.
const CLEAN_TEXT_UNITS = [...'abcdefghijklmnopqrstuvwxyz ,.!?'];
/** Whether text could stand in the JSON text of a clean record (made of the units above and small integers). */
const possibleInCleanJson = (t: string) => {
  if (!/^[a-z0-9 ,.!?:"{}[\]-]*$/.test(t)) return false; // a character clean JSON text never has
  if (/^[a-z0-9]*$/.test(t) && /\d/.test(t)) return false; // a letter-digit run with a digit: digits stand only in numbers of <= 4 digits
  return true;
};

const cleanString = fc.string({ unit: fc.constantFrom(...CLEAN_TEXT_UNITS), maxLength: 16 });
const cleanKey = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), minLength: 1, maxLength: 8 });
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const { object: cleanObject } = fc.letrec<{ value: Json; array: Json[]; object: Record<string, Json> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, cleanString, fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(cleanKey, tie('value'), { maxKeys: 4 }),
}));
const cleanRecord = cleanObject.map((payload): RecordInput => ({ kind: 'event', type: 'prop', payload }));

const SECRET_UNITS = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  '"', '\\', '+', '/', '=', '%', '-', '_', '!', '@', '#', ' ', '\n', '\t', '\u00e9', '\u00fc', '\u20ac', '\u00a0', '\u{1F511}', '\u{1F600}',
  '\\u0041', '\\/', // a backslash then text that reads like an escape one level deeper
];
const secretArb = fc
  .string({ unit: fc.constantFrom(...SECRET_UNITS), minLength: 8, maxLength: 24 })
  .filter((s) => refuseSecret(s, VOCABULARY) === undefined && needlesOf(s).every((n) => !possibleInCleanJson(n.text)));
const secretsArb = fc.tuple(secretArb, secretArb).filter(([a, b]) => a !== b && !a.includes(b) && !b.includes(a));

const WRAPS = ['string', 'affix', 'key', 'json1', 'json2', 'json3', 'jsonKey', 'array'] as const;
const embedArb = fc.record({
  which: fc.constantFrom(0, 1),
  enc: fc.constantFrom(...ENCODINGS),
  wrap: fc.constantFrom(...WRAPS),
  route: fc.array(fc.nat(), { maxLength: 5 }),
  prefix: cleanString,
  suffix: cleanString,
});
type Embed = typeof embedArb extends fc.Arbitrary<infer T> ? T : never;

function payloadOf(secret: string, e: Embed): Json {
  const text = e.enc.encode(secret);
  switch (e.wrap) {
    case 'string': return text;
    case 'affix': return `${e.prefix}${text}${e.suffix}`;
    case 'key': return { [`${e.prefix}${text}`]: 1 };
    case 'json1': return nestedJson(secret, e.enc, 1);
    case 'json2': return nestedJson(secret, e.enc, 2);
    case 'json3': return nestedJson(secret, e.enc, 3);
    case 'jsonKey': return nestedJson(secret, e.enc, 1, true);
    case 'array': return [[e.prefix, text]];
  }
}

/** A copy of `base` with `payload` put somewhere along `route`. */
function embedIn(base: Record<string, Json>, payload: Json, route: number[]): Record<string, Json> {
  const root = structuredClone(base);
  let at: Json[] | Record<string, Json> = root;
  for (const r of route) {
    const children: Array<Json[] | Record<string, Json>> = (Array.isArray(at) ? at : Object.values(at)).filter((c): c is Json[] | Record<string, Json> => c !== null && typeof c === 'object');
    if (children.length === 0) break;
    at = children[r % children.length]!;
  }
  if (Array.isArray(at)) at.splice((route[0] ?? 0) % (at.length + 1), 0, payload);
  else at[`zz${Object.keys(at).length}`] = payload;
  return root;
}

const dirtyRecord = (secret: string, base: Record<string, Json>, e: Embed): RecordInput => ({
  kind: 'event', type: 'prop', payload: embedIn(base, payloadOf(secret, e), e.route),
});

// ---------------------------------------------------------------------------------------------

describe('guardValue, directly', () => {
  it('refuses a secret embedded anywhere in any encoding, names a path within the record, leaks nothing; passes clean values', () => {
    fc.assert(
      fc.property(secretsArb, cleanObject, embedArb, ([a, b], base, e) => {
        const set = new SecretSet();
        set.add(a);
        set.add(b);
        const secret = e.which === 0 ? a : b;
        const clean = { kind: 'event', type: 'prop', payload: base };
        expect(guardValue(clean, set, 'records[0]').text).toBe(JSON.stringify(clean));
        let err: unknown;
        try {
          guardValue(dirtyRecord(secret, base, e), set, 'records[0]');
        } catch (x) {
          err = x;
        }
        expect(err).toBeInstanceOf(StoreError);
        expect((err as StoreError).kind).toBe('SecretRejected');
        expect(String((err as StoreError).details.path)).toMatch(/^records\[0\]\.payload/);
        expectNoLeak(err as Error, secret);
      }),
      { numRuns: 1500 },
    );
  });
});

type Op =
  | { t: 'create' }
  | { t: 'append'; s: number; records: RecordInput[] }
  | { t: 'dirty'; s: number; records: RecordInput[]; at: number; base: Record<string, Json>; e: Embed }
  | { t: 'dirtyHeader'; base: Record<string, Json>; e: Embed }
  | { t: 'close'; s: number }
  | { t: 'open'; s: number; mode: 'read' | 'write' }
  | { t: 'restart' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>({ t: 'create' }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('append' as const), s: fc.nat(), records: fc.array(cleanRecord, { minLength: 1, maxLength: 3 }) }), weight: 3 },
  {
    arbitrary: fc.record({
      t: fc.constant('dirty' as const), s: fc.nat(), records: fc.array(cleanRecord, { maxLength: 3 }), at: fc.nat(), base: cleanObject, e: embedArb,
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ t: fc.constant('dirtyHeader' as const), base: cleanObject, e: embedArb }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('close' as const), s: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('open' as const), s: fc.nat(), mode: fc.constantFrom('read' as const, 'write' as const) }), weight: 1 },
  { arbitrary: fc.constant<Op>({ t: 'restart' }), weight: 1 },
);

describe('a real store under random sessions of appends', () => {
  it('refuses every append holding a secret, accepts every clean one, and never writes a secret', async () => {
    await fc.assert(
      fc.asyncProperty(secretsArb, fc.array(opArb, { minLength: 1, maxLength: 10 }), async ([apiKey, sent], ops) => {
        const { dir: root, remove } = sharedDir('sidecar-prop-');
        const env = { PROP_API_KEY: apiKey };
        const header = { title: 'prop', llm: { apiKeyEnv: 'PROP_API_KEY' } };
        const secrets = { values: [sent] };
        let s: FileSessionStore = storeOn(root, { env });
        const ids: string[] = [];
        const lastSeq = new Map<string, number>();
        let open = new Map<string, 'read' | 'write'>();
        const create = async () => {
          const { sessionId } = await s.create(header, secrets);
          ids.push(sessionId);
          lastSeq.set(sessionId, 0);
          open.set(sessionId, 'write');
          return sessionId;
        };
        const writable = async (n: number) => {
          const id = ids.length === 0 ? await create() : ids[n % ids.length]!;
          if (open.get(id) !== 'write') {
            await s.open(id, 'write', secrets);
            open.set(id, 'write');
          }
          return id;
        };
        const unchanged = async (p: () => Promise<unknown>, secret: string) => {
          const before = writtenState(root);
          const err = await p().then(() => undefined, (x: unknown) => x);
          expect(err).toBeInstanceOf(StoreError);
          expect((err as StoreError).kind).toBe('SecretRejected');
          expectNoLeak(err as Error, secret);
          expect(writtenState(root)).toEqual(before);
        };
        try {
          for (const op of ops) {
            switch (op.t) {
              case 'create':
                await create();
                break;
              case 'append': {
                const id = await writable(op.s);
                const r = await s.append(id, op.records);
                expect(r.firstSeq).toBe(lastSeq.get(id)! + 1);
                expect(r.lastSeq).toBe(lastSeq.get(id)! + op.records.length);
                lastSeq.set(id, r.lastSeq);
                break;
              }
              case 'dirty': {
                const id = await writable(op.s);
                const secret = op.e.which === 0 ? apiKey : sent;
                const batch = [...op.records];
                batch.splice(op.at % (batch.length + 1), 0, dirtyRecord(secret, op.base, op.e));
                await unchanged(() => s.append(id, batch), secret);
                break;
              }
              case 'dirtyHeader': {
                const secret = op.e.which === 0 ? apiKey : sent;
                await unchanged(() => s.create({ ...header, metadata: embedIn(op.base, payloadOf(secret, op.e), op.e.route) }, secrets), secret);
                break;
              }
              case 'close': {
                const id = ids[op.s % Math.max(1, ids.length)];
                if (id !== undefined && open.has(id)) {
                  await s.close(id);
                  open.delete(id);
                }
                break;
              }
              case 'open': {
                const id = ids[op.s % Math.max(1, ids.length)];
                if (id === undefined) break;
                const r = await s.open(id, op.mode, secrets);
                expect(r.lastSeq).toBe(lastSeq.get(id));
                if (open.get(id) !== 'write') open.set(id, r.mode);
                break;
              }
              case 'restart':
                await s.closeAll();
                s = storeOn(root, { env });
                open = new Map();
                break;
            }
          }
          await s.closeAll();
          const t = storeOn(root, { env });
          for (const id of ids) expect((await t.read(id)).lastSeq).toBe(lastSeq.get(id));
          await t.closeAll();
          expect(leaksUnder(root, [apiKey, sent])).toEqual([]);
        } finally {
          await s.closeAll().catch(() => undefined);
          remove();
        }
      }),
      { numRuns: 1000 },
    );
  });
});
