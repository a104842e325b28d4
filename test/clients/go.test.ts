import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The Go client module (clients/go/): `go vet ./...`, gofmt, and its `go test ./...` against
 * the BUILT sidecar (SESSION_SIDECAR_COMMAND = node dist/src/cli.js), which runs every method
 * in both framings, a SIGKILL mid-pipeline, two clients on one store and the notifications.
 * Standard library only, so nothing is downloaded (GOTOOLCHAIN=local: no toolchain either).
 * Skipped with a printed reason when `go` is missing, except under CI=true, where a
 * missing `go` fails.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODULE = path.join(ROOT, 'clients/go');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const CI = process.env.CI === 'true';
const TEN_MINUTES = 10 * 60_000;

/** `go` on PATH, else where the official distribution installs it. */
function findGo(): string | undefined {
  for (const candidate of ['go', '/usr/local/go/bin/go']) {
    const r = spawnSync(candidate, ['version'], { encoding: 'utf8' });
    if (!r.error && r.status === 0) return candidate;
  }
  return undefined;
}

const GO = findGo();
const skip = GO === undefined && !CI;
if (skip) console.warn('skipping test/clients/go.test.ts: go is not on PATH (nor /usr/local/go/bin/go)');

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Go needs a build cache and a GOPATH; without HOME (a bare CI environment) they go to the temp dir. */
function goDirs(): Record<string, string> {
  if (process.env.HOME || process.env.GOCACHE) return {};
  return { GOCACHE: path.join(os.tmpdir(), 'session-sidecar-go-cache'), GOPATH: path.join(os.tmpdir(), 'session-sidecar-gopath') };
}

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: MODULE,
      env: { ...process.env, ...goDirs(), GOTOOLCHAIN: 'local', GOFLAGS: '', SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const explain = (r: Run) => `exit ${r.code} (signal ${r.signal})\n--- stdout\n${r.stdout.slice(-20_000)}\n--- stderr\n${r.stderr.slice(-20_000)}`;

describe('clients/go', () => {
  it('go is installed under CI, and the sidecar is built', () => {
    if (CI) expect(GO, 'CI=true: go must be installed (.ci/run)').toBeDefined();
    expect(fs.existsSync(CLI), 'run `npm run build` first').toBe(true);
  });

  it.skipIf(skip)('go vet ./... and gofmt are clean', async () => {
    const vet = await run(GO!, ['vet', './...']);
    expect(vet.code, explain(vet)).toBe(0);
    const goroot = (await run(GO!, ['env', 'GOROOT'])).stdout.trim();
    const fmt = await run(path.join(goroot, 'bin', 'gofmt'), ['-l', '.']);
    expect(fmt.code, explain(fmt)).toBe(0);
    expect(fmt.stdout.trim(), 'files gofmt would change').toBe('');
  }, TEN_MINUTES);

  it.skipIf(skip)('go test ./... passes against the built sidecar', async () => {
    const r = await run(GO!, ['test', '-count=1', '-v', './...']);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+github\.com\/session-sidecar\/session-sidecar\/clients\/go\s/m);
    expect(r.stdout).not.toMatch(/--- (SKIP|FAIL)/);
    for (const name of [
      'TestGeneratedFilesAreCurrent', 'TestMethodsMatchMeta', 'TestErrorKindsMatchMeta',
      'TestEveryMethod/ndjson', 'TestEveryMethod/lsp', 'TestSigkillMidPipeline/ndjson', 'TestSigkillMidPipeline/lsp',
      'TestTwoClientsOneStore/ndjson', 'TestTwoClientsOneStore/lsp', 'TestNotifications/lsp', 'TestNotificationBufferOverflow/ndjson',
      'TestCancelPipelinedAppends/ndjson', 'TestTypedErrorsFromTheServer/lsp', 'TestCloseKillsAfterTimeout',
    ]) expect(r.stdout, `${name} did not pass`).toContain(`--- PASS: ${name} `);
  }, TEN_MINUTES);
});
