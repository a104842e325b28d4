import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.svg, the README's diagram: well-formed XML (parsed by Python's expat, as
 * strict as any XML parser: an unclosed tag or a stray `&` fails), plain SVG with nothing
 * outside it (no external font, image, stylesheet or link), colors for light and dark
 * backgrounds, the steps of the append path, and referenced near the top of the README.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SVG = path.join(ROOT, 'docs/architecture.svg');
const text = fs.readFileSync(SVG, 'utf8');

describe('docs/architecture.svg', () => {
  it('is well-formed XML whose root is an svg element with a viewBox and a title', () => {
    const r = spawnSync('python3', ['-c', [
      'import sys, xml.etree.ElementTree as E',
      'root = E.parse(sys.argv[1]).getroot()',
      'print(root.tag, root.get("viewBox") is not None, root.find("{http://www.w3.org/2000/svg}title") is not None)',
    ].join('\n'), SVG], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('{http://www.w3.org/2000/svg}svg True True');
  });

  it('a malformed copy is refused by the same check (the check can fail)', () => {
    const r = spawnSync('python3', ['-c', 'import sys, xml.etree.ElementTree as E; E.fromstring(sys.argv[1])', text.replace('</svg>', '')], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
  });

  it('uses no external asset, and has colors for dark backgrounds', () => {
    expect(text).not.toMatch(/<image|@import|@font-face|url\((?!#)|xlink:href|href="(?!#)/);
    expect(text).toMatch(/@media \(prefers-color-scheme: dark\)/);
    expect(text).toMatch(/class="bg"/); // its own background: readable on any page color
  });

  it('shows the append path in order', () => {
    const steps = ['frame', 'validate', 'secret gate', 'commit queue', 'fdatasync', 'answer'];
    const at = steps.map((s) => text.indexOf(`>${steps.indexOf(s) + 1} ${s}`));
    expect(at.every((i) => i > 0), `steps ${JSON.stringify(at)}`).toBe(true);
  });

  it('is referenced near the top of the README', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
    const line = readme.findIndex((l) => l.includes('](docs/architecture.svg)'));
    expect(line).toBeGreaterThanOrEqual(0);
    expect(line).toBeLessThan(readme.findIndex((l) => l.startsWith('## Quick start')));
  });
});
