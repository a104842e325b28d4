import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli } from './helpers.js';
import { cliLine, inPty } from './pty.js';

/**
 * Issue 31, finding 5, over the built binary in a pseudo-terminal (script): a long rekey draws
 * "N of M sessions, rate, ETA" on the terminal; Ctrl-C (a real SIGINT from the terminal's
 * line discipline) stops it between sessions with a summary of what was done and how to go
 * on, exit 130, no lease left behind (no locks/<id>.lock directory); the same command run
 * again finishes it, and the store verifies clean under the new key with its index entries.
 * Off a terminal (a pipe) no progress is drawn, only the summary line. The same for verify,
 * prune, trash empty, reindex, export, migrate and backup (an interrupted backup keeps nothing: no DIR, no
 * DIR.incomplete).
 */
const SESSIONS = 900;
const KEY = Buffer.alloc(32, 7).toString('base64');

async function storeOf(n: number): Promise<string> {
  const root = path.join(tempDir('sidecar-progress-'), 'store');
  const s = new FileSessionStore(root);
  for (let i = 0; i < n; i++) {
    const { sessionId } = await s.create({ title: `s${i}` });
    await s.append(sessionId, [msg('user', `hello ${i}`)]);
    await s.close(sessionId);
  }
  await s.closeAll();
  return root;
}

const leaseDirs = (root: string) => fs.readdirSync(path.join(root, 'locks')).filter((n) => n.endsWith('.lock'));

describe('progress and Ctrl-C of a long command (the built binary, in a pty)', () => {
  it('rekey shows N of M with a rate and ETA; Ctrl-C stops it with a summary, exit 130, no lease left; a rerun finishes it', async () => {
    const root = await storeOf(SESSIONS);
    const r = await inPty(cliLine(['rekey', '--store', root, '--to-env', 'K', '--yes']), { env: { K: KEY }, ready: `of ${SESSIONS} sessions`, keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(new RegExp(`rekey: rewriting \\d+ of ${SESSIONS} sessions \\(\\d+%\\), [-\\d.]+/s, ETA `));
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(new RegExp(`session-sidecar rekey: interrupted while rewriting: \\d+ of ${SESSIONS} sessions done \\([\\d.ms ]+\\); run the same command again`));
    expect(leaseDirs(root)).toEqual([]);
    // interrupted: sidecars refuse the store until the rekey is finished
    const refused = await runCli(['list', '--store', root, '--encryption-key-env', 'K'], { env: { K: KEY } });
    expect(refused.code, explain(refused)).not.toBe(0);

    const again = await runCli(['rekey', '--store', root, '--to-env', 'K', '--yes'], { env: { K: KEY } });
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout).toMatch(/already done/);
    expect(again.stderr).not.toMatch(/\u001b\[2K/); // a pipe: no progress drawn
    expect(again.stderr).toMatch(new RegExp(`session-sidecar rekey: ${SESSIONS} session\\(s\\) encrypted \\(`));
    expect(leaseDirs(root)).toEqual([]);
    const v = await runCli(['verify', '--store', root, '--encryption-key-env', 'K', '--json', '--strict'], { env: { K: KEY } });
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).not.toMatch(/no index entry/);
  }, 180_000);

  it('verify draws N of M; prune --yes, interrupted, shows what it moved and exits 130; its rerun moves the rest', async () => {
    const root = await storeOf(SESSIONS);
    const v = await inPty(cliLine(['verify', '--store', root]));
    expect(v.code, v.output).toBe(0);
    expect(v.output.replace(/\r/g, '\n')).toMatch(new RegExp(`verify: verifying \\d+ of ${SESSIONS} sessions`));
    await new Promise((r) => setTimeout(r, 1100));
    const r = await inPty(cliLine(['prune', '--store', root, '--older-than', '1s', '--yes']), { ready: 'sessions looked at', keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(r.code, r.output).toBe(130);
    const moved = Number(/moved (\d+) session\(s\) to the trash/.exec(shown)?.[1]);
    expect(moved, r.output).toBeGreaterThan(0);
    expect(moved).toBeLessThan(SESSIONS);
    expect(shown).toMatch(/session-sidecar prune: interrupted while moving: \d+ sessions looked at \(.*\); run the same command again to move the rest/);
    expect(leaseDirs(root)).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'trash')).length).toBe(moved);
    const again = await runCli(['prune', '--store', root, '--older-than', '1s', '--yes', '--json']);
    expect(again.code, explain(again)).toBe(0);
    expect((JSON.parse(again.stdout) as { sessions: unknown[] }).sessions.length).toBe(SESSIONS - moved);
    expect(fs.readdirSync(path.join(root, 'sessions')).length).toBe(0);
  }, 180_000);

  it('export of a large session into a file draws N of M records on the terminal, and the file holds every record', async () => {
    const root = path.join(tempDir('sidecar-progress-'), 'store');
    const s = new FileSessionStore(root);
    const { sessionId } = await s.create({ title: 'big' });
    for (let b = 0; b < 30; b++) await s.append(sessionId, Array.from({ length: 200 }, (_, k) => msg('user', `${b}.${k} ${'x'.repeat(200)}`)));
    await s.closeAll();
    const file = path.join(tempDir('sidecar-progress-'), 'out.jsonl');
    const r = await inPty(`${cliLine(['export', sessionId, '--store', root, '--format', 'jsonl'])} > ${file}`);
    expect(r.code, r.output).toBe(0);
    expect(r.output.replace(/\r/g, '\n')).toMatch(/export: exporting \d+ of 6000 records/);
    expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(6000);
  }, 120_000);

  it('migrate into a directory shows N of M; Ctrl-C stops between sessions (exit 130); the rerun copies the rest and the copy has its index entries', async () => {
    const root = await storeOf(300);
    const to = path.join(tempDir('sidecar-progress-'), 'copy');
    const r = await inPty(cliLine(['migrate', '--from', root, '--to', to]), { ready: 'of 300 sessions', keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(/migrate: copying \d+ of 300 sessions \(\d+%\)/);
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(/session-sidecar migrate: interrupted while copying: \d+ of 300 sessions done .*run the same command again \(with --yes\)/);
    const copied = fs.readdirSync(path.join(to, 'sessions')).length;
    expect(copied).toBeLessThan(300);
    const again = await runCli(['migrate', '--from', root, '--to', to, '--yes']);
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`${300 - copied} sessions? copied .*, ${copied} already there, 0 refused`));
    const v = await runCli(['verify', '--store', to, '--json', '--strict']);
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).not.toMatch(/no index entry/);
  }, 180_000);

  it('backup shows N of M; Ctrl-C stops it between sessions (exit 130) and keeps nothing, neither DIR nor DIR.incomplete; the rerun makes a verified copy', async () => {
    const root = await storeOf(SESSIONS);
    const to = path.join(tempDir('sidecar-progress-'), 'backup');
    const r = await inPty(cliLine(['backup', '--store', root, '--to', to]), { ready: `of ${SESSIONS} sessions`, keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(new RegExp(`backup: copying \\d+ of ${SESSIONS} sessions \\(\\d+%\\)`));
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(/session-sidecar backup: interrupted while copying: \d+ of \d+ sessions done .*nothing was kept; run 'session-sidecar backup --to .*' again/);
    expect(fs.existsSync(to)).toBe(false);
    expect(fs.existsSync(`${to}.incomplete`)).toBe(false);
    expect(leaseDirs(root)).toEqual([]);
    const again = await runCli(['backup', '--store', root, '--to', to]);
    expect(again.code, explain(again)).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`${SESSIONS} session\\(s\\) copied to .*verified`));
    expect(fs.readdirSync(path.join(to, 'sessions')).length).toBe(SESSIONS);
    const v = await runCli(['verify', '--store', to, '--json', '--strict']);
    expect(v.code, explain(v)).toBe(0);
  }, 180_000);

  it('trash empty --yes shows N of M; Ctrl-C stops it between sessions (exit 130), reporting what it removed; the rest stays in the trash and the rerun removes it', async () => {
    const root = await storeOf(SESSIONS);
    const pruned = await runCli(['prune', '--store', root, '--keep-last', '0', '--older-than', '0s', '--yes', '--json']);
    expect(pruned.code, explain(pruned)).toBe(0);
    expect(fs.readdirSync(path.join(root, 'trash')).length).toBe(SESSIONS);
    const r = await inPty(cliLine(['trash', 'empty', '--store', root, '--yes']), { ready: `of ${SESSIONS} sessions`, keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(new RegExp(`trash empty: removing \\d+ of ${SESSIONS} sessions \\(\\d+%\\)`));
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(/session-sidecar trash empty: interrupted while removing: \d+ of \d+ sessions done .*run the same command again to remove the rest/);
    const left = fs.readdirSync(path.join(root, 'trash')).length;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(SESSIONS);
    expect(shown).toMatch(new RegExp(`removed for good`));
    expect(leaseDirs(root)).toEqual([]);
    const again = await runCli(['trash', 'empty', '--store', root, '--yes', '--json']);
    expect(again.code, explain(again)).toBe(0);
    expect((JSON.parse(again.stdout) as { sessions: unknown[] }).sessions.length).toBe(left);
    expect(fs.readdirSync(path.join(root, 'trash')).length).toBe(0);
  }, 180_000);

  it('reindex shows N of M; Ctrl-C stops it between sessions (exit 130); the rerun writes every entry', async () => {
    const root = await storeOf(SESSIONS);
    fs.rmSync(path.join(root, 'index'), { recursive: true, force: true });
    const r = await inPty(cliLine(['reindex', '--store', root]), { ready: `of ${SESSIONS} sessions`, keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(new RegExp(`reindex: indexing \\d+ of ${SESSIONS} sessions \\(\\d+%\\)`));
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(/session-sidecar reindex: interrupted while indexing: \d+ of \d+ sessions done .*run 'session-sidecar reindex' again to finish/);
    expect(leaseDirs(root)).toEqual([]);
    const again = await runCli(['reindex', '--store', root]);
    expect(again.code, explain(again)).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`${SESSIONS} of ${SESSIONS} index entries written`));
    const v = await runCli(['verify', '--store', root, '--json', '--strict']);
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).not.toMatch(/no index entry/);
  }, 180_000);
});

