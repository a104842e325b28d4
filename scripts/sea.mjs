/**
 * npm run build:sea — one `session-sidecar` executable (Node's single executable application):
 * dist/sea/session-sidecar, a copy of the running `node` with the whole sidecar injected.
 *
 * 1. One CommonJS file, dist/sea/sidecar.cjs: esbuild bundles src/cli.ts with every dependency,
 *    `pg` included (pure JS). Node 20 runs a SEA's main script as CommonJS, and its `require`
 *    loads Node's own modules only, so nothing may stay outside the bundle: the dynamic imports
 *    (subcommands, proper-lockfile, pg) are inlined. Left out explicitly: `pg-native` (pg's
 *    optional libpq binding, loaded only through `pg.native`, which the sidecar never touches)
 *    and `better-sqlite3` (an optional peer used by bench/sqlite.ts only, never by the server).
 *    The same lean-schemas transform as scripts/bundle.mjs; `import.meta.url` (read by the
 *    client module's default binary path) becomes the executable's own URL, and the version
 *    (src/version.ts walks up to package.json) is written in.
 * 2. sea-config.json → `node --experimental-sea-config` → dist/sea/sea-prep.blob.
 * 3. The running node binary copied to dist/sea/session-sidecar, the blob injected with postject
 *    (devDependency, pinned), the fuse flipped.
 *
 * Start-up: V8's code cache (`useCodeCache`) is on — measured on Node 20, 2 busy cores, spawn to
 * the `initialize` result: about 94 ms with it, 110 ms without, 112 ms for `node dist/src/cli.js`
 * (bench/sea.ts has the row). `useSnapshot` is not used: building the snapshot runs the whole
 * module graph at build time, and it fails there (`WebAssembly is not defined`: the secret gate's
 * trigram filter instantiates its WASM module at load, and a startup snapshot cannot hold one);
 * it would also freeze every value a module computes at load (environment lookups such as
 * SESSION_SIDECAR_PG_START_WAIT_MS) into the executable.
 *
 * Run after `npm run build` or alone (it only reads src/, protocol/ and package.json).
 * SEA_CODE_CACHE=0 builds without V8's code cache (for measuring; bench/coldStart.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { inject } from 'postject';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist/sea');
const main = path.join(out, 'sidecar.cjs');
const blob = path.join(out, 'sea-prep.blob');
const exe = path.join(out, 'session-sidecar');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

if (Number(process.versions.node.split('.')[0]) < 20) throw new Error(`build:sea needs Node >= 20 (this is ${process.version})`);
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

/** As in scripts/bundle.mjs: `.meta(x)` → `.register(<a registry that keeps nothing>, x)`. */
const leanSchemas = {
  name: 'lean-schemas',
  setup(b) {
    b.onLoad({ filter: /[\\/]protocol[\\/][^\\/]*\.ts$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      return { contents: text.replace(/\.meta\(/g, '.register({ add() {} }, '), loader: 'ts' };
    });
  },
};

/** src/version.ts finds package.json beside itself; the executable has none: the version is written in. */
const fixedVersion = {
  name: 'fixed-version',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({
      contents: `export function packageInfo() { return ${JSON.stringify({ name: pkg.name, version: pkg.version })}; }`,
      loader: 'ts',
    }));
  },
};

await build({
  entryPoints: [path.join(root, 'src/cli.ts')],
  outfile: main,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['pg-native', 'better-sqlite3'],
  plugins: [leanSchemas, fixedVersion],
  alias: { 'jsonc-parser': path.join(root, 'node_modules/jsonc-parser/lib/esm/main.js') },
  define: { 'import.meta.url': '__sidecarUrl' },
  banner: { js: "var __sidecarUrl = require('node:url').pathToFileURL(process.execPath).href;" },
  tsconfig: path.join(root, 'tsconfig.json'),
  logLevel: 'warning',
});

const config = path.join(out, 'sea-config.json');
fs.writeFileSync(config, `${JSON.stringify({
  main,
  output: blob,
  // The "single executable applications is an experimental feature" warning goes to stderr,
  // never stdout, but a client that shows the sidecar's stderr would show it on every start.
  disableExperimentalSEAWarning: true,
  useCodeCache: process.env.SEA_CODE_CACHE !== '0',
}, null, 2)}\n`);
execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });

fs.copyFileSync(process.execPath, exe);
fs.chmodSync(exe, 0o755);
await inject(exe, 'NODE_SEA_BLOB', fs.readFileSync(blob), { sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2' });
const v = execFileSync(exe, ['--version'], { encoding: 'utf8' }).trim();
process.stderr.write(`build:sea: ${path.relative(root, exe)} (${(fs.statSync(exe).size / 2 ** 20).toFixed(1)} MiB), --version: ${v}\n`);
