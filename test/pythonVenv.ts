import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { explain, run } from './pythonRun.js';

/**
 * A Python virtual environment with third-party packages from PyPI (the real agent SDKs:
 * openai-agents, langgraph, …), made once per requirement set and reused by later runs and by
 * concurrent test files: `$SESSION_SIDECAR_TEST_VENVS` (default ~/.cache/session-sidecar/venvs)
 * `/<name>-<digest of the requirements>`, finished by a `.ready` marker written last, created
 * under a lock so two test files never build it at once. The client package itself is NOT
 * installed: tests put clients/python/src on PYTHONPATH, so they always run the working tree.
 */
export interface Venv {
  /** The environment's python. */
  python: string;
  dir: string;
}

export async function pythonVenv(name: string, requirements: readonly string[]): Promise<Venv> {
  const digest = createHash('sha256').update(JSON.stringify([...requirements].sort())).digest('hex').slice(0, 12);
  const root = process.env.SESSION_SIDECAR_TEST_VENVS ?? path.join(os.homedir(), '.cache', 'session-sidecar', 'venvs');
  fs.mkdirSync(root, { recursive: true });
  const dir = path.join(root, `${name}-${digest}`);
  const venv = { python: path.join(dir, 'bin', 'python'), dir };
  const ready = path.join(dir, '.ready');
  if (fs.existsSync(ready)) return venv;
  const release = await lockfile.lock(root, { lockfilePath: path.join(root, `${name}-${digest}.lock`), retries: { retries: 600, minTimeout: 1000, maxTimeout: 1000 }, stale: 15 * 60_000 });
  try {
    if (fs.existsSync(ready)) return venv;
    fs.rmSync(dir, { recursive: true, force: true });
    const steps: Array<[string, string[]]> = [
      ['python3', ['-m', 'venv', dir]],
      [venv.python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...requirements]],
    ];
    for (const [cmd, args] of steps) {
      const r = await run(cmd, args, { cwd: root });
      if (r.code !== 0) throw new Error(`creating the ${name} venv failed: ${cmd} ${args.join(' ')}\n${explain(r)}`);
    }
    fs.writeFileSync(ready, `${requirements.join('\n')}\n`);
    return venv;
  } finally {
    await release();
  }
}
