/**
 * A session row written before usage totals existed (migration 2 leaves usage_text NULL) gets
 * its totals reduced from its records, for reads and for the writer that then stores them.
 */
import { describe, expect, it } from 'vitest';
import { freshSchema, pgAvailability } from '../pg/pgServer.js';
import { sharedPgStores } from './pgStoreKit.js';

const pgSkip = pgAvailability();
const { store, raw: rawConnections } = sharedPgStores();

describe.skipIf(pgSkip)('PostgreSQL store: rows without usage totals', () => {
  it('are reduced from the records, read and written', async () => {
    const schema = freshSchema('u');
    const a = await store(schema);
    const { sessionId } = await a.create({ llm: { model: 'm' } });
    await a.append(sessionId, [
      { kind: 'api', direction: 'request', payload: {} },
      { kind: 'api', direction: 'response', payload: { usage: { prompt_tokens: 7, completion_tokens: 3 } } },
    ]);
    const want = await a.usage(sessionId);
    expect(want.records).toBe(1);
    await a.closeAll();
    const raw = await rawConnections(schema);
    await raw.query('UPDATE sessions SET usage_text = NULL WHERE session_id = $1', [sessionId]);
    const b = await store(schema);
    expect(await b.usage(sessionId)).toEqual(want);
    await b.open(sessionId, 'write');
    await b.append(sessionId, [{ kind: 'message', message: { role: 'assistant', content: 'x', usage: { prompt_tokens: 1, completion_tokens: 1 } } }]);
    const after = await b.usage(sessionId);
    expect(after.byModel.m).toMatchObject({ input: 8, output: 4, requests: 2 });
    const rows = await raw.query<{ usage_text: string | null }>('SELECT usage_text FROM sessions WHERE session_id = $1', [sessionId]);
    expect(JSON.parse(rows[0]!.usage_text as string)).toMatchObject({ records: 2 });
  });
});
