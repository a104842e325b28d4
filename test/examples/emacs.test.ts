import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';

/**
 * examples/emacs/jsonrpc-smoke.el: Emacs's built-in jsonrpc.el (what Eglot uses) drives the BUILT
 * sidecar through initialize, create, append, read, shutdown (sent as `"params":null`) and exit.
 * Skipped (with the reason printed) where `emacs` is not on PATH.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(ROOT, 'examples/emacs/jsonrpc-smoke.el');
const CLI = path.join(ROOT, 'dist/src/cli.js');

const hasEmacs = spawnSync('emacs', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasEmacs) console.warn('skipping test/examples/emacs.test.ts: emacs is not on PATH');

describe.skipIf(!hasEmacs)('Emacs jsonrpc.el', () => {
  it('initialize → create → append → read → shutdown → exit, and the sidecar exits 0', async () => {
    const child = spawn('emacs', ['--batch', '-Q', '-l', SCRIPT, CLI, tempDir()], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(out).toContain('protocol 1 lastSeq 1 records 1');
    expect(out).toContain('exit-code 0');
    expect(code).toBe(0);
  }, 60_000);
});
