import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { explain, makeStore, runCli } from './helpers.js';

/** stats: the store's size per session (journal + archived generations) and in total. */
describe('session-sidecar stats: size per session and in total', () => {
  it('--json perSession has every session, its bytes = journal + archives; bytes is their sum', async () => {
    const f = await makeStore();
    const size = (p: string) => fs.statSync(path.join(f.root, p)).size;
    const expected = new Map([
      [f.chat, size(`sessions/${f.chat}/journal.jsonl`)],
      [f.fork, size(`sessions/${f.fork}/journal.jsonl`)],
      [f.compacted, size(`sessions/${f.compacted}/journal.jsonl`) + size(`history/${f.compacted}/0.jsonl`)],
    ]);
    const r = await runCli(['stats', '--json', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const stats = JSON.parse(r.stdout) as { bytes: number; perSession: Array<{ sessionId: string; bytes: number; journalBytes: number; archivedBytes: number }> };
    expect(new Map(stats.perSession.map((s) => [s.sessionId, s.bytes]))).toEqual(expected);
    expect(stats.perSession.map((s) => s.bytes)).toEqual([...expected.values()].sort((a, b) => b - a));
    expect(stats.bytes).toBe([...expected.values()].reduce((a, b) => a + b, 0));
  });
});
