import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 31, finding 2: `session-sidecar backup --to DIR` (the built binary) of a live store — a
 * real sidecar appending to several sessions all the while — makes copies that verify clean
 * (strict: no warning either), whose every journal is a byte prefix of the original's once the
 * writer has stopped (a point in time per session, never a torn or foreign batch), and which
 * list from their copied index entries. It refuses destinations it must not touch and clears
 * only its own unfinished work.
 */

type Report = { ok: boolean; totals: { warnings: number; errors: number } };

function journals(root: string): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const id of fs.readdirSync(path.join(root, 'sessions'))) m.set(id, fs.readFileSync(path.join(root, 'sessions', id, 'journal.jsonl')));
  return m;
}

describe('backup of a live store (the built binary)', () => {
  it('three backups while a sidecar appends: each verifies clean, each journal a prefix of the original, listed from its index', async () => {
    const dir = tempDir('sidecar-backup-');
    const root = path.join(dir, 'store');
    const c = await startSidecar({ store: root });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { sessionId } = await c.create({ title: `live ${i}` });
      await c.request('session/append', { sessionId, records: Array.from({ length: 30 }, (_, k) => msg('user', `before ${k} ${'x'.repeat(200)}`)) });
      ids.push(sessionId);
    }
    let stop = false;
    let rounds = 0;
    const loop = async (id: string) => {
      for (let i = 0; !stop; i++) {
        await c.request('session/append', { sessionId: id, records: [msg('user', `round ${i}`), msg('assistant', `${'answer '.repeat(80)}${i}`)] });
        rounds = Math.max(rounds, i + 1);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const writer = Promise.all(ids.map(loop));
    const copies: string[] = [];
    try {
      while (rounds < 2) await new Promise((r) => setTimeout(r, 10));
      for (let n = 0; n < 3; n++) {
        const to = path.join(dir, `backup-${n}`);
        const r = await runCli(['backup', '--store', root, '--to', to, '--json']);
        expect(r.code, explain(r)).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ to, sessions: ids.length });
        expect(r.stderr).toMatch(/4 session\(s\) copied to .*verified/);
        expect(fs.existsSync(`${to}.incomplete`)).toBe(false);
        copies.push(to);
      }
    } finally {
      stop = true;
      await writer;
    }
    const roundsAtEnd = rounds;
    await c.shutdown();
    const original = journals(root);
    for (const copy of copies) {
      const v = await runCli(['verify', '--store', copy, '--json', '--strict']);
      expect(v.code, explain(v)).toBe(0);
      const report = JSON.parse(v.stdout) as Report;
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      const copied = journals(copy);
      expect([...copied.keys()].sort()).toEqual([...original.keys()].sort());
      for (const [id, bytes] of copied) {
        const whole = original.get(id) as Buffer;
        expect(bytes.length).toBeGreaterThan(0);
        expect(bytes.length).toBeLessThanOrEqual(whole.length);
        expect(whole.subarray(0, bytes.length).equals(bytes), `${copy}: ${id} is a prefix of the original`).toBe(true);
      }
      expect(fs.readdirSync(path.join(copy, 'index')).length).toBe(ids.length); // the entries came along
      expect(fs.statSync(copy).mode & 0o777).toBe(0o700);
      for (const id of ids) expect(fs.statSync(path.join(copy, 'sessions', id, 'journal.jsonl')).mode & 0o777).toBe(0o600);
      const list = await runCli(['list', '--store', copy, '--json', 'sessionId,title']);
      expect(list.code, explain(list)).toBe(0);
      expect((JSON.parse(list.stdout) as Array<{ sessionId: string }>).map((s) => s.sessionId).sort()).toEqual([...ids].sort());
    }
    // the last copy was taken while the writer ran: it has less than the end, but more than the start
    expect(roundsAtEnd).toBeGreaterThan(2);
  }, 120_000);

  it('refuses a destination inside the store, a non-empty one, or none; clears its own unfinished copy and nothing else', async () => {
    const dir = tempDir('sidecar-backup-');
    const root = path.join(dir, 'store');
    const c = await startSidecar({ store: root });
    const { sessionId } = await c.create({ title: 'one' });
    await c.request('session/append', { sessionId, records: [msg('user', 'hello')] });
    await c.shutdown();

    const inside = await runCli(['backup', '--store', root, '--to', path.join(root, 'copy')]);
    expect(inside.code, explain(inside)).toBe(1);
    expect(inside.stderr).toMatch(/inside the store/);
    expect(fs.existsSync(path.join(root, 'copy'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'copy.incomplete'))).toBe(false);

    const busy = path.join(dir, 'busy');
    fs.mkdirSync(busy);
    fs.writeFileSync(path.join(busy, 'keep.txt'), 'mine');
    const full = await runCli(['backup', '--store', root, '--to', busy]);
    expect(full.code, explain(full)).toBe(1);
    expect(full.stderr).toMatch(/not an empty directory/);
    expect(fs.readdirSync(busy)).toEqual(['keep.txt']);

    const none = await runCli(['backup', '--store', root]);
    expect(none.code, explain(none)).toBe(1);
    expect(none.stderr).toMatch(/needs --to DIR/);

    // An unfinished copy of an earlier run (its marker inside) is cleared; the backup then lands.
    const to = path.join(dir, 'bak');
    fs.mkdirSync(`${to}.incomplete`);
    fs.writeFileSync(path.join(`${to}.incomplete`, 'BACKUP-INCOMPLETE'), 'x');
    fs.mkdirSync(path.join(`${to}.incomplete`, 'sessions'));
    const again = await runCli(['backup', '--store', root, '--to', to]);
    expect(again.code, explain(again)).toBe(0);
    expect(fs.existsSync(`${to}.incomplete`)).toBe(false);
    expect(fs.existsSync(path.join(to, 'BACKUP-INCOMPLETE'))).toBe(false);
    expect(fs.readdirSync(path.join(to, 'sessions'))).toEqual([sessionId]);

    // Something else at DIR.incomplete is never removed.
    const other = path.join(dir, 'other');
    fs.mkdirSync(`${other}.incomplete`);
    fs.writeFileSync(path.join(`${other}.incomplete`, 'notes.txt'), 'not a backup');
    const refused = await runCli(['backup', '--store', root, '--to', other]);
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stderr).toMatch(/not an unfinished backup/);
    expect(fs.readdirSync(`${other}.incomplete`)).toEqual(['notes.txt']);
    expect(fs.existsSync(other)).toBe(false);
  }, 60_000);
});
