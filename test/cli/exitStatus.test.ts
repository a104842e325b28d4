import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { EXIT_STATUS } from '../../src/cli/exitStatus.js';
import { explain, runCli } from './helpers.js';

/** Exit codes are documented per command (issue 31, "exit codes documented per command"). */
describe('exit status', () => {
  it('every command has its exit codes, and its --help (on the built binary) ends with them', async () => {
    for (const c of COMMANDS) {
      const rows = EXIT_STATUS[c.name];
      expect(rows, `${c.name} has no exit status rows`).toBeDefined();
      expect(rows?.some((r) => r.startsWith('0 '))).toBe(true);
      expect(rows?.some((r) => r.startsWith('2 '))).toBe(true);
      const help = await runCli([c.name, '--help']);
      expect(help.code, explain(help)).toBe(0);
      expect(help.stdout).toMatch(/\nExit status:\n {2}0 {4}/);
      for (const r of rows ?? []) expect(help.stdout).toContain(`  ${r}\n`);
    }
  }, 120_000);

  it('the codes said are the codes given: usage 2, a missing session 1, --jq on bad data 5', async () => {
    const usage = await runCli(['list', '--sort', 'nope']);
    expect(usage.code, explain(usage)).toBe(2);
    expect(EXIT_STATUS.list?.some((r) => r.startsWith('2 '))).toBe(true);
    const missing = await runCli(['show', '01M8K9XXW8VRQ6T7VHWR6ZHMF4', '--store', '/nonexistent/store']);
    expect(missing.code, explain(missing)).toBe(1);
  }, 60_000);
});
