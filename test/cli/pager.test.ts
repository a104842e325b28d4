import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';
import { cwdStore } from './findKit.js';
import { explain, msg, runCli } from './helpers.js';
import { cliLine, inPty, sh } from './pty.js';

/**
 * The pager (issue 31, finding 7): on a terminal show, export, list and search go through
 * $PAGER — here a script recording what it was given — and never through a pipe or with
 * --no-pager; a pager quitting early ends the command quietly (exit 0, no error).
 */
function recordingPager(): { env: NodeJS.ProcessEnv; got: () => string | undefined } {
  const dir = tempDir('sidecar-pager-');
  const file = path.join(dir, 'got');
  const script = path.join(dir, 'pager.sh');
  fs.writeFileSync(script, `#!/bin/sh\ncat > ${sh(file)}\n`, { mode: 0o755 });
  return { env: { PAGER: script }, got: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined) };
}

describe('pager', () => {
  it('on a terminal: show, export, list and search go through $PAGER (and not straight to the terminal)', async () => {
    const { root, ids } = await cwdStore();
    const cases: Array<[string[], string]> = [
      [['show', ids.other], 'in other'],
      [['export', ids.other, '--format', 'markdown'], '# Elsewhere'],
      [['list'], ids.hereNew],
      [['search', 'proj'], ids.hereNew],
    ];
    for (const [args, expected] of cases) {
      const pager = recordingPager();
      const r = await inPty(cliLine([...args, '--store', root]), { env: pager.env });
      expect(r.code, `${args.join(' ')}: ${r.output}`).toBe(0);
      expect(pager.got(), args.join(' ')).toContain(expected);
      expect(r.output).not.toContain(expected);
    }
  });

  it('never with --no-pager, PAGER=cat or empty, through a pipe, or when the default less is missing', async () => {
    const { root, ids } = await cwdStore();
    const pager = recordingPager();
    const noPager = await inPty(cliLine(['show', ids.other, '--no-pager', '--store', root]), { env: pager.env });
    expect(noPager.code, noPager.output).toBe(0);
    expect(noPager.output).toContain('in other');
    const piped = await inPty(`${cliLine(['list', '--store', root])} | cat`, { env: pager.env });
    expect(piped.output).toContain(ids.hereNew);
    const pipe = await runCli(['export', ids.other, '--format', 'jsonl', '--store', root], { env: pager.env });
    expect(pipe.code, explain(pipe)).toBe(0);
    expect(pipe.stdout).toContain('in other');
    expect(pager.got()).toBeUndefined();
    for (const PAGER of ['cat', '']) {
      const r = await inPty(cliLine(['show', ids.other, '--store', root]), { env: { PAGER } });
      expect(r.output, `PAGER=${PAGER}`).toContain('in other');
    }
    // PAGER unset and no less on PATH: straight to the terminal (not "less: not found")
    const bare = await inPty(`unset PAGER; PATH=${sh(tempDir())} ${sh(process.execPath)} ${cliLine(['show', ids.other, '--store', root]).replace(/^'node' /, '')}`);
    expect(bare.code, bare.output).toBe(0);
    expect(bare.output).toContain('in other');
    expect(bare.output).not.toContain('not found');
  });

  it('a pager that quits early (before reading everything) ends the command quietly: exit 0, no error', async () => {
    const root = path.join(tempDir('sidecar-pager-'), 'store');
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId } = await s.create({ title: 'Long' });
    await s.append(sessionId, Array.from({ length: 400 }, (_, i) => msg('user', `line ${i} `.repeat(60))));
    await s.closeAll();
    const dir = tempDir('sidecar-pager-');
    const script = path.join(dir, 'quit.sh');
    fs.writeFileSync(script, `#!/bin/sh\nhead -c 100 > /dev/null\necho PAGER-QUIT\n`, { mode: 0o755 });
    const r = await inPty(`${cliLine(['export', sessionId, '--format', 'markdown', '--store', root])}; echo "rc=$?"`, { env: { PAGER: script } });
    expect(r.output).toContain('PAGER-QUIT');
    expect(r.output).toContain('rc=0');
    expect(r.output).not.toMatch(/error|EPIPE|failed/i);
  });
});
