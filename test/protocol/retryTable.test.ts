import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods } from '../../protocol/index.js';

/** §6.3's retry table says, for every request a client may need to resend, what a resend does. */
describe('§6.3 retrying each method', () => {
  it('names every request but initialize and shutdown exactly once, and no other method', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../../protocol/README.md'), 'utf8');
    const start = readme.indexOf('**Retrying each method.**');
    expect(start).toBeGreaterThan(0);
    const lines = readme.slice(start).split('\n');
    const head = lines.findIndex((l) => l.startsWith('| Methods |'));
    const end = lines.findIndex((l, i) => i > head && !l.startsWith('|'));
    const rows = lines.slice(head + 2, end);
    const named = rows.flatMap((r) => [...(r.split(' | ')[0] ?? '').matchAll(/`([a-z$/A-Z]+)`/g)].map((m) => m[1]));
    const requests = methods.filter((m) => m.kind === 'request' && m.method !== 'initialize' && m.method !== 'shutdown').map((m) => m.method);
    expect([...named].sort()).toEqual([...requests].sort());
  });
});
