import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { rejection, startSidecar } from './harness.js';

const MIB = 1 << 20;
const PAYLOAD_TOO_LARGE = -31010;

/** §15.3: the limit is on the value the client sent, serialized: exactly 1 MiB of UTF-8 is kept, one byte more refused. */
describe('state/set size limit', () => {
  it('a value of exactly 1,048,576 serialized bytes is kept and read back; 1,048,577 is PayloadTooLarge', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.request('session/open', { sessionId, mode: 'write' });
    const exact = 'é'.repeat(1000) + 'a'.repeat(MIB - 2 - 2000); // JSON string: quotes + 2-byte é
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(MIB);
    await c.request('state/set', { sessionId, key: 'big', value: exact });
    expect(await c.request('state/get', { sessionId, key: 'big' })).toMatchObject({ value: exact });
    const over = await rejection(c.request('state/set', { sessionId, key: 'over', value: `${exact}a` }));
    expect([over.code, over.data?.kind, over.data?.maxBytes]).toEqual([PAYLOAD_TOO_LARGE, 'PayloadTooLarge', MIB]);
    await c.shutdown();
  });
});
