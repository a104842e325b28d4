import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { explain, hasPython311, run } from '../pythonRun.js';

/**
 * The Python client package (clients/python/): its stdlib unittest suite against the BUILT
 * sidecar in both framings, and its offline install (`pip install --no-build-isolation`) into
 * a fresh venv. Skipped with a printed reason when python3 >= 3.11 is missing, except under
 * CI=true, where a missing python3 fails.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLIENT = path.join(ROOT, 'clients/python');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const FRAMINGS = ['ndjson', 'lsp'] as const;
const CI = process.env.CI === 'true';

const hasPython = hasPython311();
const skip = !hasPython && !CI;
if (skip) console.warn('skipping test/clients/python.test.ts: python3 (>= 3.11) is not on PATH');

describe('clients/python', () => {
  it('python3 >= 3.11 is on PATH under CI', () => {
    if (CI) expect(hasPython, 'CI=true: python3 >= 3.11 must be installed').toBe(true);
    expect(fs.existsSync(CLI), 'run `npm run build` first').toBe(true);
  });

  describe.each(FRAMINGS)('unittest suite over %s', (framing) => {
    it.skipIf(skip)('passes against the built sidecar', async () => {
      const r = await run('python3', ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', 'tests'], {
        cwd: CLIENT, env: { SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}`, SIDECAR_TEST_FRAMING: framing },
      });
      expect(r.code, explain(r)).toBe(0);
      const ran = /^Ran (\d+) tests? in/m.exec(r.stderr);
      expect(ran, explain(r)).not.toBeNull();
      expect(Number(ran![1])).toBeGreaterThanOrEqual(30);
      expect(r.stderr).toMatch(/^OK/m);
      // Skipped tests (session/rewind not advertised by this build) say why.
      for (const line of r.stderr.split('\n').filter((l) => l.includes('skipped'))) console.warn(`clients/python (${framing}): ${line.trim()}`);
      expect(r.stderr).toContain('test_items_round_trip_byte_for_byte');
      expect(r.stderr).toContain('test_death_fails_every_pending_request');
    });
  });

  it.skipIf(skip)('installs offline into a venv with pip install --no-build-isolation', async () => {
    const venv = path.join(tempDir('sidecar-py-venv-'), 'venv');
    const made = await run('python3', ['-m', 'venv', '--system-site-packages', venv], { cwd: ROOT });
    expect(made.code, `python3 -m venv failed (Debian: apt-get install python3-venv)\n${explain(made)}`).toBe(0);
    const py = path.join(venv, 'bin/python');
    const pip = await run(py, ['-m', 'pip', 'install', '--no-build-isolation', '--no-index', '--no-cache-dir', CLIENT], { cwd: ROOT });
    expect(pip.code, explain(pip)).toBe(0);
    const check = [
      'import importlib.metadata as md, os, session_sidecar as s',
      'from session_sidecar import Sidecar, AsyncSidecar, SidecarSession, SidecarError, Conflict',
      `assert os.path.realpath(s.__file__).startswith(os.path.realpath(${JSON.stringify(venv)})), s.__file__`,
      'assert os.path.exists(os.path.join(os.path.dirname(s.__file__), "py.typed"))',
      'print(md.version("session-sidecar"), s.__version__)',
    ].join('\n');
    const r = await run(py, ['-c', check], { cwd: venv }); // not the source tree: the installed copy
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout.trim()).toBe('0.1.0 0.1.0');
  });
});
