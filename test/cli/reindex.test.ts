import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 31, finding 2: `session-sidecar reindex` (the built binary) rebuilds every index entry
 * from its journal — a store whose index/ was deleted verifies with no "no index entry" warning
 * afterwards and lists the same sessions — skips (and names) a session a running sidecar holds,
 * and names a damaged session with exit 1 while rebuilding the others.
 */
async function storeOf(n: number): Promise<{ root: string; ids: string[] }> {
  const root = path.join(tempDir('sidecar-reindex-'), 'store');
  const c = await startSidecar({ store: root });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { sessionId } = await c.create({ title: `s${i}` });
    await c.request('session/append', { sessionId, records: [msg('user', `hello ${i}`), msg('assistant', `hi ${i}`)] });
    ids.push(sessionId);
  }
  await c.shutdown();
  return { root, ids };
}

describe('reindex (the built binary)', () => {
  it('a deleted index is rebuilt: verify warns of no missing entry, list is unchanged', async () => {
    const { root, ids } = await storeOf(5);
    const before = await runCli(['list', '--store', root, '--json']);
    fs.rmSync(path.join(root, 'index'), { recursive: true });
    fs.mkdirSync(path.join(root, 'index'), { mode: 0o700 });
    const missing = await runCli(['verify', '--store', root, '--json']);
    expect(missing.stdout).toMatch(/no index entry/); // the probe: the warning exists without entries

    const r = await runCli(['reindex', '--store', root, '--json']);
    expect(r.code, explain(r)).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ reindexed: 5, skipped: [], failed: [] });
    expect(r.stderr).toMatch(/5 of 5 index entries written/);
    expect(fs.readdirSync(path.join(root, 'index')).sort()).toEqual(ids.map((id) => `${id}.json`).sort());
    for (const f of fs.readdirSync(path.join(root, 'index'))) expect(fs.statSync(path.join(root, 'index', f)).mode & 0o777).toBe(0o600);
    const after = await runCli(['verify', '--store', root, '--json', '--strict']);
    expect(after.code, explain(after)).toBe(0);
    expect(after.stdout).not.toMatch(/no index entry|stale/);
    expect((await runCli(['list', '--store', root, '--json'])).stdout).toBe(before.stdout);
  }, 60_000);

  it('a session open in a sidecar is skipped and named; a damaged one is named with exit 1, the rest rebuilt', async () => {
    const { root, ids } = await storeOf(3);
    fs.rmSync(path.join(root, 'index'), { recursive: true });
    fs.mkdirSync(path.join(root, 'index'), { mode: 0o700 });
    // damage the middle of the second session's journal (a flipped byte inside a record)
    const damaged = ids[1] as string;
    const journal = path.join(root, 'sessions', damaged, 'journal.jsonl');
    const text = fs.readFileSync(journal, 'utf8');
    const at = text.indexOf('hello 1');
    fs.writeFileSync(journal, `${text.slice(0, at)}jello 1${text.slice(at + 7)}`);
    const c = await startSidecar({ store: root });
    try {
      await c.request('session/open', { sessionId: ids[0] });
      const r = await runCli(['reindex', '--store', root, '--json']);
      expect(r.code, explain(r)).toBe(1);
      const res = JSON.parse(r.stdout) as { reindexed: number; skipped: Array<{ sessionId: string; reason: string }>; failed: Array<{ sessionId: string }> };
      expect(res.reindexed).toBe(1);
      expect(res.skipped).toEqual([{ sessionId: ids[0], reason: 'open' }]);
      expect(res.failed.map((f) => f.sessionId)).toEqual([damaged]);
      expect(r.stderr).toContain(`${ids[0]} skipped: open in a running sidecar`);
      expect(r.stderr).toContain(`show --salvage ${damaged}`);
      expect(fs.existsSync(path.join(root, 'index', `${ids[2]}.json`))).toBe(true);
    } finally {
      await c.shutdown();
    }
  }, 60_000);
});
