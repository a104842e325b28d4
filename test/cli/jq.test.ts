import { describe, expect, it } from 'vitest';
import { cwdStore } from './findKit.js';
import { explain, runCli } from './helpers.js';

/**
 * `--jq EXPR` on the listing commands (issue 31, finding 7), over the built binary through a
 * pipe: jq 1.8 (jq-wasm) filters exactly what `--json [FIELDS]` prints.
 */
describe('--jq', () => {
  it('list: filters the --json output; strings print raw; numbers as jq prints them; with FIELDS the filter sees only those', async () => {
    const { root, ids } = await cwdStore();
    const titles = await runCli(['list', '--store', root, '--jq', '.[].title']);
    expect(titles.code, explain(titles)).toBe(0);
    expect(titles.stdout).toBe('Old here\nElsewhere\nNew here\n');
    const count = await runCli(['list', '--store', root, '--jq', 'map(select(.title | test(" here$"))) | length']);
    expect(count.stdout).toBe('2\n');
    const picked = await runCli(['list', '--store', root, '--json', 'sessionId', '--jq', '.[0] | keys']);
    expect(JSON.parse(picked.stdout)).toEqual(['sessionId']);
    const first = await runCli(['list', '--store', root, '--jq', '.[0].sessionId']);
    expect(first.stdout).toBe(`${ids.old}\n`);
    const nothing = await runCli(['list', '--store', root, '--jq', 'empty']);
    expect([nothing.code, nothing.stdout]).toEqual([0, '']);
  }, 60_000);

  it('a filter jq cannot compile is a usage error (exit 2, jq\'s message); one failing on the data exits 5; nothing on stdout', async () => {
    const { root } = await cwdStore();
    const bad = await runCli(['list', '--store', root, '--jq', '.[']);
    expect(bad.code, explain(bad)).toBe(2);
    expect(bad.stderr).toMatch(/--jq: syntax error/);
    expect(bad.stdout).toBe('');
    const failing = await runCli(['list', '--store', root, '--jq', '.[0].title | tonumber']);
    expect(failing.code, explain(failing)).toBe(5);
    expect(failing.stderr).toMatch(/--jq: .*(number|parse|Cannot)/i);
    const empty = await runCli(['list', '--store', root, '--jq', ' ']);
    expect(empty.code).toBe(2);
  }, 60_000);

  it('search and trash list take --jq; other trash actions refuse it', async () => {
    const { root } = await cwdStore();
    const hits = await runCli(['search', 'proj', '--store', root, '--jq', '[.[].seq] | add']);
    expect(hits.code, explain(hits)).toBe(0);
    expect(hits.stdout).toBe('2\n');
    const trash = await runCli(['trash', 'list', '--store', root, '--jq', 'length']);
    expect([trash.code, trash.stdout]).toEqual([0, '0\n']);
    const refused = await runCli(['trash', 'empty', '--store', root, '--jq', 'length']);
    expect(refused.code, explain(refused)).toBe(2);
  }, 60_000);
});
