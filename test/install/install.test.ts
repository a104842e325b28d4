import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';

/**
 * The README's Install section, as written: `npm pack` of the built tree, `npm install` of the
 * tarball into a fresh project (dependencies from npm's cache when it has them), the installed
 * binary's `--version`, and `session-sidecar/client` by its package name against that binary.
 * And every relative link of the README (and of the docs it ships) resolves inside the tarball.
 */
const ROOT = path.resolve(__dirname, '../..');
const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });

describe('Install (README)', () => {
  // one directory for the whole file (tempDir's are removed after each test)
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'install-'));
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));
  let tarball = '';
  let files: string[] = [];

  it('npm pack writes the tarball with the built code, the protocol and the linked docs', () => {
    // the tree is built by `npm test` already: the pack's prepare script is not run again
    const [info] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', out], ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = path.join(out, info!.filename);
    files = info!.files.map((f) => f.path);
    expect(fs.existsSync(tarball)).toBe(true);
    for (const f of ['dist/src/cli.js', 'dist/clients/typescript/src/index.js', 'protocol/schema.json', 'protocol/vectors.json', 'README.md', 'man/session-sidecar.1', 'docs/architecture.svg']) expect(files).toContain(f);
    expect(files.some((f) => f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
  }, 120_000);

  it('every relative link of the README and of the shipped docs resolves inside the tarball', () => {
    const inPackage = (p: string) => files.includes(p) || files.some((f) => f.startsWith(p.endsWith('/') ? p : `${p}/`));
    const docs = files.filter((f) => f.endsWith('.md') && (f === 'README.md' || f.startsWith('docs/') || f === 'CONTRIBUTING.md'));
    expect(docs.length).toBeGreaterThan(3);
    const broken: string[] = [];
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(doc), target));
        if (!inPackage(resolved)) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('npm install of the tarball into a fresh project: the binary runs and session-sidecar/client talks to it', () => {
    const project = tempDir('project-');
    fs.writeFileSync(path.join(project, 'package.json'), '{"name":"my-agent","version":"1.0.0","type":"module","private":true}\n');
    npm(['install', '--prefer-offline', '--no-save', tarball], project);
    const version = execFileSync(path.join(project, 'node_modules/.bin/session-sidecar'), ['--version'], { encoding: 'utf8' }).trim();
    expect(version).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    const store = tempDir('installed-store-');
    const env = { ...process.env };
    delete env.SESSION_SIDECAR_COMMAND;
    const code = `
      import { startClient } from 'session-sidecar/client';
      const c = await startClient({ store: ${JSON.stringify(store)} });
      const { sessionId } = await c.sessionCreate({ title: 'installed' });
      await c.sessionAppend({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }] });
      console.log(JSON.stringify({ records: (await c.sessionRead({ sessionId })).records.length, exit: await c.close() }));
    `;
    fs.writeFileSync(path.join(project, 'agent.mjs'), code);
    const r = execFileSync(process.execPath, ['agent.mjs'], { cwd: project, env, encoding: 'utf8' });
    expect(JSON.parse(r)).toEqual({ records: 1, exit: 0 });
  }, 300_000);
});
