import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { run } from '../../pythonRun.js';

/**
 * The adapter is the package subpath `session-sidecar/adapters/openai-agents` (BUILT dist/), and
 * neither it nor the sidecar binary nor the client loads `@openai/agents-core` at run time (the
 * SDK is an optional peer: the adapter uses its types only).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SDK_IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["']@openai\//;

/** A Node resolve hook that refuses every `@openai/...` module, so loading one fails loudly. */
function noSdkHook(): string {
  const dir = tempDir('sidecar-agents-hook-');
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(hooks, `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@openai/')) throw new Error('SDK loaded: ' + specifier);
  return next(specifier, context);
}\n`);
  const register = path.join(dir, 'register.mjs');
  fs.writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  return register;
}

function nodeEval(code: string, register: string) {
  return run(process.execPath, ['--import', register, '--input-type=module', '-e', code], { cwd: ROOT });
}

describe('packaging of session-sidecar/adapters/openai-agents', () => {
  it('has its exports entry with types and default in dist/', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }>; peerDependenciesMeta: Record<string, { optional: boolean }> };
    const entry = pkg.exports['./adapters/openai-agents']!;
    expect(entry).toEqual({ types: './dist/src/adapters/openaiAgents/index.d.ts', default: './dist/src/adapters/openaiAgents/index.js' });
    for (const file of [entry.types, entry.default]) expect(fs.existsSync(path.join(ROOT, file)), `${file}: run npm run build`).toBe(true);
    expect(pkg.peerDependenciesMeta['@openai/agents-core']).toEqual({ optional: true });
  });

  it('the binary, its bundle chunks, the client and the adapter import nothing from @openai/', () => {
    const files = [
      'dist/src/cli.js', 'dist/src/client/index.js', 'dist/src/index.js',
      ...fs.readdirSync(path.join(ROOT, 'dist/clients/typescript/src')).filter((f) => f.endsWith('.js')).map((f) => `dist/clients/typescript/src/${f}`),
      ...fs.readdirSync(path.join(ROOT, 'dist/src/bundle')).filter((f) => f.endsWith('.js')).map((f) => `dist/src/bundle/${f}`),
      ...fs.readdirSync(path.join(ROOT, 'dist/src/adapters/openaiAgents')).filter((f) => f.endsWith('.js')).map((f) => `dist/src/adapters/openaiAgents/${f}`),
    ];
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) expect(SDK_IMPORT.test(fs.readFileSync(path.join(ROOT, f), 'utf8')), f).toBe(false);
    expect(SDK_IMPORT.test("import { run } from '@openai/agents-core';")).toBe(true);
  });

  it('imports by its package name and runs a session with the SDK unloadable', async () => {
    const register = noSdkHook();
    const refused = await nodeEval("await import('@openai/agents-core')", register);
    expect(refused.code).not.toBe(0); // the hook works
    expect(refused.stderr).toContain('SDK loaded: @openai/agents-core');
    const store = tempDir('sidecar-agents-');
    const r = await nodeEval(`
      const { SidecarSession, ITEM_TYPE } = await import('session-sidecar/adapters/openai-agents');
      await import('session-sidecar/client');
      const s = await SidecarSession.open({ store: ${JSON.stringify(store)} });
      await s.addItems([{ role: 'user', content: 'hi' }]);
      console.log(JSON.stringify({ type: ITEM_TYPE, items: await s.getItems() }));
      await s.close();
    `, register);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ type: 'agents.item', items: [{ role: 'user', content: 'hi' }] });
  });
});
