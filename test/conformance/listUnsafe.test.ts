import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { rejection, startSidecar } from './harness.js';

type Rec = Record<string, unknown>;

/** Finding 5: list agrees with open — a journal opened to others (chmod 644) is not listed from its index entry. */
describe('session/list and an unsafe journal', () => {
  it('after chmod 644 of a journal, open answers UnsafeStore and list leaves the session out', async () => {
    const store = tempDir('sidecar-store-');
    const a = await startSidecar({ store });
    const { sessionId } = await a.create({ title: 'x' });
    await a.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }] });
    await a.shutdown(); // the index entry is written
    chmodSync(join(store, 'sessions', sessionId, 'journal.jsonl'), 0o644);
    const b = await startSidecar({ store });
    expect((await rejection(b.request('session/open', { sessionId, mode: 'read' }))).data?.kind).toBe('UnsafeStore');
    const list = await b.request<{ sessions: Rec[] }>('session/list', {});
    expect(list.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
    await b.shutdown();
  });
});
