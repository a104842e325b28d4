/**
 * The published client (session-sidecar/client) hands its caller ordinary JavaScript values: the
 * server keeps numbers exactly as sent (§5), but a client reading its answers with the shared
 * frame decoder must not see the server's internal exact-number objects (whose JSON text is a
 * private marker) — it reads them as JSON.parse would.
 */
import { expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { tempDir } from '../helpers.js';

it('a record holding numbers JSON.parse cannot keep reads back as plain numbers, and stringifies cleanly', async () => {
  const c = await SidecarClient.start({ store: tempDir() });
  try {
    const { sessionId } = await c.create({ title: 'values' });
    await c.append({ sessionId, records: [{ kind: 'event', type: 'ids', payload: { id: 12345678901234567, price: 19.9 } }] });
    const page = await c.request<{ records: Array<{ payload: { id: unknown; price: unknown } }> }>('session/read', { sessionId });
    const payload = page.records[0]!.payload;
    expect(typeof payload.id).toBe('number');
    expect(payload.id).toBe(12345678901234568); // what JSON.parse makes of 12345678901234567
    expect(payload.price).toBe(19.9);
    expect(JSON.stringify(page)).not.toMatch(/\\u0000|\u0000/);
  } finally {
    c.child.kill();
  }
});
