import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';

/**
 * examples/neovim/: the Lua client on Neovim's built-in vim.lsp.rpc, run headless against the
 * BUILT sidecar. Skipped (with the reason printed) where `nvim` is not on PATH.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HEADLESS = path.join(ROOT, 'examples/neovim/headless.lua');
const CLI = path.join(ROOT, 'dist/src/cli.js');

function nvimVersion(): string | undefined {
  const r = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  return /NVIM v(\S+)/.exec(r.stdout)?.[1];
}

const version = nvimVersion();
if (!version) console.warn('skipping test/examples/neovim.test.ts: nvim is not on PATH');

interface Run { code: number | null; stdout: string; stderr: string }

const running: Array<{ kill(): void }> = [];
afterEach(() => {
  for (const r of running.splice(0)) r.kill();
});

function runHeadless(env: Record<string, string>, script = HEADLESS): { done: Promise<Run>; stdout: () => string } {
  const child = spawn('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${script}`], {
    cwd: tempDir('sidecar-nvim-cwd-'),
    env: { ...process.env, SIDECAR_CMD: JSON.stringify([process.execPath, CLI]), SIDECAR_TIMEOUT_MS: '20000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push({ kill: () => child.exitCode === null && child.kill('SIGKILL') });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { done, stdout: () => stdout };
}

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('examples/neovim', () => {
  it.skipIf(!version)(`lifecycle.lua: initialize → create → append → read → shutdown (params null) → exit, the sidecar exits 0 (nvim ${version ?? 'absent'})`, async () => {
    const run = runHeadless({ SIDECAR_STORE: path.join(tempDir('sidecar-nvim-'), 'store') }, path.join(ROOT, 'examples/neovim/lifecycle.lua'));
    const r = await run.done;
    expect(r.stdout, r.stderr).toContain('protocol 1 lastSeq 1 records 1');
    expect(r.stdout, r.stderr).toContain('exit-code 0');
    expect(r.code).toBe(0);
  });

  it.skipIf(!version)(`follows a session live in a scratch buffer (nvim ${version ?? 'absent'})`, async () => {
    const store = path.join(tempDir('sidecar-nvim-'), 'store');
    const lib = new FileSessionStore(store, { leases: false });
    const { sessionId } = await lib.create({ title: 'watched from neovim' });
    await lib.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'first, before neovim' } }]);
    await lib.closeAll();

    const nvim = runHeadless({ SIDECAR_STORE: store, SIDECAR_SESSION: sessionId, SIDECAR_UNTIL_SEQ: '3' });
    await until(() => nvim.stdout().includes(`ready ${sessionId} lastSeq=1`), 'the subscription');

    // Another process — a sidecar serving the same store — appends; neovim's sidecar delivers it.
    const writer = await SidecarClient.start({ store });
    running.push({ kill: () => void writer.kill('SIGKILL') });
    await writer.open({ sessionId, mode: 'write' });
    await writer.append({
      sessionId,
      records: [
        { kind: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'appended by another process' }], toolCalls: [{ id: 'c1', name: 'grep', arguments: '{"q":"x"}' }] } },
        { kind: 'event', type: 'build.finished', payload: { ok: true } },
      ],
    });
    const r = await nvim.done;
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/^ready \S+ lastSeq=1\n#1 [\d-]+ [\d:]+ {2}user\n {4}first, before neovim\n/);
    expect(r.stdout).toMatch(/\n#2 [\d-]+ [\d:]+ {2}assistant\n {4}appended by another process\n {4}-> grep\(\{"q":"x"\}\)\n#3 [\d-]+ [\d:]+ {2}event build\.finished {2}\{"ok":true\}\n/);
    expect(r.stdout).toMatch(/\nbuffer 8 lines\n$/); // the title line, a blank line, then the 6 lines of the records
    expect((await writer.shutdown()).code).toBe(0);
  });

  it.skipIf(!version)('reports a session that does not exist', async () => {
    const store = path.join(tempDir('sidecar-nvim-'), 'store');
    new FileSessionStore(store, { leases: false });
    const r = await runHeadless({ SIDECAR_STORE: store, SIDECAR_SESSION: '01NOSUCHSESSION' }).done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('session-sidecar: session/open: session 01NOSUCHSESSION not found (-31001)');
  });
});
