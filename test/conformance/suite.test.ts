import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI } from './harness.js';

const PROXY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'broken', 'proxy.mjs');
const SERVER = ['node', CLI, 'serve', '--store', '{store}'];

/** Runs `session-sidecar conformance` (the built binary) and collects its output. */
function conformance(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('node', [CLI, 'conformance', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const broken = (fault: string) => ['node', PROXY, fault, ...SERVER];
const failing = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('FAIL')).map((l) => l.split(/\s+/)[2]);

describe('session-sidecar conformance', () => {
  it.each(['ndjson', 'lsp'])('passes against the sidecar over %s, one line a check, a closing count', async (framing) => {
    const json = path.join(tempDir(), 'results.json');
    const r = await conformance(['--framing', framing, '--json', json, '--', ...SERVER]);
    expect(failing(r.stdout)).toEqual([]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const summary = /^(\d+) passed, 0 failed$/.exec(lines.at(-1)!);
    expect(summary).not.toBeNull();
    expect(lines.slice(0, -1).every((l) => l.startsWith(`PASS  ${framing} `))).toBe(true);
    const results = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(results).toMatchObject({ passed: Number(summary![1]), failed: 0, framings: [framing] });
    // every scenario ran, and each has its wire-schema check
    const list = await conformance(['--list']);
    const names = list.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0]);
    expect(names.length).toBeGreaterThanOrEqual(13);
    for (const n of names) expect(results.results).toContainEqual(expect.objectContaining({ scenario: n, check: 'wire-schema', status: 'pass' }));
  }, 240_000);

  it.each([
    ['drop-ts', 'records', ['records:wire-schema']],
    ['answer-notifications', 'lifecycle', ['lifecycle:unknown-notification-ignored']],
    ['wrong-code', 'sessions', ['sessions:SessionNotFound', 'sessions:wire-schema']],
  ])('fails against a server that breaks one behaviour (%s), naming the check', async (fault, scenario, checks) => {
    const r = await conformance(['--framing', 'ndjson', '--scenario', scenario, '--', ...broken(fault)]);
    expect(r.code).toBe(1);
    for (const c of checks) expect(failing(r.stdout)).toContain(c);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, [1-9]\d* failed$/);
  }, 120_000);

  it('expected failures: listed failures pass the run; a listed check that passes fails it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'expected.txt');
    fs.writeFileSync(file, '# known\nsessions:SessionNotFound\nsessions:wire-schema\n');
    const ok = await conformance(['--framing', 'ndjson', '--scenario', 'sessions', '--expected-failures', file, '--', ...broken('wrong-code')]);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed \(2 expected failures\)$/);
    const stale = await conformance(['--framing', 'ndjson', '--scenario', 'sessions', '--expected-failures', file, '--', ...SERVER]);
    expect(stale.code).toBe(1);
    expect(failing(stale.stdout)).toEqual(['sessions:SessionNotFound', 'sessions:wire-schema']);
  }, 120_000);

  it('usage: --help, no server command, an unknown scenario', async () => {
    const help = await conformance(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: session-sidecar conformance');
    const none = await conformance([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('give the server command after --');
    const unknown = await conformance(['--scenario', 'nope', '--', 'true']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
  });
});
