import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli } from './helpers.js';

/** show and stats print the usage totals (and show a rewind), over the BUILT binary. */
async function store() {
  const root = path.join(tempDir('sidecar-cli-'), 'store');
  const s = new FileSessionStore(root, { leases: false });
  const { sessionId: a } = await s.create({ title: 'Usage A', llm: { model: 'gpt-4o' } });
  await s.append(a, [
    msg('user', 'q'),
    { kind: 'api', direction: 'request', payload: {} },
    { kind: 'api', direction: 'response', payload: { usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 } } } },
    msg('assistant', 'a'),
  ]);
  await s.rewind(a, 1);
  const { sessionId: b } = await s.create({ title: 'Usage B' });
  await s.append(b, [
    { kind: 'api', direction: 'request', payload: {} },
    { kind: 'api', direction: 'response', payload: { model: 'claude-sonnet-4', usage: { input_tokens: 12, output_tokens: 40, cache_read_input_tokens: 2000 } } },
  ]);
  const { sessionId: c } = await s.create({ title: 'No usage' });
  await s.closeAll();
  return { root, a, b, c };
}

describe('session-sidecar show and stats: usage totals', () => {
  it('show prints the totals in the header (none when nothing was counted) and a rewind record', async () => {
    const f = await store();
    const r = await runCli(['show', f.a, '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('usage 1280 tokens (input 1200, 1024 cache read; output 80) in 1 request · gpt-4o 1280\n');
    expect(r.stdout).toMatch(/\n#5 [^\n]+ {2}rewind {2}back to #1: records #2–#4 rewound\n/);
    const none = await runCli(['show', f.c, '--store', f.root]);
    expect(none.stdout).not.toContain('\nusage ');
  });

  it('stats sums them over the sessions, by model in --json', async () => {
    const f = await store();
    const r = await runCli(['stats', '--json', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const stats = JSON.parse(r.stdout) as { usage: unknown };
    expect(stats.usage).toEqual({
      records: 2,
      total: { input: 3212, output: 120, cacheRead: 3024, cacheWrite: 0, total: 3332, requests: 2 },
      byModel: {
        'claude-sonnet-4': { input: 2012, output: 40, cacheRead: 2000, cacheWrite: 0, total: 2052, requests: 1 },
        'gpt-4o': { input: 1200, output: 80, cacheRead: 1024, cacheWrite: 0, total: 1280, requests: 1 },
      },
    });
    const text = await runCli(['stats', '--store', f.root]);
    expect(text.stdout).toContain('tokens    3332 tokens (input 3212, 3024 cache read; output 120) in 2 requests · claude-sonnet-4 2052, gpt-4o 1280\n');
  });
});
