import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { tempDir } from '../helpers.js';
import { explain, fullSnapshot, msg, runCli } from './helpers.js';
import { dumpSchema, PASSWORD, pgStore, withPassword } from './pgCliKit.js';
import type { SessionStore } from '../../src/domain/types.js';

/** list --cwd/--tag/--grep, search and show after session/update, over the BUILT binary; read-only on both stores. */

async function seed(store: SessionStore, cwd: string): Promise<{ a: string; b: string; c: string }> {
  const { sessionId: a } = await store.create({ title: 'Fix the build', cwd, tags: ['ci'] });
  await store.append(a, [msg('user', 'The build is flaky since Monday'), msg('assistant', 'Looking at the FLAKY test now.')]);
  await store.update(a, { title: 'Fix the flaky build', tags: ['ci', 'team:infra'], metadata: { ticket: 'OPS-7' } });
  const { sessionId: b } = await store.create({ title: 'Notes', cwd: '/elsewhere', tags: ['ci'] });
  await store.append(b, [msg('user', 'nothing to see')]);
  const { sessionId: c } = await store.create({ cwd });
  await store.append(c, [msg('user', 'another flaky thing')]);
  await store.closeAll();
  return { a, b, c };
}

const idsOf = (stdout: string) => (JSON.parse(stdout) as Array<{ sessionId: string }>).map((s) => s.sessionId);

describe('list filters, search and show after an update (directory store)', () => {
  it('list --cwd (relative to the current directory) --tag (repeatable) --grep; the TAGS column', async () => {
    const work = tempDir('sidecar-cli-work-');
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { a, b, c } = await seed(new FileSessionStore(root, { leases: false }), work);
    const before = fullSnapshot(root);
    const run = async (args: string[]) => {
      const r = await runCli(['list', '--json', '--store', root, ...args], { cwd: work });
      expect(r.code, explain(r)).toBe(0);
      return idsOf(r.stdout);
    };
    expect(new Set(await run(['--cwd', '.']))).toEqual(new Set([a, c]));
    expect(new Set(await run(['--tag', 'ci']))).toEqual(new Set([a, b]));
    expect(await run(['--tag', 'ci', '--tag', 'team:infra'])).toEqual([a]);
    expect(await run(['--grep', 'FLAKY BUILD'])).toEqual([a]); // the title after the update
    expect(await run(['--cwd', work, '--grep', 'flaky'])).toEqual([c, a]); // c's only message, a's title
    const table = await runCli(['list', '--store', root]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TITLE\s+TAGS\s+UPDATED\s+RECORDS\s+SIZE\s+PARENT$/);
    expect(table.stdout).toContain('ci,team:infra');
    const bad = await runCli(['list', '--store', root, '--tag', 'no spaces']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--tag');
    expect(fullSnapshot(root)).toEqual(before); // list never writes the store
  });

  it('search TEXT [--session ID] [--limit N] [--json]; show displays the updated header; nothing written', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { a, c } = await seed(new FileSessionStore(root, { leases: false }), '/w');
    const before = fullSnapshot(root);
    const j = await runCli(['search', 'flaky', '--json', '--store', root]);
    expect(j.code, explain(j)).toBe(0);
    const hits = JSON.parse(j.stdout) as Array<{ sessionId: string; seq: number; snippet: string }>;
    expect(hits.map((h) => [h.sessionId, h.seq])).toEqual([[a, 1], [a, 2], [c, 1]]);
    expect(hits[1]!.snippet).toBe('Looking at the FLAKY test now.');
    const limited = await runCli(['search', 'flaky', '--json', '--limit', '2', '--store', root]);
    expect((JSON.parse(limited.stdout) as unknown[]).length).toBe(2);
    const one = await runCli(['search', 'flaky', '--json', '--session', c.slice(0, 24), '--store', root]);
    expect(one.code, explain(one)).toBe(0);
    expect((JSON.parse(one.stdout) as Array<{ sessionId: string }>).map((h) => h.sessionId)).toEqual([c]);
    const t = await runCli(['search', 'flaky', '--store', root]);
    expect(t.stdout.split('\n')[0]).toMatch(/^SESSION\s+SEQ\s+SNIPPET$/);
    expect(t.stdout).toContain('The build is flaky since Monday');
    expect((await runCli(['search', 'zebra', '--store', root])).stdout).toBe('no message holds "zebra"\n');
    expect((await runCli(['search', '--store', root])).code).toBe(2);
    expect((await runCli(['search', '--help'])).stdout).toContain('Usage: session-sidecar search TEXT');
    const show = await runCli(['show', a, '--store', root]);
    expect(show.code, explain(show)).toBe(0);
    expect(show.stdout).toContain('Fix the flaky build');
    expect(show.stdout).toContain('tags ci, team:infra');
    expect(show.stdout).toContain('metadata {"ticket":"OPS-7"}');
    const verify = await runCli(['verify', '--store', root]); // the index's title is the updated one: no drift
    expect(verify.code, explain(verify)).toBe(0);
    expect(fullSnapshot(root)).toEqual(before); // search, show and verify never write the store
  });
});

describe.skipIf(pgSkip)('list filters and search on a PostgreSQL store', () => {
  it('filters, search and show work on a URL; not one row changes; no password printed', async () => {
    const url = await pgUrl();
    const schema = freshSchema('clim');
    const { a, c } = await seed(await pgStore(url, schema), '/w');
    const before = await dumpSchema(url, schema);
    const store = ['--store', withPassword(url), '--pg-schema', schema];
    const l = await runCli(['list', '--json', '--tag', 'team:infra', ...store]);
    expect(l.code, explain(l)).toBe(0);
    expect(idsOf(l.stdout)).toEqual([a]);
    const cwd = await runCli(['list', '--json', '--cwd', '/w', '--grep', 'another', ...store]);
    expect(idsOf(cwd.stdout)).toEqual([c]);
    const s = await runCli(['search', 'FLAKY', '--json', ...store]);
    expect(s.code, explain(s)).toBe(0);
    expect((JSON.parse(s.stdout) as Array<{ sessionId: string; seq: number }>).map((h) => [h.sessionId, h.seq])).toEqual([[a, 1], [a, 2], [c, 1]]);
    const show = await runCli(['show', a, ...store]);
    expect(show.stdout).toContain('Fix the flaky build');
    for (const r of [l, cwd, s, show]) expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(await dumpSchema(url, schema)).toBe(before);
  });
});
