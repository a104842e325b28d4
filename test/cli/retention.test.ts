import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { CLI, explain, journalPath, makeStore, runCli } from './helpers.js';
import { makePgStore, PASSWORD, pgStore, withPassword } from './pgCliKit.js';

/**
 * `prune` and `trash list|restore|empty` through the built binary, on a file store and on a
 * PostgreSQL URL: what moves (to the trash, bytes kept), what is skipped (a session a sidecar
 * holds open), the dry-run default on a terminal, and that only `trash empty` removes bytes.
 */

const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;
type PruneOut = { dryRun: boolean; sessions: Array<{ sessionId: string; title?: string }>; skipped: Array<{ sessionId: string; reason: string }> };
type TrashOut = Array<{ sessionId: string; title?: string; deletedAt: string; bytes: number }>;

/** Runs the CLI with stdout on a pseudo-terminal (script(1)): what a person at a terminal gets. */
/**
 * The command in a pseudo-terminal (util-linux `script`: stdin and stdout both terminals), the
 * answer typed when its `[y/N]` question shows (a question never answered would hang: Enter, No).
 */
/** A shell pipeline, `set -o pipefail`: the first command's exit code. */
function runShell(line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', `${line}`], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.stdin.end();
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function onTerminal(args: string[], answer = '', stdin = ''): Promise<{ code: number | null; stdout: string }> {
  const line = stdin + ['node', CLI, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', line, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let asked = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      if (!asked && stdout.includes('[y/N]')) {
        asked = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('prune and trash on a file store', () => {
  it('prune moves to the trash (journal bytes kept), skips a session a sidecar holds open; trash list, restore, empty', async () => {
    const fx = await makeStore();
    const holder = new FileSessionStore(fx.root, {});
    await holder.open(fx.chat, 'write'); // this process is "a sidecar" holding it: the CLI must skip it
    const journal = fs.readFileSync(journalPath(fx.root, fx.compacted));
    await new Promise((r) => setTimeout(r, 5));
    // The dry run reports what the real prune below does: the held session skipped, reason open.
    const dryJson = await runCli(['prune', '--store', fx.root, '--older-than', '0s', '--dry-run', '--json']);
    expect(dryJson.code, explain(dryJson)).toBe(0);
    const would = json<PruneOut>(dryJson);
    expect(would.dryRun).toBe(true);
    expect(would.sessions.map((s) => s.sessionId).sort()).toEqual([fx.compacted, fx.fork].sort());
    expect(would.skipped).toEqual([{ sessionId: fx.chat, reason: 'open' }]);
    const dryText = await runCli(['prune', '--store', fx.root, '--older-than', '0s', '--dry-run']);
    expect(dryText.stdout).toContain('would move 2 session(s)');
    expect(dryText.stdout).toContain(`skipped ${fx.chat}: open for writing by a sidecar`);
    expect(await holder.append(fx.chat, [{ kind: 'message', message: { role: 'user', content: 'still held' } }])).toMatchObject({ lastSeq: expect.any(Number) });
    const r = await runCli(['prune', '--yes', '--store', fx.root, '--older-than', '0s', '--json']);
    expect(r.code, explain(r)).toBe(0);
    const out = json<PruneOut>(r);
    expect(out.dryRun).toBe(false); // stdout is not a terminal: the default is to move
    expect(out.sessions.map((s) => s.sessionId).sort()).toEqual([fx.compacted, fx.fork].sort());
    expect(out.skipped).toEqual([{ sessionId: fx.chat, reason: 'open' }]);
    expect(fs.readFileSync(path.join(fx.root, 'trash', fx.compacted, 'session', 'journal.jsonl'))).toEqual(journal);
    expect(fs.existsSync(path.join(fx.root, 'trash', fx.compacted, 'history'))).toBe(true);
    await holder.closeAll();

    const list = await runCli(['trash', 'list', '--store', fx.root, '--json']);
    expect(list.code, explain(list)).toBe(0);
    const trashed = json<TrashOut>(list);
    expect(trashed.map((e) => e.sessionId).sort()).toEqual([fx.compacted, fx.fork].sort());
    expect(trashed.find((e) => e.sessionId === fx.compacted)).toMatchObject({ title: 'Greetings', bytes: expect.any(Number) });
    expect(trashed.find((e) => e.sessionId === fx.compacted)!.bytes).toBeGreaterThan(journal.length); // its archive counted
    expect(json<TrashOut>(await runCli(['trash', 'list', '--store', fx.root, '--json', '--older-than', '7d']))).toEqual([]);

    const ambiguous = await runCli(['trash', 'restore', '0', '--store', fx.root]); // both trashed ids start with 0 (ULIDs of this century)
    expect(ambiguous.code, explain(ambiguous)).toBe(2);
    expect(ambiguous.stderr).toContain('2 deleted sessions start with 0');
    const restored = await runCli(['trash', 'restore', fx.compacted.slice(0, 24), '--store', fx.root]); // a unique prefix, as the inspection commands take
    expect(restored.code, explain(restored)).toBe(0);
    expect(restored.stdout).toBe(`restored ${fx.compacted}\n`);
    expect(fs.readFileSync(journalPath(fx.root, fx.compacted))).toEqual(journal);

    const young = await runCli(['trash', 'empty', '--yes', '--store', fx.root, '--older-than', '7d', '--json']);
    expect(json<{ sessions: TrashOut }>(young).sessions).toEqual([]);
    expect(fs.existsSync(path.join(fx.root, 'trash', fx.fork, 'session'))).toBe(true);
    const dry = await runCli(['trash', 'empty', '--store', fx.root, '--dry-run']);
    expect(dry.stdout).toContain(fx.fork);
    expect(fs.existsSync(path.join(fx.root, 'trash', fx.fork, 'session'))).toBe(true);
    const emptied = await runCli(['trash', 'empty', '--store', fx.root, '--yes']);
    expect(emptied.code, explain(emptied)).toBe(0);
    expect(emptied.stdout).toContain(`removed for good 1 session(s)`);
    expect(fs.existsSync(path.join(fx.root, 'trash', fx.fork))).toBe(false);
    expect(fs.existsSync(journalPath(fx.root, fx.chat))).toBe(true);
  });

  it('on a terminal, prune and trash empty show what they would do and ask; only y goes ahead', async () => {
    const fx = await makeStore();
    await new Promise((r) => setTimeout(r, 5));
    const no = await onTerminal(['prune', '--store', fx.root, '--older-than', '0s'], 'n');
    expect(no.code, no.stdout).toBe(1);
    expect(no.stdout).toContain('would move 3 session(s)');
    expect(no.stdout).toContain('Move 3 session(s) to the trash? [y/N]');
    expect(no.stdout).toContain('nothing was moved');
    for (const id of [fx.chat, fx.compacted, fx.fork]) expect(fs.existsSync(journalPath(fx.root, id))).toBe(true);
    const yes = await onTerminal(['prune', '--store', fx.root, '--older-than', '0s', '--keep-last', '1'], 'y');
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toContain('moved 2 session(s)');
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(2);
    // `yes | session-sidecar trash empty` in a terminal: stdout is one, stdin is not — not asked, nothing done
    const yesPiped = await onTerminal(['trash', 'empty', '--store', fx.root], '', 'yes | ');
    expect(yesPiped.code, yesPiped.stdout).toBe(1);
    expect(yesPiped.stdout).not.toContain('[y/N]');
    expect(yesPiped.stdout).toContain('add --yes');
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(2);
    const empty = await onTerminal(['trash', 'empty', '--store', fx.root]); // Enter: No
    expect(empty.code, empty.stdout).toBe(1);
    expect(empty.stdout).toContain('would remove for good 2 session(s)');
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(2);
  });

  it('through a real pipe, prune, trash empty and a restore of several do nothing without --yes: exit 1 naming --yes', async () => {
    const fx = await makeStore();
    await new Promise((r) => setTimeout(r, 5));
    const piped = async (args: string[]) => {
      // `session-sidecar ... | cat`: stdout a real pipe, stdin too
      const r = await runShell(`'${process.execPath}' '${CLI}' ${args.map((a) => `'${a}'`).join(' ')} | cat`);
      return r;
    };
    const prune = await piped(['prune', '--store', fx.root, '--older-than', '0s']);
    expect(prune.code, prune.stderr).toBe(1);
    expect(prune.stdout).toContain('would move 3 session(s)');
    expect(prune.stderr).toContain('nothing was moved: not a terminal; add --yes to go ahead');
    for (const id of [fx.chat, fx.compacted, fx.fork]) expect(fs.existsSync(journalPath(fx.root, id))).toBe(true);
    expect((await piped(['prune', '--yes', '--store', fx.root, '--older-than', '0s'])).code).toBe(0);
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(3);
    const restore = await piped(['trash', 'restore', fx.chat, fx.fork, '--store', fx.root]);
    expect(restore.code, restore.stderr).toBe(1);
    expect(restore.stderr).toContain('nothing was restored: not a terminal; add --yes');
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(3);
    const empty = await piped(['trash', 'empty', '--store', fx.root]);
    expect(empty.code, empty.stderr).toBe(1);
    expect(empty.stderr).toContain('nothing was removed: not a terminal; add --yes');
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(3);
    expect((await piped(['trash', 'empty', '--yes', '--store', fx.root])).code).toBe(0);
    expect(fs.readdirSync(path.join(fx.root, 'trash'))).toHaveLength(0);
  });

  it('--help, and usage errors exit 2 changing nothing', async () => {
    const fx = await makeStore();
    for (const cmd of ['prune', 'trash']) {
      const h = await runCli([cmd, '--help']);
      expect(h.code).toBe(0);
      expect(h.stdout).toContain(`Usage: session-sidecar ${cmd}`);
    }
    for (const args of [['prune'], ['prune', '--older-than', '0s', '--keep-last', 'x'], ['trash'], ['trash', 'burn'], ['trash', 'restore']]) {
      const r = await runCli([...args, '--store', fx.root]);
      expect(r.code, `${args.join(' ')}: ${explain(r)}`).toBe(2);
    }
    for (const args of [['prune', '--older-than', '3y'], ['trash', 'list', '--older-than', 'banana'], ['trash', 'empty', '--older-than', '7']]) {
      const bad = await runCli([...args, '--store', fx.root]);
      expect(bad.code, explain(bad)).toBe(2); // a usage error, naming the flag
      expect(bad.stderr).toContain('--older-than must be a duration');
    }
    expect(fs.existsSync(path.join(fx.root, 'trash'))).toBe(false);
  });

  it('trash empty after one killed past its commit point (trash/.purging-<id>/ left): finishes the leftover, then empties the rest (exit 0)', async () => {
    const fx = await makeStore();
    expect((await runCli(['prune', '--yes', '--store', fx.root, '--older-than', '0s', '--json'])).code).toBe(0);
    const trash = path.join(fx.root, 'trash');
    expect(fs.readdirSync(trash).sort()).toEqual([fx.chat, fx.compacted, fx.fork].sort());
    // The state a trash empty killed right after renaming trash/<id>/ to trash/.purging-<id>/ leaves.
    fs.renameSync(path.join(trash, fx.compacted), path.join(trash, `.purging-${fx.compacted}`));
    const list = await runCli(['trash', 'list', '--store', fx.root, '--json']);
    expect(list.code, explain(list)).toBe(0);
    expect(json<TrashOut>(list).map((e) => e.sessionId).sort()).toEqual([fx.chat, fx.fork].sort()); // gone for good: never listed
    const emptied = await runCli(['trash', 'empty', '--store', fx.root, '--yes', '--json']);
    expect(emptied.code, explain(emptied)).toBe(0);
    expect(json<{ sessions: TrashOut }>(emptied).sessions.map((e) => e.sessionId).sort()).toEqual([fx.chat, fx.fork].sort());
    expect(fs.readdirSync(trash)).toEqual([]);
  });
});

describe.skipIf(pgSkip)('prune and trash on a PostgreSQL store', () => {
  it('prune, trash list, restore and empty by URL (the password never printed)', async () => {
    const url = await pgUrl();
    const schema = freshSchema('cliprune');
    const fx = await makePgStore(url, schema);
    const store = ['--store', withPassword(url), '--pg-schema', schema];
    await new Promise((r) => setTimeout(r, 5));
    const r = await runCli(['prune', '--yes', ...store, '--older-than', '0s', '--keep-last', '1', '--json']);
    expect(r.code, explain(r)).toBe(0);
    const moved = json<PruneOut>(r).sessions.map((s) => s.sessionId);
    expect(moved.sort()).toEqual([fx.chat, fx.compacted].sort()); // runtime is the newest: kept
    const trashed = json<TrashOut>(await runCli(['trash', 'list', ...store, '--json'])).map((e) => e.sessionId);
    expect(trashed.sort()).toEqual([fx.chat, fx.compacted, fx.trashed].sort());
    expect((await runCli(['trash', 'restore', fx.chat, ...store])).code).toBe(0);
    const emptied = await runCli(['trash', 'empty', ...store, '--yes']);
    expect(emptied.code, explain(emptied)).toBe(0);
    for (const out of [r, emptied]) expect(out.stdout + out.stderr).not.toContain(PASSWORD);
    const s = await pgStore(url, schema);
    try {
      expect((await s.list()).sessions.map((x) => x.sessionId).sort()).toEqual([fx.chat, fx.runtime].sort());
      expect(await s.listTrash()).toEqual([]);
    } finally {
      await s.closeAll();
    }
  });
});
