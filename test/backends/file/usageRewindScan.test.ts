import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';

/** What the journal scan reduces (no index entry to trust): usage totals, and the state a rewind record restores. */
describe('file store: the scan, usage totals and rewinds', () => {
  it('are not trusted; the scan counts the usage, and a writer rewrites the entry with it', async () => {
    const root = path.join(tempDir('sidecar-usage-'), 'store');
    const a = new FileSessionStore(root, { leases: false });
    const { sessionId } = await a.create({ llm: { model: 'm' } });
    await a.append(sessionId, [
      { kind: 'api', direction: 'request', payload: {} },
      { kind: 'api', direction: 'response', payload: { usage: { input_tokens: 4, output_tokens: 2 } } },
    ]);
    const want = await a.usage(sessionId);
    expect(want.records).toBe(1);
    await a.closeAll();
    const entryPath = path.join(root, 'index', `${sessionId}.json`);
    const entry = JSON.parse(fs.readFileSync(entryPath, 'utf8')) as Record<string, unknown>;
    expect(entry.usage).toMatchObject({ records: 1 });
    delete entry.usage;
    fs.writeFileSync(entryPath, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    const b = new FileSessionStore(root, { leases: false });
    expect(await b.usage(sessionId)).toEqual(want);
    await b.open(sessionId, 'write');
    await b.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'x' } }]);
    await b.closeAll();
    expect((JSON.parse(fs.readFileSync(entryPath, 'utf8')) as Record<string, unknown>).usage).toMatchObject({ records: 1 });
  });

  it('without an index entry the scan takes the turn and open requests from a rewind record', async () => {
    const root = path.join(tempDir('sidecar-rewind-'), 'store');
    const a = new FileSessionStore(root, { leases: false });
    const { sessionId } = await a.create({});
    const { turnId } = await a.startTurn(sessionId, 'user'); // 1
    await a.append(sessionId, [{ kind: 'api', direction: 'request', payload: {} }]); // 2: apiSeq 1 open
    await a.append(sessionId, [{ kind: 'api', direction: 'response', payload: {} }]); // 3
    await a.transitionTurn(sessionId, turnId, { event: 'fail', error: 'HTTP 500' }); // 4: retryable
    await a.rewind(sessionId, 2); // 5: active again, apiSeq 1 open
    const turn = await a.getTurn(sessionId);
    await a.closeAll();
    fs.rmSync(path.join(root, 'index', `${sessionId}.json`));
    const b = new FileSessionStore(root, { leases: false });
    const opened = await b.open(sessionId, 'write');
    expect(opened.turn).toEqual(turn);
    expect(turn).toMatchObject({ turnId, status: 'active' });
    await b.append(sessionId, [{ kind: 'api', direction: 'response', payload: {} }]);
    await b.transitionTurn(sessionId, turnId, { event: 'finish', outcome: 'completed' });
    const last = (await b.read(sessionId, { afterSeq: 5 })).records;
    expect(last.map((r) => [r.kind, (r as { apiSeq?: number }).apiSeq])).toEqual([['api', 1], ['turn', undefined]]);
    await b.closeAll();
  });
});
