import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let snapshot: string | undefined;

/**
 * How to spawn the built binary. The torture spawns hundreds of processes over minutes while
 * other work may rebuild dist/ in the same tree, so it runs a private copy of dist/ (with
 * package.json, and node_modules linked), made once per process and checked by loading it
 * (`--version` imports the whole server); a copy caught mid-rebuild is made again.
 */
export function sidecarCommand(extraArgs: string[] = []): { command: string; args: string[] } {
  if (snapshot === undefined) {
    let lastError: unknown;
    for (let attempt = 0; attempt < 10 && snapshot === undefined; attempt++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torture-dist-'));
      try {
        fs.cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
        fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
        fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
        execFileSync(process.execPath, [path.join(dir, 'dist/src/cli.js'), '--version'], { stdio: 'pipe', timeout: 30_000 });
        snapshot = dir;
        process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
      } catch (err) {
        lastError = err;
        fs.rmSync(dir, { recursive: true, force: true });
        execFileSync('sleep', ['1']);
      }
    }
    if (snapshot === undefined) throw new Error(`cannot load a copy of dist/ (is it built?): ${(lastError as Error).message}`);
  }
  return { command: process.execPath, args: [path.join(snapshot, 'dist/src/cli.js'), ...extraArgs] };
}
