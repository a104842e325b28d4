import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { explain, makeStore, runCli } from './helpers.js';

/**
 * Nothing destructive happens unasked (issue 31, finding 1): off a terminal (here stdin and
 * stdout are pipes), rekey and a migrate into a store that already holds sessions do nothing
 * without --yes, exit 1 and say so naming --yes; rekey decrypts only with --decrypt. (prune,
 * trash empty and trash restore: retention.test.ts, through a real pipe and in a pty.)
 */
const KEY = Buffer.alloc(32, 7).toString('base64');
const tree = (root: string) => fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => [path.join(e.parentPath, e.name), fs.readFileSync(path.join(e.parentPath, e.name)).toString('base64')]);

describe('destructive commands need --yes off a terminal', () => {
  it('rekey: without --yes nothing is rewritten (exit 1, naming --yes); without a new key it needs --decrypt (usage, exit 2)', async () => {
    const fx = await makeStore();
    const before = tree(fx.root);
    const env = { K: KEY };
    const refused = await runCli(['rekey', '--store', fx.root, '--to-env', 'K'], { env });
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stderr).toContain('rekey: nothing was changed: not a terminal; add --yes to go ahead');
    expect(tree(fx.root)).toEqual(before);
    expect((await runCli(['rekey', '--yes', '--store', fx.root, '--to-env', 'K'], { env })).code).toBe(0);
    const encrypted = tree(fx.root);
    const noDecrypt = await runCli(['rekey', '--yes', '--store', fx.root, '--from-env', 'K'], { env });
    expect(noDecrypt.code, explain(noDecrypt)).toBe(2);
    expect(noDecrypt.stderr).toContain('--decrypt');
    expect(tree(fx.root)).toEqual(encrypted);
    const both = await runCli(['rekey', '--yes', '--store', fx.root, '--from-env', 'K', '--to-env', 'K', '--decrypt'], { env });
    expect(both.code).toBe(2);
    const decrypted = await runCli(['rekey', '--yes', '--store', fx.root, '--from-env', 'K', '--decrypt'], { env });
    expect(decrypted.code, explain(decrypted)).toBe(0);
    expect(decrypted.stdout).toContain('decrypted');
  });

  it('migrate into a store that already holds sessions: nothing copied without --yes (exit 1); into an empty one it just copies', async () => {
    const fx = await makeStore();
    const to = path.join(tempDir(), 'copy');
    const first = await runCli(['migrate', '--from', fx.root, '--to', to]);
    expect(first.code, explain(first)).toBe(0);
    const other = await makeStore();
    const before = tree(to);
    const refused = await runCli(['migrate', '--from', other.root, '--to', to]);
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stderr).toMatch(/nothing was copied into .* \(it holds \d+ session\(s\)\): not a terminal; add --yes to go ahead/);
    expect(tree(to)).toEqual(before);
    expect((await runCli(['migrate', '--yes', '--from', other.root, '--to', to])).code).toBe(0);
    expect(tree(to).length).toBeGreaterThan(before.length);
  });
});
