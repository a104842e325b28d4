import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 31, finding 2, over the built binary: a `cp -a` copy of a store (every journal on a new
 * inode) lists from its index as the original does — measured as the bytes the `list` process
 * read (rchar in /proc/self/io, taken at its exit by a preloaded probe), against the same copy
 * without its index (a scan of every journal) — and `verify` of the copy warns of no index entry.
 * Before index entries carried a head (identity.ts), the copy read every journal on every list
 * and verify warned once per session.
 */
const SESSIONS = 24;
const NOTE = 'n'.repeat(2000);

async function storeOfBigJournals(): Promise<{ root: string; journalBytes: number }> {
  const root = path.join(tempDir('sidecar-copyindex-'), 'store');
  const s = new FileSessionStore(root);
  for (let i = 0; i < SESSIONS; i++) {
    const { sessionId } = await s.create({ title: `session ${i}` });
    await s.append(sessionId, Array.from({ length: 60 }, (_, j) => msg(j % 2 ? 'assistant' : 'user', `${j} ${NOTE}`)));
  }
  await s.closeAll();
  let journalBytes = 0;
  for (const id of fs.readdirSync(path.join(root, 'sessions'))) journalBytes += fs.statSync(path.join(root, 'sessions', id, 'journal.jsonl')).size;
  return { root, journalBytes };
}

/** `list --json` run on `root`, with the bytes its process read. */
async function listReading(root: string): Promise<{ sessions: unknown[]; bytesRead: number }> {
  const dir = tempDir('sidecar-probe-');
  const probe = path.join(dir, 'probe.mjs');
  const io = path.join(dir, 'io.txt');
  fs.writeFileSync(probe, `import fs from 'node:fs';\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(io)}, fs.readFileSync('/proc/self/io', 'utf8')));\n`);
  const r = await runCli(['list', '--json', '--store', root], { env: { NODE_OPTIONS: `--import=${probe}` } });
  expect(r.code, explain(r)).toBe(0);
  const rchar = /^rchar: (\d+)$/m.exec(fs.readFileSync(io, 'utf8'));
  return { sessions: JSON.parse(r.stdout) as unknown[], bytesRead: Number(rchar?.[1]) };
}

describe('a copied store keeps its index (the built binary)', () => {
  it('list of a cp -a copy reads what the original does, far less than a scan; verify of the copy warns of no index entry', async () => {
    const { root, journalBytes } = await storeOfBigJournals();
    expect(journalBytes).toBeGreaterThan(2_500_000);
    const copy = path.join(tempDir('sidecar-copyindex-'), 'copy');
    execFileSync('cp', ['-a', root, copy]);
    const scanned = path.join(tempDir('sidecar-copyindex-'), 'scanned');
    execFileSync('cp', ['-a', root, scanned]);
    fs.rmSync(path.join(scanned, 'index'), { recursive: true, force: true });

    const original = await listReading(root);
    const copied = await listReading(copy);
    const scan = await listReading(scanned);
    expect(copied.sessions).toEqual(original.sessions);
    expect(scan.sessions).toEqual(original.sessions);
    expect(original.sessions).toHaveLength(SESSIONS);
    // the same reads, give or take the process's own (modules, /proc): not one journal more
    expect(Math.abs(copied.bytesRead - original.bytesRead)).toBeLessThan(journalBytes / SESSIONS);
    expect(scan.bytesRead - original.bytesRead).toBeGreaterThan(journalBytes * 0.3); // a scan reads the journals (their records, for the summaries)

    const verify = await runCli(['verify', '--json', '--store', copy]);
    expect(verify.code, explain(verify)).toBe(0);
    expect(verify.stdout).not.toMatch(/no index entry|stale/i);
    const verifyScanned = await runCli(['verify', '--json', '--store', scanned]);
    expect(verifyScanned.stdout).toMatch(/no index entry/); // the probe of the check: a store without entries is reported
  }, 120_000);
});
