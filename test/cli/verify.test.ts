import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, fullSnapshot, journalPath, makeStore, msg, runCli } from './helpers.js';

/** session-sidecar verify, over the BUILT binary. */

/** Flips one bit of the first occurrence of `needle` in the file (same inode, same size). */
function flipByte(file: string, needle: string): void {
  const buf = fs.readFileSync(file);
  const at = buf.indexOf(needle);
  expect(at).toBeGreaterThan(0);
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, Buffer.from([(buf[at] as number) ^ 0x01]), 0, 1, at);
  fs.closeSync(fd);
}

describe('session-sidecar verify', () => {
  it('a clean store: OK per session and a summary, exit 0', async () => {
    const f = await makeStore();
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toBe('');
    for (const id of [f.chat, f.compacted, f.fork]) expect(r.stdout).toMatch(new RegExp(`^OK {3}${id} {2}\\d+ records`, 'm'));
    expect(r.stdout).toContain(`OK   ${f.compacted}  3 records, `);
    expect(r.stdout).toMatch(/generation 1, 1 archived\n/);
    expect(r.stdout).toMatch(/\nOK: 3 sessions, 3 journals, 1 archived generations, 3 index entries, [\d.]+ KiB verified; 0 errors, 0 warnings\n$/);
    expect(r.stdout).not.toMatch(/warning:|error:|note:/);
  });

  it('a flipped byte in a journal: the session is named with the damaged line, exit 1', async () => {
    const f = await makeStore();
    flipByte(journalPath(f.root, f.chat), 'Why does CI');
    const before = fullSnapshot(f.root);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toContain(`FAIL ${f.chat}  journal damaged\n`);
    expect(r.stdout).toContain(`error: journal line 3 is damaged: checksum mismatch, followed by valid line 4 (sessions/${f.chat}/journal.jsonl, line 3)`);
    expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.compacted}`, 'm'));
    expect(r.stdout).toMatch(/\nPROBLEMS FOUND: 3 sessions, .*; 1 error, 0 warnings\n$/);
    expect(fullSnapshot(f.root)).toEqual(before);

    const one = await runCli(['verify', f.chat, '--store', f.root]);
    expect(one.code).toBe(1);
    expect(one.stdout).toContain(`FAIL ${f.chat}`);
    expect(one.stdout).not.toContain(f.compacted);
    const other = await runCli(['verify', f.compacted, '--store', f.root]);
    expect(other.code, explain(other)).toBe(0);
  });

  it('counts further damaged lines after the first', async () => {
    const f = await makeStore();
    flipByte(journalPath(f.root, f.chat), 'Why does CI');
    flipByte(journalPath(f.root, f.chat), 'tool.finished');
    const r = await runCli(['verify', f.chat, '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error: 1 more damaged line after it (line 7)');
  });

  it('--json: the structured report', async () => {
    const f = await makeStore();
    flipByte(journalPath(f.root, f.chat), 'Why does CI');
    const r = await runCli(['verify', '--json', '--store', f.root]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; totals: Record<string, number>; sessions: Array<{ sessionId: string; ok: boolean; findings: Array<Record<string, unknown>> }> };
    expect(report.ok).toBe(false);
    expect(report.totals).toMatchObject({ sessions: 3, errors: 1, archives: 1 });
    const chat = report.sessions.find((s) => s.sessionId === f.chat);
    expect(chat?.ok).toBe(false);
    expect(chat?.findings).toEqual([{ severity: 'error', check: 'journal', message: 'journal line 3 is damaged: checksum mismatch, followed by valid line 4', file: `sessions/${f.chat}/journal.jsonl`, line: 3 }]);
  });

  it('file and directory modes: 0600 files, 0700 directories', async () => {
    const f = await makeStore();
    fs.chmodSync(journalPath(f.root, f.fork), 0o644);
    fs.chmodSync(path.join(f.root, 'sessions', f.compacted), 0o755);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error: file mode 644, expected 600 (others can read it) (sessions/${f.fork}/journal.jsonl)`);
    expect(r.stdout).toContain(`error: directory mode 755, expected 700 (sessions/${f.compacted})`);
  });

  it('a journal shorter than its index entry: acknowledged records are missing', async () => {
    const f = await makeStore();
    const file = journalPath(f.root, f.chat);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    fs.truncateSync(file, Buffer.byteLength(lines.slice(0, -2).join('\n') + '\n')); // the last record line gone, same inode
    const r = await runCli(['verify', f.chat, '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error: the index records \d+ bytes as committed but the journal has \d+: acknowledged records are missing/);
  });

  it('index drift: an entry that contradicts its journal', async () => {
    const f = await makeStore();
    const file = path.join(f.root, 'index', `${f.fork}.json`);
    const entry = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...entry, title: 'Renamed', records: 99 }));
    const r = await runCli(['verify', f.fork, '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error: index drift: title is "Renamed" but the journal says "Fix the build"');
    expect(r.stdout).toContain('error: index drift: records is 99 but the journal says 3');
  });

  it('index drift: usage totals that contradict the journal', async () => {
    const f = await makeStore();
    const file = path.join(f.root, 'index', `${f.fork}.json`);
    const entry = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    const usage = { records: 1, total: { input: 5, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 5, requests: 1 }, byModel: {} };
    fs.writeFileSync(file, JSON.stringify({ ...entry, usage }));
    const r = await runCli(['verify', f.fork, '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error: index drift: usage is');
  });

  it('damage in the last line is corruption when the index vouches for it, a torn tail when nothing does', async () => {
    const f = await makeStore();
    flipByte(journalPath(f.root, f.compacted), 'again?');
    const r = await runCli(['verify', f.compacted, '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error: journal line 3 is damaged: checksum mismatch, in bytes the index records as committed (acknowledged records are damaged) (sessions/${f.compacted}/journal.jsonl, line 3)`);
    expect(r.stdout).not.toContain('torn tail');
    fs.rmSync(path.join(f.root, 'index', `${f.compacted}.json`));
    const unvouched = await runCli(['verify', f.compacted, '--store', f.root]);
    expect(unvouched.code, explain(unvouched)).toBe(0);
    expect(unvouched.stdout).toContain('warning: torn tail: ');
  });

  it('a missing index entry and a stale one are warnings, not errors', async () => {
    const f = await makeStore();
    fs.rmSync(path.join(f.root, 'index', `${f.chat}.json`));
    const store = new FileSessionStore(f.root, { leases: false });
    await store.open(f.fork, 'write');
    await store.append(f.fork, [msg('user', 'more')]);
    store.abandon(); // a killed writer: its index entry may lag
    const r = await runCli(['verify', '-v', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain(`WARN ${f.chat}`);
    expect(r.stdout).toContain(`warning: no index entry (written by the next writable open of the session) (index/${f.chat}.json)`);
    expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.fork}  4 records.*\n {7}note: the index entry is 1 record behind the journal \\(normal after a crash or while a sidecar writes\\) \\(index/${f.fork}\\.json\\)$`, 'm'));
  });

  it('a torn tail is reported (warning), never cut; --strict fails on it', async () => {
    const f = await makeStore();
    const file = journalPath(f.root, f.fork);
    fs.appendFileSync(file, '{"seq":4,"ts":"2026-');
    const bytes = fs.readFileSync(file);
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain(`WARN ${f.fork}`);
    expect(r.stdout).toContain(`warning: torn tail: 20 bytes after seq 3 (unterminated): an append that was never acknowledged, or one being written now; the next writable open moves it to recovery/ (sessions/${f.fork}/journal.jsonl, line 5)`);
    expect(fs.readFileSync(file)).toEqual(bytes);
    expect(fs.existsSync(path.join(f.root, 'recovery', f.fork))).toBe(false);
    const strict = await runCli(['verify', '--strict', '--store', f.root]);
    expect(strict.code).toBe(1);
  });

  it('recovery evidence is reported after a writable open repaired a torn tail', async () => {
    const f = await makeStore();
    fs.appendFileSync(journalPath(f.root, f.fork), '{"seq":4,"ts":"2026-');
    const store = new FileSessionStore(f.root, { leases: false });
    const opened = await store.open(f.fork, 'write');
    await store.closeAll();
    expect(opened.recovered?.bytes).toBe(20);
    const quiet = await runCli(['verify', '--store', f.root]);
    expect(quiet.code, explain(quiet)).toBe(0);
    expect(quiet.stdout).not.toContain('recovery evidence');
    const r = await runCli(['verify', '--verbose', '--store', f.root]);
    expect(r.stdout).toMatch(new RegExp(`note: recovery evidence: 20 bytes of a torn tail cut at offset \\d+ on [\\dT:.-]+Z \\(${opened.recovered?.evidence}\\)`));
  });

  it('archives: a missing generation, a damaged one', async () => {
    const f = await makeStore();
    const archive = path.join(f.root, 'history', f.compacted, '0.jsonl');
    flipByte(archive, 'hello');
    const damaged = await runCli(['verify', '--store', f.root]);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toContain(`FAIL ${f.compacted}`);
    expect(damaged.stdout).toContain(`error: damaged: the last 268 bytes do not verify (checksum mismatch); an archive is written whole, so this is not a torn write (history/${f.compacted}/0.jsonl, line 2)`);
    expect(damaged.stdout).toMatch(/; 1 error, 0 warnings\n$/);
    fs.rmSync(archive);
    const missing = await runCli(['verify', '--store', f.root]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`error: generation 0 is missing: the records it archived exist nowhere else (history/${f.compacted}/0.jsonl)`);
  });

  it('a header naming another session, and stray files', async () => {
    const f = await makeStore();
    fs.copyFileSync(journalPath(f.root, f.chat), journalPath(f.root, f.fork));
    fs.writeFileSync(path.join(f.root, 'index', '01ORPHAN.json'), '{}', { mode: 0o600 });
    const r = await runCli(['verify', '--store', f.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error: the header names another session (sessions/${f.fork}/journal.jsonl, line 1)`);
    expect(r.stdout).toMatch(/^store \S+\n {2}warning: index entry of a session that does not exist \(ignored\) \(index\/01ORPHAN\.json\)$/m);
  });

  it('a session that does not exist, an invalid id, no store', async () => {
    const f = await makeStore();
    const missing = await runCli(['verify', '01NOSUCHSESSION', '--store', f.root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('session-sidecar: session 01NOSUCHSESSION not found\n');
    const invalid = await runCli(['verify', '../etc', '--store', f.root]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^session-sidecar: invalid session id/);
    const root = path.join(tempDir('sidecar-cli-'), 'none');
    const none = await runCli(['verify', '--store', root]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(`session-sidecar: no session store at ${root} (use --store DIR or --workspace DIR)\n`);
  });
});

describe('session-sidecar verify next to a running sidecar', () => {
  it('reports the writer lease, finds nothing wrong, and the sidecar keeps writing', async () => {
    const { SidecarClient } = await import('../../dist/src/client/index.js');
    const f = await makeStore();
    const sidecar = await SidecarClient.start({ store: f.root });
    try {
      await sidecar.open({ sessionId: f.chat, mode: 'write' });
      await sidecar.append({ sessionId: f.chat, records: [msg('user', 'one more') as never] });
      const r = await runCli(['verify', '-v', '--store', f.root]);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^OK {3}${f.chat}  9 records.*\\n(.*\\n)* {7}note: open for writing by pid ${sidecar.child.pid} on \\S+ since \\S+ \\(locks/${f.chat}\\.lock\\)$`, 'm'));
      const list = await runCli(['list', '--json', '--store', f.root]);
      expect((JSON.parse(list.stdout) as Array<{ sessionId: string; lastSeq: number }>).find((s) => s.sessionId === f.chat)?.lastSeq).toBe(9);
      expect((await sidecar.append({ sessionId: f.chat, records: [msg('user', 'still mine') as never] })).lastSeq).toBe(10);
    } finally {
      await sidecar.shutdown();
    }
  });
});
