/**
 * Issue 29 finding 10: version negotiation settles in one round trip (§4.1). A client offers the
 * versions it speaks in `protocolVersions` and gets the highest the server also speaks; offering
 * none it speaks is UnsupportedProtocolVersion with `data.supported` (what to retry with) and
 * `data.offered`. A single `protocolVersion` behaves exactly as in version 1 before the list existed.
 */
import { describe, expect, it } from 'vitest';
import { FRAMINGS, rejection, spawnSidecar } from './harness.js';

describe.each(FRAMINGS)('initialize version settling (%s)', (framing) => {
  it('offers several, gets the highest one the server speaks, and the connection runs', async () => {
    const c = spawnSidecar({ framing });
    const result = await c.request<{ protocolVersion: number }>('initialize', { protocolVersions: [3, 1, 2] });
    expect(result.protocolVersion).toBe(1);
    c.notify('initialized', {});
    await c.create(); // the connection is initialized
    await c.shutdown();
  });

  it('protocolVersion and protocolVersions together: their union is the offer', async () => {
    const c = spawnSidecar({ framing });
    const result = await c.request<{ protocolVersion: number }>('initialize', { protocolVersion: 5, protocolVersions: [1, 4] });
    expect(result.protocolVersion).toBe(1);
    await c.shutdown();
  });

  it('offers none the server speaks: UnsupportedProtocolVersion with the supported versions, and initialize may be sent again', async () => {
    const c = spawnSidecar({ framing });
    const err = await rejection(c.request('initialize', { protocolVersions: [7, 9] }));
    expect(err.code).toBe(-31011);
    expect(err.data).toEqual({ kind: 'UnsupportedProtocolVersion', supported: [1], offered: [7, 9] });
    // settle with what the refusal named
    const result = await c.request<{ protocolVersion: number }>('initialize', { protocolVersions: err.data!.supported });
    expect(result.protocolVersion).toBe(1);
    await c.shutdown();
  });

  it('a single unsupported protocolVersion is refused exactly as before (never answered with another version)', async () => {
    const c = spawnSidecar({ framing });
    const err = await rejection(c.request('initialize', { protocolVersion: 2 }));
    expect(err.code).toBe(-31011);
    expect(err.data).toEqual({ kind: 'UnsupportedProtocolVersion', supported: [1], requested: 2 });
    expect((await c.request<{ protocolVersion: number }>('initialize', { protocolVersion: 1 })).protocolVersion).toBe(1);
    await c.shutdown();
  });

  it('neither protocolVersion nor protocolVersions (or an empty list) is InvalidParams', async () => {
    const c = spawnSidecar({ framing });
    const none = await rejection(c.request('initialize', { clientInfo: { name: 'x' } }));
    expect(none.code).toBe(-32602);
    expect((none.data as { issues: Array<{ path: string }> }).issues[0]?.path).toBe('protocolVersion');
    const empty = await rejection(c.request('initialize', { protocolVersions: [] }));
    expect(empty.code).toBe(-32602);
    await c.kill(); // never initialized: shutdown would be refused
  });
});
