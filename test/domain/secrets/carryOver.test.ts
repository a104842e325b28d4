/**
 * The carry-over (src/domain/secrets/carryOver.ts): a registered secret streamed in chunks of
 * 1 to 4,096 characters, starting at every offset that puts it across a chunk boundary, is
 * found by the chunk that completes it — by the carry-over when it straddles, by the record's
 * own check when it stands whole in the chunk — and by no chunk before. The store-level
 * behaviour on every backend is test/storeContract/secretSplits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { carryAcross, type CarryOver } from '../../../src/domain/secrets/carryOver.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';

const SECRET = 'Zq8kP3vWm7xRt2n-carry-5e4f';
const secrets = new SecretSet();
secrets.add(SECRET);

const stream = (piece: { text: string } | { dataBase64: string }) => ({ kind: 'toolStream', toolSeq: 1, stream: 'stdout', ...piece });
const delta = (text: string) => ({ kind: 'message', message: { role: 'assistant', content: text } });

/** The index of the first chunk at which the secret is found (by the carry-over or in the chunk alone), or -1. */
function firstFound(chunks: string[], record: (chunk: string) => unknown): number {
  let carry: CarryOver | undefined;
  for (let k = 0; k < chunks.length; k++) {
    const chunk = chunks[k] as string;
    const r = carryAcross(secrets, carry, [record(chunk)]);
    if ('refused' in r || secrets.findInText(chunk) !== undefined) return k;
    carry = r.carry;
  }
  return -1;
}

const chunked = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

/** Offsets of the secret in a stream of `size`-character chunks worth trying: every one that makes it straddle a boundary, and one inside. */
function offsets(size: number): number[] {
  const L = SECRET.length;
  if (size <= L + 1) return Array.from({ length: size }, (_, o) => o);
  return [0, ...Array.from({ length: L - 1 }, (_, i) => size - L + 1 + i)];
}

describe('a registered secret streamed in chunks of 1 to 4,096 characters, at every offset', () => {
  it.each([
    ['toolStream text', (c: string) => stream({ text: c })],
    ['assistant deltas', (c: string) => delta(c)],
  ] as const)('%s: found by the chunk that completes it, not before', (_label, record) => {
    let cases = 0;
    for (let size = 1; size <= 4096; size++) {
      for (const o of offsets(size)) {
        const text = `${'.'.repeat(o)}${SECRET} done`;
        const completes = Math.floor((o + SECRET.length - 1) / size);
        const found = firstFound(chunked(text, size), record);
        if (found !== completes) expect.fail(`chunk size ${size}, offset ${o}: found at chunk ${found}, completes at ${completes}`);
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(100_000);
  }, 300_000);

  it('dataBase64 chunks of a non-ASCII secret cut at every byte, multi-byte characters included', () => {
    const secret = 'clé-Zq8kP3vWm7xRt2n-été-ß';
    const set = new SecretSet();
    set.add(secret);
    const bytes = Buffer.from(`out: ${secret}\n`, 'utf8');
    for (const size of [1, 2, 3, 5, 7, 13, 31, 64, 1000, 4096]) {
      for (let o = 0; o < Math.min(size, 40); o++) {
        const data = Buffer.concat([Buffer.alloc(o, 0x2e), bytes]);
        let carry: CarryOver | undefined;
        let found = -1;
        const n = Math.ceil(data.length / size);
        for (let k = 0; k < n && found < 0; k++) {
          const piece = data.subarray(k * size, (k + 1) * size);
          const r = carryAcross(set, carry, [stream({ dataBase64: piece.toString('base64') })]);
          if ('refused' in r || set.findInBytes(piece) !== undefined) found = k;
          else carry = r.carry;
        }
        const end = o + 5 + Buffer.byteLength(secret);
        expect(found, `size ${size}, offset ${o}`).toBe(Math.floor((end - 1) / size));
      }
    }
  });
});

describe('what the carry-over keeps', () => {
  it('lossless forms split across deltas are found too (hex with separators, grouped digits)', () => {
    const set = new SecretSet();
    set.add(SECRET);
    set.add('4111111111111111');
    for (const form of [Buffer.from(SECRET).toString('hex').replace(/..(?!$)/g, '$&:'), '4111 1111 1111 1111']) {
      const text = `value: ${form} end`;
      const at = firstFoundIn(set, chunked(text, 4));
      expect(at, form).toBeGreaterThanOrEqual(0);
    }
  });

  it('a text part of another kind, another stream, another tool run or a toolFinish ends the text before it', () => {
    const half = (s: string) => [s.slice(0, 10), s.slice(10)];
    const [a, b] = half(SECRET) as [string, string];
    const run = (first: unknown, between: unknown[], last: unknown) => {
      const r1 = carryAcross(secrets, undefined, [first, ...between]);
      if ('refused' in r1) throw new Error('refused early');
      return 'refused' in carryAcross(secrets, r1.carry, [last]);
    };
    expect(run(stream({ text: a }), [], stream({ text: b }))).toBe(true);
    expect(run(stream({ text: a }), [{ kind: 'toolFinish', toolSeq: 1, requestId: 'r', success: true }], stream({ text: b }))).toBe(false);
    expect(run(stream({ text: a }), [], { ...stream({ text: b }), stream: 'stderr' })).toBe(false);
    expect(run(stream({ text: a }), [], { ...stream({ text: b }), toolSeq: 2 })).toBe(false);
    expect(run(delta(a), [], delta(b))).toBe(true);
    expect(run(delta(a), [{ kind: 'message', message: { role: 'user', content: [{ type: 'image', url: 'u' }] } }], delta(b))).toBe(false);
    // an interruption's assistantText continues the deltas it interrupted
    expect(run(delta(a), [], { kind: 'interruption', reason: 'r', phase: 'providerStream', assistantText: b })).toBe(true);
  });

  it('the tail stays short whatever was streamed, and nothing is kept without registered secrets', () => {
    let carry: CarryOver | undefined;
    const prose = 'The build failed because the linker could not find libssl. '.repeat(500);
    for (let i = 0; i < prose.length; i += 1000) {
      const r = carryAcross(secrets, carry, [delta(prose.slice(i, i + 1000)), stream({ text: prose.slice(i, i + 1000) })]);
      if ('refused' in r) throw new Error('an ordinary stream was refused');
      carry = r.carry;
      expect(carry.message.length).toBeLessThan(1000);
      expect((carry.streams.get('1:stdout') as Buffer).length).toBeLessThan(1000);
    }
    const none = carryAcross(new SecretSet(), undefined, [delta('anything')]);
    expect('carry' in none && none.carry.message).toBe('');
  });

  it('at most 64 tool streams are followed: the least recently written is forgotten', () => {
    let carry: CarryOver | undefined;
    for (let t = 1; t <= 70; t++) {
      const r = carryAcross(secrets, carry, [{ ...stream({ text: SECRET.slice(0, 10) }), toolSeq: t }]);
      if ('refused' in r) throw new Error('refused early');
      carry = r.carry;
    }
    expect(carry?.streams.size).toBe(64);
    expect(carry?.streams.has('1:stdout')).toBe(false);
    expect('refused' in carryAcross(secrets, carry, [{ ...stream({ text: SECRET.slice(10) }), toolSeq: 70 }])).toBe(true);
  });
});

function firstFoundIn(set: SecretSet, chunks: string[]): number {
  let carry: CarryOver | undefined;
  for (let k = 0; k < chunks.length; k++) {
    const r = carryAcross(set, carry, [delta(chunks[k] as string)]);
    if ('refused' in r || set.findInText(chunks[k] as string) !== undefined) return k;
    carry = r.carry;
  }
  return -1;
}
