import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { explain, hasPython311, run } from '../pythonRun.js';

/** The Python example client and demo (examples/python/), run against the BUILT sidecar. */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLES = path.join(ROOT, 'examples/python');
const FRAMINGS = ['ndjson', 'lsp'] as const;

const hasPython = hasPython311();
const runPython = (args: string[]) => run('python3', args, { cwd: ROOT });
if (!hasPython) console.warn('skipping test/examples/python.test.ts: python3 (>= 3.11) is not on PATH');

describe('examples/python', () => {
  it('the built sidecar exists', () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/src/cli.js')), 'run `npm run build` first').toBe(true);
  });

  describe.each(FRAMINGS)('over %s', (framing) => {
    it.skipIf(!hasPython)('demo.py writes, survives SIGKILL, recovers and verifies', async () => {
      const store = tempDir('sidecar-py-demo-');
      const r = await runPython([path.join(EXAMPLES, 'demo.py'), '--store', store, '--framing', framing]);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toContain(`Spawning the sidecar on store ${store} (framing: ${framing})`);
      expect(r.stdout).toContain('Acknowledged seqs: [1, 2, 3, 4]');
      expect(r.stdout).toMatch(/Killing the sidecar .* with SIGKILL/);
      expect(r.stdout).toMatch(/Recovery: opening session \S+ for writing/);
      expect(r.stdout).toContain('lastSeq = 4');
      expect(r.stdout).toContain('OK: all 4 acknowledged records survived the SIGKILL');
      expect(r.stdout).toContain('The sidecar exited with code 0.');
    });

    it.skipIf(!hasPython)('selftest.py: create / append / read / list / open and typed errors', async () => {
      const store = tempDir('sidecar-py-selftest-');
      const r = await runPython([path.join(EXAMPLES, 'selftest.py'), '--store', store, '--framing', framing]);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toContain("appending to session id '../bad' raises InvalidSessionId");
      expect(r.stdout).toContain('an expected_last_seq mismatch raises Conflict');
      expect(r.stdout).toContain(`selftest ok (${framing})`);
      expect(r.stdout).not.toContain('not ok');
    });
  });

  it.skipIf(!hasPython)('maps JSON-RPC error objects to typed exceptions (python3 -c)', async () => {
    const snippet = [
      'import sys',
      `sys.path.insert(0, ${JSON.stringify(EXAMPLES)})`,
      'import session_sidecar as s',
      'e = s.error_from_response({"code": -31002, "message": "bad id", "data": {"kind": "InvalidSessionId"}})',
      'assert type(e) is s.InvalidSessionId and isinstance(e, s.SidecarError) and e.kind == "InvalidSessionId", repr(e)',
      'e = s.error_from_response({"code": -31003, "message": "m", "data": {"kind": "Conflict", "lastSeq": 2}})',
      'assert type(e) is s.Conflict and e.code == -31003 and e.message == "m" and e.data["lastSeq"] == 2, repr(e)',
      'e = s.error_from_response({"code": -31050, "message": "m", "data": {"kind": "FutureKind"}})',
      'assert type(e) is s.SidecarError and e.kind == "FutureKind", repr(e)',
      'print("mapped")',
    ].join('\n');
    const r = await runPython(['-c', snippet]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout.trim()).toBe('mapped');
  });
});
