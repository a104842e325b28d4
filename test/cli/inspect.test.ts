import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI, explain, fullSnapshot, makeStore, runCli } from './helpers.js';

/** list, show, export and stats over the BUILT binary, on a store written through the store library. */

describe('session-sidecar list', () => {
  it('prints a table: id, title, relative update time, records, size, parent', async () => {
    const f = await makeStore();
    const r = await runCli(['list', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+UPDATED\s+RECORDS\s+SIZE\s+PARENT$/);
    expect(lines).toHaveLength(4);
    const row = (id: string) => lines.find((l) => l.startsWith(id)) as string;
    expect(row(f.chat)).toMatch(new RegExp(`^${f.chat}\\s+Fix the build\\s+(just now|\\d+s ago)\\s+8\\s+\\d\\.\\d KiB\\s+-$`));
    expect(row(f.compacted)).toMatch(/Greetings\s+(just now|\d+s ago)\s+3\s+\d+ B\s+-$/);
    expect(row(f.fork)).toContain(`fork of ${f.chat}@3`);
    expect(r.stdout).not.toContain('\u001b['); // stdout is not a terminal: no colors
  });

  it('--json prints the JSON array of session summaries, newest first', async () => {
    const f = await makeStore();
    const r = await runCli(['list', '--json', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const sessions = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(sessions.map((s) => s.sessionId)).toEqual([f.fork, f.compacted, f.chat]);
    expect(sessions[2]).toMatchObject({ title: 'Fix the build', lastSeq: 8, firstMessage: 'user: Why does CI fail?' });
    expect(sessions[0]).toMatchObject({ parent: { sessionId: f.chat, relation: 'fork', atSeq: 3 } });
  });

  it('resolves the store like serve: --workspace, $SESSION_SIDECAR_STORE, subcommand after the options', async () => {
    const ws = tempDir('sidecar-cli-ws-');
    const f = await makeStore(path.join(ws, '.session-sidecar'));
    for (const [args, env] of [
      [['list', '--json', '--workspace', ws], {}],
      [['--workspace', ws, 'list', '--json'], {}],
      [['list', '--json'], { SESSION_SIDECAR_STORE: f.root }],
    ] as const) {
      const r = await runCli([...args], { env });
      expect(r.code, explain(r)).toBe(0);
      expect((JSON.parse(r.stdout) as unknown[]).length).toBe(3);
    }
    const cwd = await runCli(['list', '--json'], { cwd: ws });
    expect(cwd.code, explain(cwd)).toBe(0);
    expect((JSON.parse(cwd.stdout) as unknown[]).length).toBe(3);
  });

  it('an empty store says so', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { FileSessionStore } = await import('../../src/stores/fileStore.js');
    new FileSessionStore(root, { leases: false });
    const r = await runCli(['list', '--store', root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toBe(`no sessions in ${root}\n`);
    expect((await runCli(['list', '--json', '--store', root])).stdout).toBe('[]\n');
  });
});

describe('session-sidecar show', () => {
  it('prints a readable transcript: roles, text, tool calls, results, events, interruptions, turns', async () => {
    const f = await makeStore();
    const r = await runCli(['show', f.chat, '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const out = r.stdout;
    expect(out).toMatch(new RegExp(`^Fix the build  ${f.chat}\n`));
    expect(out).toContain('8 records · cwd /home/me/project · model openai/gpt-test · turn interrupted');
    expect(out).toContain('system prompt\n    You are a careful engineer.');
    expect(out).toMatch(/#1 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}turn {2}start user {2}\S+/);
    expect(out).toMatch(/#2 [\d: -]+ {2}user\n {4}Why does CI fail\?\n/);
    expect(out).toMatch(/#4 [\d: -]+ {2}assistant\n {4}Let me look at the log\.\n {4}→ bash\(\{"cmd":"cat ci\.log","timeout":30\}\) \[call_1\]\n/);
    expect(out).toMatch(/#5 [\d: -]+ {2}tool ← bash \[call_1\]\n {4}log line 0\n/);
    expect(out).toContain('    log line 11\n    … 28 more lines (--full shows all)\n');
    expect(out).not.toContain('log line 12');
    expect(out).toMatch(/#6 [\d: -]+ {2}event {2}tool\.finished {2}\{"ms":12\}\n/);
    expect(out).toMatch(/#7 [\d: -]+ {2}interruption {2}user cancelled \(during executingTools\)\n {4}The log says\n/);
    expect(out).toMatch(/#8 [\d: -]+ {2}turn {2}finish interrupted/);
    expect(out).not.toContain('\u001b[');

    const full = await runCli(['show', f.chat, '--full', '--store', f.root]);
    expect(full.stdout).toContain('    log line 39\n');
  });

  it('shows a checkpoint by its summary, and the archived records with --all', async () => {
    const f = await makeStore();
    const r = await runCli(['show', f.compacted, '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('compacted 1 time: records through #2 are summarized by the checkpoint (--all shows the archived records)');
    expect(r.stdout).toMatch(/#2 [\d: -]+ {2}checkpoint {2}generation 1, through #2, 2 records summarized\n {4}They greeted each other\.\n/);
    expect(r.stdout).not.toContain('hello');
    const all = await runCli(['show', f.compacted, '--all', '--store', f.root]);
    expect(all.code, explain(all)).toBe(0);
    expect(all.stdout).toMatch(/#1 [\d: -]+ {2}user\n {4}hi\n#2 [\d: -]+ {2}assistant\n {4}hello\n── compacted here \(generation 1\): records through #2 were summarized ──\n#3 [\d: -]+ {2}user\n {4}again\?\n/);
  });

  it('--json is one JSON array of the stored records; --raw is JSON Lines', async () => {
    const f = await makeStore();
    const json = await runCli(['show', f.chat, '--json', '--store', f.root]);
    expect(json.code, explain(json)).toBe(0);
    const records = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(records[1]).toMatchObject({ seq: 2, kind: 'message', message: { role: 'user', content: 'Why does CI fail?' } });
    const raw = await runCli(['show', f.chat, '--raw', '--store', f.root]);
    expect(raw.code, explain(raw)).toBe(0);
    const lines = raw.stdout.trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(records);
    expect(lines.every((l) => !l.includes('"crc"'))).toBe(true);
  });

  it('accepts a unique prefix of the id; refuses an ambiguous one', async () => {
    const f = await makeStore();
    const r = await runCli(['show', f.compacted.slice(0, 22).toLowerCase(), '--raw', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout.split('\n')[0]).toContain('"checkpoint"');
    const ambiguous = await runCli(['show', '0', '--store', f.root]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toBe('session-sidecar: 3 sessions start with 0; give more of the id\n');
  });

  it('shows control characters from records, never sends them to the terminal', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { FileSessionStore } = await import('../../src/stores/fileStore.js');
    const store = new FileSessionStore(root, { leases: false });
    const { sessionId } = await store.create({ title: 'esc' });
    await store.append(sessionId, [{ kind: 'message', message: { role: 'tool', content: 'a\u001b[2Jb\u0007c', toolCallId: 'x' } }]);
    await store.closeAll();
    const r = await runCli(['show', sessionId, '--store', root]);
    expect(r.stdout).toContain('a␛[2Jb␇c');
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
  });

  it.skipIf(!hasScript())('colors on a terminal, none with NO_COLOR', async () => {
    const f = await makeStore();
    const inTty = (env: string) => spawnSync('script', ['-qec', `PAGER=cat ${env} ${process.execPath} ${CLI} show ${f.chat} --store ${f.root}`, '/dev/null'], { encoding: 'utf8' });
    const colored = inTty('NO_COLOR=');
    expect(colored.status, colored.stderr).toBe(0);
    expect(colored.stdout).toContain('\u001b[32m\u001b[1muser\u001b[22m\u001b[39m');
    const plain = inTty('NO_COLOR=1');
    expect(plain.stdout).toContain('user');
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('ends quietly with code 0 when the reader goes away (| head)', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { FileSessionStore } = await import('../../src/stores/fileStore.js');
    const store = new FileSessionStore(root, { leases: false });
    const { sessionId } = await store.create({ title: 'long' });
    for (let b = 0; b < 5; b++) await store.append(sessionId, Array.from({ length: 1000 }, (_, i) => ({ kind: 'event', type: 'tick', payload: { i, pad: 'x'.repeat(100) } })));
    await store.closeAll();
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${CLI}" show ${sessionId} --raw --store "${root}" | head -n 2; echo "status $?"`], { encoding: 'utf8' });
    const pipe = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" show ${sessionId} --store "${root}" 2>/tmp/epipe-$$ | head -n 1; s=$?; cat /tmp/epipe-$$; rm -f /tmp/epipe-$$; echo "status $s"`], { encoding: 'utf8' });
    expect(r.stdout.split('\n').slice(0, 2).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2]);
    expect(pipe.stdout).toMatch(/^long {2}\S+\nstatus 0\n$/);
    expect(pipe.stderr).toBe('');
  });
});

describe('runtime records, blobs, state', () => {
  it('show names api traffic and tool runs, and blobs by size; verify accepts state and scratch', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'store');
    const { FileSessionStore } = await import('../../src/stores/fileStore.js');
    const store = new FileSessionStore(root, { leases: false });
    const { sessionId } = await store.create({ title: 'runtime', blobThreshold: 1024 });
    await store.append(sessionId, [{ kind: 'api', direction: 'request', payload: { model: 'm' } }]);
    const { toolSeq } = await store.allocateScratch(sessionId, 'r1');
    await store.append(sessionId, [{ kind: 'toolStart', toolSeq, requestId: 'r1', tool: 'bash', toolUseId: 'c1' }]);
    await store.append(sessionId, [{ kind: 'toolStream', toolSeq, stream: 'stdout', text: 'x'.repeat(5000) }]);
    await store.append(sessionId, [{ kind: 'toolFinish', toolSeq, requestId: 'r1', success: false, exitCode: 2, error: 'boom' }]);
    await store.setState(sessionId, 'plan', { step: 1 });
    await store.closeAll();
    const r = await runCli(['show', sessionId, '--store', root]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/#1 [\d: -]+ {2}api {2}request #1 {2}\{"model":"m"\}\n/);
    expect(r.stdout).toMatch(new RegExp(`#2 [\\d: -]+ {2}tool run {2}#${toolSeq} bash started \\[c1\\]\\n`));
    expect(r.stdout).toMatch(/#3 [\d: -]+ {2}tool run {2}#\d+ stdout\n {4}\[blob: 4\.9 KiB, sha256:[0-9a-f]{8}…\]\n/);
    expect(r.stdout).toMatch(/#4 [\d: -]+ {2}tool run {2}#\d+ finished failed \(exit 2\)\n {4}error: boom\n/);
    const v = await runCli(['verify', '--store', root]);
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`^OK {3}${sessionId}`, 'm'));
    expect(v.stdout).not.toMatch(/warning:|error:/);
  });
});

describe('session-sidecar export', () => {
  it('--format markdown: a document with the details, a heading per turn and message, code blocks for tools', async () => {
    const f = await makeStore();
    const r = await runCli(['export', f.chat, '--format', 'markdown', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const md = r.stdout;
    expect(md).toMatch(/^# Fix the build\n\n- \*\*Session:\*\* `\w+`\n- \*\*Created:\*\* [\d-]+ [\d:]+ [+-]\d\d:\d\d\n- \*\*Records:\*\* 8\n/);
    expect(md).toContain('- **Working directory:** `/home/me/project`');
    expect(md).toContain('- **Model:** openai / gpt-test');
    expect(md).toContain('## System prompt\n\n```text\nYou are a careful engineer.\n```\n');
    expect(md).toMatch(/## Turn 1\n\n\*#1 · [^*]+\*\n\n### User\n\n\*#2 · [^*]+\*\n\nWhy does CI fail\?\n/);
    expect(md).toContain('### Assistant');
    expect(md).toContain('**Tool call `bash`** (`call_1`)\n\n```json\n{\n  "cmd": "cat ci.log",\n  "timeout": 30\n}\n```\n');
    expect(md).toMatch(/### Tool result: `bash`\n\n\*#5 · [^*]+\*\n\n```\nlog line 0\n[^`]*log line 39\n```\n/);
    expect(md).toContain('### Event `tool.finished`');
    expect(md).toContain('### Interruption: user cancelled');
    expect(md).toMatch(/> Turn finish interrupted — \*#8/);
  });

  it('exports the archived generations too, each seq once; markdown marks the compaction', async () => {
    const f = await makeStore();
    const jsonl = await runCli(['export', f.compacted, '--format', 'jsonl', '--store', f.root]);
    expect(jsonl.code, explain(jsonl)).toBe(0);
    const records = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { seq: number; kind: string; message?: { content: string } });
    expect(records.map((x) => [x.seq, x.kind, x.message?.content])).toEqual([[1, 'message', 'hi'], [2, 'message', 'hello'], [3, 'message', 'again?']]);
    const md = await runCli(['export', f.compacted, '--format', 'markdown', '--store', f.root]);
    expect(md.stdout).toMatch(/## User\n\n[^\n]+\n\nhi\n\n## Assistant\n\n[^\n]+\n\nhello\n\n---\n\n\*\*Compacted here: records through #2 were summarized \(generation 1\)\*\* — [^\n]+\n\n> They greeted each other\.\n\n---\n\n## User\n\n[^\n]+\n\nagain\?\n/);
  });

  it('needs --format jsonl or markdown', async () => {
    const f = await makeStore();
    const none = await runCli(['export', f.chat, '--store', f.root]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("session-sidecar: export: --format is required (jsonl or markdown) (see 'session-sidecar export --help')\n");
    const bad = await runCli(['export', f.chat, '--format', 'pdf', '--store', f.root]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be jsonl or markdown');
  });
});

describe('session-sidecar stats', () => {
  it('counts sessions, records and bytes and lists the largest sessions', async () => {
    const f = await makeStore();
    const r = await runCli(['stats', '--json', '--store', f.root]);
    expect(r.code, explain(r)).toBe(0);
    const stats = JSON.parse(r.stdout) as Record<string, unknown> & { largest: Array<Record<string, unknown>> };
    const journals = [f.chat, f.compacted, f.fork].reduce((a, id) => a + fs.statSync(path.join(f.root, 'sessions', id, 'journal.jsonl')).size, 0);
    const archived = fs.statSync(path.join(f.root, 'history', f.compacted, '0.jsonl')).size;
    expect(stats).toMatchObject({ root: f.root, sessions: 3, records: 8 + 3 + 3, journalBytes: journals, archivedGenerations: 1, archivedBytes: archived, bytes: journals + archived });
    expect(stats.largest.map((s) => s.sessionId)).toEqual([f.chat, f.fork, f.compacted].sort((a, b) => {
      const size = (id: string) => fs.statSync(path.join(f.root, 'sessions', id, 'journal.jsonl')).size + (id === f.compacted ? archived : 0);
      return size(b) - size(a);
    }));
    const text = await runCli(['stats', '--store', f.root]);
    expect(text.code, explain(text)).toBe(0);
    expect(text.stdout).toMatch(/^store {5}\S+\nsessions {2}3\nrecords {3}14\nbytes {5}[\d.]+ KiB \(journals [\d.]+ KiB, 1 archived generations \d+ B\)\n/);
    expect(text.stdout).toContain('largest sessions\nID');
    expect(text.stdout).toContain(f.chat);
  });
});

describe('inspection is read-only', () => {
  it('list, show, tail, export, stats and verify change nothing in the store, even a stale index', async () => {
    const f = await makeStore();
    fs.rmSync(path.join(f.root, 'index', `${f.chat}.json`)); // a reader would rebuild it
    const before = fullSnapshot(f.root);
    for (const args of [
      ['list'], ['list', '--json'], ['show', f.chat], ['show', f.compacted, '--all'], ['tail', f.chat], ['export', f.compacted, '--format', 'markdown'],
      ['stats'], ['verify'], ['verify', f.chat],
    ]) {
      const r = await runCli([...args, '--store', f.root]);
      expect(r.code, `${args.join(' ')}: ${explain(r)}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
    }
    expect(fullSnapshot(f.root)).toEqual(before);
  });

  it('a store missing folders a sidecar creates on start is read as it is, nothing created', async () => {
    const f = await makeStore();
    for (const name of ['index', 'recovery', '.gitignore']) fs.rmSync(path.join(f.root, name), { recursive: true });
    const before = fullSnapshot(f.root);
    for (const args of [['list', '--json'], ['show', f.chat], ['stats']]) {
      const r = await runCli([...args, '--store', f.root]);
      expect(r.code, `${args.join(' ')}: ${explain(r)}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
    }
    const v = await runCli(['verify', '--store', f.root]);
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).toContain('warning: folder missing (the sidecar creates it on start) (index)');
    expect(fullSnapshot(f.root)).toEqual(before);
  });

  it('a missing store is an error, never created', async () => {
    const root = path.join(tempDir('sidecar-cli-'), 'nothing-here');
    for (const cmd of ['list', 'stats', 'verify']) {
      const r = await runCli([cmd, '--store', root]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`session-sidecar: no session store at ${root} (use --store DIR or --workspace DIR)\n`);
    }
    expect(fs.existsSync(root)).toBe(false);
  });
});

function hasScript(): boolean {
  const r = spawnSync('script', ['-qec', 'true', '/dev/null'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}
