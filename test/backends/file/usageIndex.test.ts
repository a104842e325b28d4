import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../../src/backends/file/fileStore.js';
import { tempDir } from '../../helpers.js';

/** An index entry written before usage totals existed (no `usage`) does not vouch for them: the journal is scanned. */
describe('file store: index entries without usage totals', () => {
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
});
