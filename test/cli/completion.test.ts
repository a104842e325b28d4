import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, loadCommand } from '../../src/cli/commands.js';
import type { Command } from '../../src/cli/common.js';
import { optionFlags } from '../../src/cli/helpFlags.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { CLI, explain, runCli } from './helpers.js';

/**
 * `session-sidecar completion bash|zsh|fish`: the scripts the built binary prints, run by the
 * real shells. bash: the completion function called with COMP_WORDS/COMP_CWORD set, COMPREPLY
 * read back; fish: `complete -C`; zsh: `zsh -n`, and the function registered by compdef. The
 * shells come from .ci/run (bash, fish, zsh); under CI a missing fish or zsh fails.
 */
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;
const strictCi = process.env.CI === 'true';
const hasFish = has('fish') || strictCi;
const hasZsh = has('zsh') || strictCi;
if (!hasFish) console.warn('skipping the fish completion tests: fish is not on PATH');
if (!hasZsh) console.warn('skipping the zsh completion tests: zsh is not on PATH');

const commands: Command[] = await Promise.all(COMMANDS.map((c) => loadCommand(c)));

let bin: string;
let store: string;
let ids: string[];
let trashed: string;
const scripts: Record<string, string> = {};

// one directory for the whole file (tempDir's are removed after each test)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-completion-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  // `session-sidecar` on PATH, as installed: the scripts run it (COMP_WORDS[0]) for session ids
  bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'session-sidecar'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, { mode: 0o755 });
  store = path.join(dir, 'store');
  const s = new FileSessionStore(store, { leases: false });
  ids = [(await s.create({ title: 'one' })).sessionId, (await s.create({ title: 'two' })).sessionId];
  trashed = (await s.create({ title: 'gone' })).sessionId;
  await s.delete(trashed);
  await s.closeAll();
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toBe('');
    scripts[shell] = path.join(bin, `completion.${shell}`);
    fs.writeFileSync(scripts[shell] as string, r.stdout);
  }
}, 60_000);

const env = () => ({ ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` });

/** COMPREPLY for the words of a command line, the last one being completed. */
function bash(...words: string[]): string[] {
  const r = spawnSync('bash', ['-c', 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _session_sidecar; printf "%s\\n" "${COMPREPLY[@]}"', '_', scripts.bash as string, 'session-sidecar', ...words], { encoding: 'utf8', env: env() });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter((l) => l !== '');
}

describe('bash', () => {
  it('is valid bash and registers _session_sidecar', () => {
    const r = spawnSync('bash', ['-c', 'source "$1" && complete -p session-sidecar', '_', scripts.bash as string], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('complete -F _session_sidecar session-sidecar');
  });

  it('completes every command of the registry, and a prefix to its commands', () => {
    expect(bash('').sort()).toEqual([...COMMANDS.map((c) => c.name), 'help', 'serve'].sort());
    expect(bash('li')).toEqual(['list']);
    expect(bash('help', 'st')).toEqual(['stats']);
  });

  it.each(commands.map((c) => [c.name, c] as const))('offers exactly the flags %s accepts', (name, command) => {
    const long = [...optionFlags(command.options ?? {}).keys()].filter((f) => f.startsWith('--'));
    expect(bash(name, '--').sort()).toEqual(long.sort());
  });

  it('completes actions, word values, and skips flag values to find the command', () => {
    expect(bash('trash', '')).toEqual(['list', 'restore', 'empty']);
    expect(bash('completion', '')).toEqual(['bash', 'zsh', 'fish', 'ids']);
    expect(bash('list', '--sort', '')).toEqual(['updated', 'created', 'size']);
    expect(bash('export', 'x', '--format', 'm')).toEqual(['markdown']);
    expect(bash('--store', '/nowhere', 'list', '--js')).toEqual(['--json']);
    expect(bash('--log')).toEqual(['--log-level']);
  });

  it('completes the session ids of the store named on the line, and trashed ids for trash restore', () => {
    expect(bash('show', '--store', store, '').sort()).toEqual([...ids].sort());
    expect(bash('--store', store, 'tail', ids[0]!.slice(0, 24))).toContain(ids[0]);
    expect(bash(`--store=${store}`, 'search', 'text', '--session', '').sort()).toEqual([...ids].sort());
    expect(bash('trash', 'restore', '--store', store, '')).toEqual([trashed]);
    expect(bash('show', ids[0]!, '--store', store, '')).toEqual([]); // one session id only
    expect(bash('show', '--store', path.join(store, 'missing'), '')).toEqual([]); // no store: nothing, no noise
  });
});

describe.skipIf(!hasFish)('fish', () => {
  const fish = (line: string) => {
    const r = spawnSync('fish', ['-c', 'source $argv[1]; complete -C $argv[2]', scripts.fish as string, line], { encoding: 'utf8', env: env() });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '');
  };

  it('completes commands with their summaries, flags, actions and session ids', () => {
    expect(fish('session-sidecar li')).toEqual([`list\t${COMMANDS.find((c) => c.name === 'list')!.summary}`]);
    expect(fish('session-sidecar list --so')).toEqual(['--sort']);
    expect(fish('session-sidecar trash ').sort()).toEqual(['empty', 'list', 'restore']);
    expect(fish(`session-sidecar show --store ${store} `).sort()).toEqual([...ids].sort());
  });
});

describe.skipIf(!hasZsh)('zsh', () => {
  it('is valid zsh (zsh -n) and registers _session_sidecar with compdef', () => {
    const n = spawnSync('zsh', ['-n', scripts.zsh as string], { encoding: 'utf8' });
    expect(n.status, n.stderr).toBe(0);
    const r = spawnSync('zsh', ['-f', '-c', 'autoload -U compinit && compinit -u -D && source "$1" && print -r -- $_comps[session-sidecar]', '_', scripts.zsh as string], { encoding: 'utf8' });
    expect(r.stdout.trim(), r.stderr).toBe('_session_sidecar');
  });
});

describe('completion ids and usage errors', () => {
  it('prints the ids, one a line; --trash the trashed ones; a bad shell is a usage error', async () => {
    const live = await runCli(['completion', 'ids', '--store', store]);
    expect(live.code, explain(live)).toBe(0);
    expect(live.stdout.split('\n').filter(Boolean).sort()).toEqual([...ids].sort());
    expect((await runCli(['completion', 'ids', '--trash', '--store', store])).stdout).toBe(`${trashed}\n`);
    const bad = await runCli(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown shell 'tcsh'");
    expect(bad.stdout).toBe('');
  });
});
