import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import stringWidth from 'string-width';
import { tempDir } from '../helpers.js';
import { CLI, explain, msg, runCli } from './helpers.js';

/**
 * Finding a session with `list` (issue 31, finding 4): --limit, --sort, --since/--until,
 * untitled sessions by their first message, columns measured in terminal cells (CJK and emoji
 * are two wide) and titles cut to the terminal's width.
 */
async function store(): Promise<{ root: string; ids: { big: string; cjk: string; untitled: string } }> {
  const root = path.join(tempDir('sidecar-find-'), 'store');
  const s = new FileSessionStore(root, { leases: false });
  const ids = { big: '', cjk: '', untitled: '' };
  const pause = () => new Promise((r) => setTimeout(r, 15));
  ids.big = (await s.create({ title: 'Big one' })).sessionId;
  await s.append(ids.big, Array.from({ length: 30 }, (_, i) => msg('user', `line ${i} `.repeat(20))));
  await pause();
  ids.cjk = (await s.create({ title: '修复构建 🚀 emoji' })).sessionId;
  await s.append(ids.cjk, [msg('user', 'hi')]);
  await pause();
  ids.untitled = (await s.create({})).sessionId;
  await s.append(ids.untitled, [msg('user', 'Why is the deploy slow?')]);
  await s.closeAll();
  return { root, ids };
}

const rows = (stdout: string) => stdout.trimEnd().split('\n').slice(1);
const idsOf = (stdout: string) => rows(stdout).map((l) => l.split(/\s+/)[0]);

describe('list: finding sessions', () => {
  it('--limit, --sort updated|created|size, --since and --until; bad values are usage errors', async () => {
    const { root, ids } = await store();
    const all = await runCli(['list', '--store', root]);
    expect(idsOf(all.stdout)).toEqual([ids.untitled, ids.cjk, ids.big]);
    expect(idsOf((await runCli(['list', '-n', '2', '--store', root])).stdout)).toEqual([ids.untitled, ids.cjk]);
    expect(idsOf((await runCli(['list', '--sort', 'size', '--limit', '1', '--store', root])).stdout)).toEqual([ids.big]);
    expect(idsOf((await runCli(['list', '--sort', 'created', '--store', root])).stdout)).toEqual([ids.untitled, ids.cjk, ids.big]);
    expect((await runCli(['list', '--since', '1h', '--store', root])).stdout).toContain(ids.big);
    expect((await runCli(['list', '--until', '1h', '--store', root])).stdout).toContain('no sessions');
    const json = JSON.parse((await runCli(['list', '--json', '--since', '2000-01-01', '--until', '2999-01-01T00:00+01:00', '--store', root])).stdout) as unknown[];
    expect(json).toHaveLength(3);
    for (const bad of [['-n', '0'], ['--sort', 'name'], ['--since', 'yesterday']]) {
      const r = await runCli(['list', ...bad, '--store', root]);
      expect(r.code, explain(r)).toBe(2);
    }
  });

  it('an untitled session shows its first message; wide characters keep the columns aligned', async () => {
    const { root, ids } = await store();
    const out = (await runCli(['list', '--store', root])).stdout;
    const line = (id: string): string => rows(out).find((l) => l.startsWith(id)) ?? '';
    expect(line(ids.untitled)).toContain('user: Why is the deploy slow?');
    // UPDATED starts at the same terminal column on every row, the CJK and emoji title's included
    const col = (l: string): number => stringWidth(l.slice(0, l.search(/just now|\d+ ?[a-z]+ ago/)));
    expect(rows(out).map(col).every((c) => c > 30)).toBe(true);
    expect(new Set(rows(out).map(col)).size).toBe(1);
  });

  it('on a terminal, titles are cut so that every line fits its width', async () => {
    const { root } = await store();
    const line = `stty cols 80; PAGER=cat NO_COLOR=1 '${process.execPath}' '${CLI}' list --store '${root}'`;
    const out = await new Promise<string>((resolve) => {
      const child = spawn('script', ['-qec', line, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (x: string) => (text += x));
      child.on('close', () => resolve(text));
    });
    const lines = out.replace(/\r/g, '').trimEnd().split('\n');
    expect(lines.length).toBe(4);
    for (const l of lines) expect(stringWidth(l), l).toBeLessThanOrEqual(80);
    expect(out).toContain('…');
  });
});

describe('search: says when it hit its limit', () => {
  it('"N shown, more exist" on stderr when more hits exist than --limit, and not when they are all shown', async () => {
    const { root } = await store();
    const cut = await runCli(['search', 'line', '--limit', '5', '--store', root]);
    expect(cut.code, explain(cut)).toBe(0);
    expect(cut.stdout.trimEnd().split('\n')).toHaveLength(6);
    expect(cut.stderr).toContain('5 shown, more exist — use --limit to see more');
    const all = await runCli(['search', 'line', '--limit', '30', '--store', root]);
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(31);
    expect(all.stderr).toBe('');
  });
});

describe('a damaged session is still found', () => {
  it('show <prefix> says it is damaged (not "not found"); list --all shows it marked; list leaves it out with a warning', async () => {
    const { root, ids } = await store();
    const journal = path.join(root, 'sessions', ids.cjk, 'journal.jsonl');
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"hi"', '"hi!"'); // the first record's text, its checksum left as it was
    fs.writeFileSync(journal, lines.join('\n'));
    const shown = await runCli(['show', ids.cjk.slice(0, 12), '--store', root]);
    expect(shown.code, explain(shown)).toBe(1);
    expect(shown.stderr).toMatch(/damaged/);
    expect(shown.stderr).not.toMatch(/not found/);
    const listed = await runCli(['list', '--store', root]);
    expect(listed.stdout).not.toContain(ids.cjk);
    expect(listed.stderr).toContain(`session ${ids.cjk} left out of the list: Corrupt`);
    const all = await runCli(['list', '--all', '--store', root]);
    expect(all.stdout).toMatch(new RegExp(`${ids.cjk}\\s+DAMAGED \\(Corrupt\\)`));
    const json = JSON.parse((await runCli(['list', '--all', '--json', '--store', root])).stdout) as Array<Record<string, unknown>>;
    expect(json).toContainEqual({ sessionId: ids.cjk, unreadable: 'Corrupt' });
    expect(json).toHaveLength(3);
  });
});

describe('show --salvage', () => {
  it('reads every intact record of a journal damaged in the middle, marks the damaged span, and changes nothing', async () => {
    const { root, ids } = await store();
    const journal = path.join(root, 'sessions', ids.big, 'journal.jsonl');
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    for (const n of [10, 11, 12]) lines[n] = lines[n]!.replace('line', 'LINE'); // records 10-12 altered, their checksums left
    fs.writeFileSync(journal, lines.join('\n'));
    const before = fs.readFileSync(journal);
    const refused = await runCli(['show', ids.big, '--store', root]);
    expect(refused.code).toBe(1);
    const raw = await runCli(['show', ids.big.slice(0, 12), '--salvage', '--raw', '--store', root]);
    expect(raw.code, explain(raw)).toBe(0);
    const rows = raw.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const seqs = rows.filter((r) => 'seq' in r).map((r) => r.seq);
    expect(seqs).toEqual([...Array.from({ length: 9 }, (_, i) => i + 1), ...Array.from({ length: 18 }, (_, i) => i + 13)]);
    expect(rows.filter((r) => 'damaged' in r)).toEqual([{ damaged: { firstLine: 11, lastLine: 13, offset: expect.any(Number), bytes: expect.any(Number), reason: 'checksum mismatch' } }]);
    const text = await runCli(['show', ids.big, '--salvage', '--store', root]);
    expect(text.stdout).toContain('salvaged: 27 record(s) verify; 1 damaged span(s) left out');
    expect(text.stdout).toMatch(/⚠ damaged: lines 11-13 of sessions\/\S+\/journal\.jsonl/);
    expect(fs.readFileSync(journal)).toEqual(before);
  });
});

describe('export --salvage', () => {
  it('jsonl and markdown of a journal damaged in the middle: every intact record, the span marked', async () => {
    const { root, ids } = await store();
    const journal = path.join(root, 'sessions', ids.big, 'journal.jsonl');
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    lines[5] = lines[5]!.replace('line', 'LINE');
    fs.writeFileSync(journal, lines.join('\n'));
    expect((await runCli(['export', ids.big, '--format', 'jsonl', '--store', root])).code).toBe(1);
    const jsonl = await runCli(['export', ids.big, '--format', 'jsonl', '--salvage', '--store', root]);
    expect(jsonl.code, explain(jsonl)).toBe(0);
    const rows = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.filter((r) => 'seq' in r)).toHaveLength(29);
    expect(rows[4]).toMatchObject({ damaged: { firstLine: 6, lastLine: 6, reason: 'checksum mismatch' } });
    const md = await runCli(['export', ids.big, '--format', 'markdown', '--salvage', '--store', root]);
    expect(md.code, explain(md)).toBe(0);
    expect(md.stdout).toContain('# Big one');
    expect(md.stdout).toMatch(/> \*\*damaged: line 6 of sessions\/\S+\/journal\.jsonl/);
    expect(md.stdout).toContain('line 29');
  });
});
