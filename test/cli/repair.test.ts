import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 31, finding 3, over the built binary: `repair SESSION` of a journal damaged in its middle
 * (two lines altered: the end of one batch and the start of the next) refuses off a terminal
 * without --yes (nothing changes), then with --yes keeps the damaged journal byte for byte under
 * recovery/, writes a journal that verifies clean (strict) with every intact line byte for byte,
 * a repair event at each lost seq and one at the end naming the damaged span, and a sidecar
 * opens and appends to it. A session open in a sidecar is refused. Plain and encrypted stores.
 */
const KEY = Buffer.alloc(32, 9).toString('base64');

async function damagedSession(encrypted: boolean): Promise<{ root: string; id: string; journal: string; original: Buffer; intact: Buffer[]; keyArgs: string[] }> {
  const root = path.join(tempDir('sidecar-repair-'), 'store');
  const s = new FileSessionStore(root);
  const { sessionId: id } = await s.create({ title: 'to repair' });
  for (let b = 0; b < 4; b++) await s.append(id, [1, 2, 3].map((k) => msg('user', `batch ${b} record ${k}`)));
  await s.append(id, [msg('assistant', 'the last one')]);
  await s.closeAll();
  const keyArgs = encrypted ? ['--encryption-key-env', 'K'] : [];
  if (encrypted) {
    const r = await runCli(['rekey', '--store', root, '--to-env', 'K', '--yes'], { env: { K: KEY } });
    expect(r.code, explain(r)).toBe(0);
  }
  const journal = path.join(root, 'sessions', id, 'journal.jsonl');
  const lines = fs.readFileSync(journal, 'utf8').split('\n');
  // lines[0] header; lines[1..3] batch 0; [4..6] batch 1; [7..9] batch 2: damage lines[6] and lines[7]
  for (const i of [6, 7]) {
    const l = lines[i] as string;
    const at = Math.floor(l.length / 2);
    lines[i] = `${l.slice(0, at)}${l[at] === 'Q' ? 'R' : 'Q'}${l.slice(at + 1)}`;
  }
  const intact = lines.filter((_, i) => i !== 0 && i !== 6 && i !== 7 && lines[i] !== '').map((l) => Buffer.from(l));
  fs.writeFileSync(journal, lines.join('\n'));
  return { root, id, journal, original: fs.readFileSync(journal), intact, keyArgs };
}

describe.each([false, true])('repair of a journal damaged in its middle (encrypted: %s)', (encrypted) => {
  const env = { K: KEY };
  it('refuses off a terminal without --yes; with it, the evidence kept, the journal verifies, every intact line kept, a sidecar appends', async () => {
    const { root, id, journal, original, intact, keyArgs } = await damagedSession(encrypted);
    const before = await runCli(['verify', '--store', root, ...keyArgs], { env });
    expect(before.code, explain(before)).toBe(1);

    const refused = await runCli(['repair', id.slice(0, 10), '--store', root, ...keyArgs], { env });
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stderr).toMatch(/damaged: lines 7-8 of/);
    expect(refused.stderr).toMatch(/--yes/);
    expect(fs.readFileSync(journal).equals(original)).toBe(true);

    const r = await runCli(['repair', id, '--store', root, '--yes', '--json', ...keyArgs], { env });
    expect(r.code, explain(r)).toBe(0);
    const res = JSON.parse(r.stdout) as { repaired: boolean; kept: number; lostSeqs: number[]; evidence: string };
    expect(res).toMatchObject({ repaired: true, kept: 11, lostSeqs: [6, 7] });
    // the evidence: the damaged journal itself, mode 0600
    const evidence = path.join(root, res.evidence);
    expect(fs.readFileSync(evidence).equals(original)).toBe(true);
    expect(fs.statSync(evidence).mode & 0o777).toBe(0o600);
    expect(fs.statSync(journal).mode & 0o777).toBe(0o600);
    // every intact line, byte for byte, in order
    const now = fs.readFileSync(journal);
    let from = 0;
    for (const line of intact) {
      const at = now.indexOf(line, from);
      expect(at, `intact line ${line.toString().slice(0, 60)}…`).toBeGreaterThan(-1);
      from = at + line.length;
    }
    const v = await runCli(['verify', '--store', root, '--json', '--strict', ...keyArgs], { env });
    expect(v.code, explain(v)).toBe(0);
    expect(v.stdout).toMatch(/damaged journal/); // the evidence is noted

    const shown = await runCli(['show', id, '--store', root, '--raw', ...keyArgs], { env });
    expect(shown.code, explain(shown)).toBe(0);
    const records = shown.stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; kind: string; type?: string; payload?: Record<string, unknown>; message?: { content: string } });
    expect(records.map((x) => x.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect(records.filter((x) => x.kind === 'message').map((x) => x.message?.content)).toEqual([
      'batch 0 record 1', 'batch 0 record 2', 'batch 0 record 3', 'batch 1 record 1', 'batch 1 record 2',
      'batch 2 record 2', 'batch 2 record 3', 'batch 3 record 1', 'batch 3 record 2', 'batch 3 record 3', 'the last one',
    ]);
    expect(records[5]).toMatchObject({ kind: 'event', type: 'session-sidecar.repair', payload: { lost: 6 } });
    expect(records[13]).toMatchObject({ kind: 'event', type: 'session-sidecar.repair', payload: { removed: [{ lines: '7-8', reason: expect.any(String) }], lostSeqs: [6, 7], evidence: res.evidence } });

    const c = await startSidecar({ store: root, args: encrypted ? ['--encryption-key-env', 'K'] : [], env });
    try {
      await c.request('session/open', { sessionId: id, mode: 'write' });
      const { lastSeq } = await c.request<{ lastSeq: number }>('session/append', { sessionId: id, records: [msg('user', 'after the repair')] });
      expect(lastSeq).toBe(15);
    } finally {
      await c.shutdown();
    }
    const again = await runCli(['repair', id, '--store', root, '--yes', ...keyArgs], { env });
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout).toMatch(/nothing to repair/);
  }, 90_000);
});

describe('repair of a session a sidecar holds', () => {
  it('is refused (the writer lease), and nothing changes', async () => {
    const root = path.join(tempDir('sidecar-repair-'), 'store');
    const c = await startSidecar({ store: root });
    try {
      const { sessionId: id } = await c.create({ title: 'held' });
      for (let b = 0; b < 3; b++) await c.request('session/append', { sessionId: id, records: [msg('user', `record ${b}`)] });
      // damaged on disk under the sidecar that holds it open (it does not read it again)
      const journal = path.join(root, 'sessions', id, 'journal.jsonl');
      fs.writeFileSync(journal, fs.readFileSync(journal, 'utf8').replace('record 1', 'record X'));
      const original = fs.readFileSync(journal);
      const r = await runCli(['repair', id, '--store', root, '--yes']);
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toMatch(/open for writing|locked|held/i);
      expect(fs.readFileSync(journal).equals(original)).toBe(true);
      expect(fs.existsSync(path.join(root, 'recovery', id))).toBe(false);
    } finally {
      await c.kill('SIGKILL');
    }
  }, 60_000);
});
