import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { dateOf, manPage } from '../../src/cli/manPage.js';
import { ROOT } from './helpers.js';

/**
 * man/session-sidecar.1 is generated (npm run man) from the help texts: the checked-in page is
 * what the generator makes of the current texts (a help changed without `npm run man` fails
 * here), it has every command of the registry, and groff and mandoc render it without a warning.
 * groff and mandoc come from .ci/run; under CI a missing one fails.
 */
const PAGE = path.join(ROOT, 'man/session-sidecar.1');
const page = fs.readFileSync(PAGE, 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; files: string[]; man: string[]; scripts: Record<string, string> };
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0 || process.env.CI === 'true';

describe('man/session-sidecar.1', () => {
  it('is what npm run man makes of the help texts, byte for byte', async () => {
    const date = dateOf(page);
    expect(date, 'the page has a YYYY-MM-DD date').toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(await manPage(pkg.version, date as string), 'regenerate it: npm run man').toBe(page);
  });

  it('has the sections and every command of the registry, each with its synopsis', () => {
    for (const s of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'COMMANDS', 'ENVIRONMENT', 'FILES', 'EXIT STATUS']) expect(page).toMatch(new RegExp(`^\\.SH ${s}$`, 'm'));
    for (const c of COMMANDS) {
      expect(page).toContain(`\n.SS ${c.name.replace(/-/g, '\\-')}\n`);
      expect(page).toContain(`session\\-sidecar ${c.name.replace(/-/g, '\\-')}`);
    }
  });

  it('is shipped: package.json files and man, and the man script', () => {
    expect(pkg.files).toContain('man');
    expect(pkg.man).toEqual(['./man/session-sidecar.1']);
    expect(pkg.scripts.man).toContain('scripts/man.mjs');
  });

  it.skipIf(!has('groff'))('groff renders it without a warning (man -l uses it)', () => {
    const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', PAGE], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const text = spawnSync('groff', ['-man', '-Tutf8', '-P-cbou', PAGE], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } }).stdout;
    expect(text).toContain('--older-than DURATION'); // a flag renders as a flag: minus signs, not hyphens
    expect(text).toMatch(/EXIT STATUS/);
  });

  it.skipIf(!has('mandoc'))('mandoc -T lint finds nothing at warning level or above', () => {
    const r = spawnSync('mandoc', ['-T', 'lint', '-W', 'warning', PAGE], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
