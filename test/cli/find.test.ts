import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { cwdStore } from './findKit.js';
import { tempDir } from '../helpers.js';
import { explain, runCli } from './helpers.js';

/**
 * Finding a session without its id (issue 31, findings 4 and 7): `--last` and `--cwd DIR` on
 * show, tail and export, over the built binary.
 */
const firstLineId = (stdout: string) => /[0-9A-HJKMNP-TV-Z]{26}/.exec(stdout.split('\n')[0] ?? '')?.[0];

describe('--last and --cwd instead of a session id', () => {
  it('show/tail/export --last: the most recently updated session (not the last created)', async () => {
    const { root, ids } = await cwdStore();
    const show = await runCli(['show', '--last', '--store', root]);
    expect(show.code, explain(show)).toBe(0);
    expect(firstLineId(show.stdout)).toBe(ids.old);
    expect(show.stdout).toContain('updated last');
    const tail = await runCli(['tail', '--last', '-n', '1', '--raw', '--store', root]);
    expect(tail.code, explain(tail)).toBe(0);
    expect(JSON.parse(tail.stdout.trim())).toMatchObject({ message: { content: 'updated last' } });
    const exp = await runCli(['export', '--last', '--format', 'jsonl', '--store', root]);
    expect(exp.code, explain(exp)).toBe(0);
    expect(exp.stdout).toContain('first in proj');
    expect(exp.stdout).toContain('updated last');
  });

  it('--cwd DIR (relative: resolved; `.` works) alone or with --last: the most recent session of that cwd', async () => {
    const { root, here, elsewhere, ids } = await cwdStore();
    const dot = await runCli(['show', '--cwd', '.', '--store', root], { cwd: elsewhere });
    expect(dot.code, explain(dot)).toBe(0);
    expect(firstLineId(dot.stdout)).toBe(ids.other);
    const rel = await runCli(['show', '--last', '--cwd', '../proj', '--store', root], { cwd: elsewhere });
    expect(rel.code, explain(rel)).toBe(0);
    expect(firstLineId(rel.stdout)).toBe(ids.old);
    const tail = await runCli(['tail', '--cwd', elsewhere, '-n', '1', '--raw', '--store', root]);
    expect(JSON.parse(tail.stdout.trim())).toMatchObject({ message: { content: 'in other' } });
    const exp = await runCli(['export', '--cwd', here, '--format', 'markdown', '--store', root]);
    expect(exp.code, explain(exp)).toBe(0);
    expect(exp.stdout).toContain('# Old here');
  });

  it('a session id with --last or --cwd is a usage error (exit 2); nothing matching is exit 1; neither is a usage error', async () => {
    const { root, ids } = await cwdStore();
    for (const cmd of [['show'], ['tail'], ['export', '--format', 'jsonl']]) {
      const both = await runCli([...cmd, ids.other, '--last', '--store', root]);
      expect(both.code, explain(both)).toBe(2);
      expect(both.stderr).toContain('not both');
      expect(both.stdout).toBe('');
      const bothCwd = await runCli([...cmd, ids.other, '--cwd', '.', '--store', root]);
      expect(bothCwd.code, explain(bothCwd)).toBe(2);
      const none = await runCli([...cmd, '--cwd', '/nowhere/at/all', '--store', root]);
      expect(none.code, explain(none)).toBe(1);
      expect(none.stderr).toContain('no session was created in /nowhere/at/all');
      expect(none.stdout).toBe('');
      const neither = await runCli([...cmd, '--store', root]);
      expect(neither.code, explain(neither)).toBe(2);
      expect(neither.stderr).toContain('missing session id');
    }
    const empty = path.join(tempDir(), 'empty');
    await new FileSessionStore(empty, { leases: false }).closeAll();
    fs.mkdirSync(path.join(empty, 'sessions'), { recursive: true });
    const noneAtAll = await runCli(['show', '--last', '--store', empty]);
    expect(noneAtAll.code, explain(noneAtAll)).toBe(1);
    expect(noneAtAll.stderr).toContain('the store holds no session');
  });
});

describe('--json [FIELDS] on list, search and trash list', () => {
  const parsed = (r: { stdout: string }) => JSON.parse(r.stdout) as Array<Record<string, unknown>>;

  it('--json alone: whole objects; --json a,b (or --json=a,b): only those fields, absent ones null', async () => {
    const { root, ids } = await cwdStore();
    const whole = parsed(await runCli(['list', '--json', '--store', root]));
    expect(whole[0]).toMatchObject({ sessionId: ids.old, title: 'Old here', lastSeq: 2 });
    const some = await runCli(['list', '--json', 'sessionId,title', '--store', root]);
    expect(some.code, explain(some)).toBe(0);
    expect(parsed(some)).toEqual([{ sessionId: ids.old, title: 'Old here' }, { sessionId: ids.other, title: 'Elsewhere' }, { sessionId: ids.hereNew, title: 'New here' }]);
    expect(parsed(await runCli(['list', '--json=tags,sessionId', '-n', '1', '--store', root]))).toEqual([{ tags: null, sessionId: ids.old }]);
    const hits = await runCli(['search', 'proj', '--json', 'seq,sessionId', '--store', root]);
    expect(hits.code, explain(hits)).toBe(0);
    expect(parsed(hits).map((h) => Object.keys(h))).toEqual([['seq', 'sessionId'], ['seq', 'sessionId']]);
    expect(parsed(await runCli(['search', '--json', 'proj', '--store', root]))[0]).toHaveProperty('snippet'); // TEXT after a bare --json
    expect((await runCli(['prune', '--yes', '--older-than', '0s', '--store', root])).code).toBe(0);
    const trash = await runCli(['trash', 'list', '--json', 'sessionId', '--store', root]);
    expect(trash.code, explain(trash)).toBe(0);
    expect(parsed(trash).map((e) => Object.keys(e))).toEqual([['sessionId'], ['sessionId'], ['sessionId']]);
    expect(parsed(await runCli(['trash', 'list', '--json', '--store', root]))[0]).toHaveProperty('deletedAt');
  });

  it('an unknown field is a usage error listing the available ones (exit 2, nothing on stdout)', async () => {
    const { root } = await cwdStore();
    for (const args of [['list', '--json', 'sessionId,titel'], ['search', 'x', '--json=sessionId,bogus'], ['trash', 'list', '--json', 'nope']]) {
      const r = await runCli([...args, '--store', root]);
      expect(r.code, explain(r)).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/unknown --json field .*; available: sessionId, /);
    }
    const list = await runCli(['list', '--json', 'titel', '--store', root]);
    expect(list.stderr).toContain('available: sessionId, title, createdAt, updatedAt');
  });
});
