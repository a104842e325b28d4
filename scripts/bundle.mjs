/**
 * npm run build, second step: the `session-sidecar` binary as one bundled ES module.
 *
 * tsc writes dist/ module by module (the library exports, `session-sidecar/client` and
 * `session-sidecar/protocol`, stay that way). The binary, dist/src/cli.js, is then replaced by a
 * bundle of itself: a cold start read, resolved and linked ~230 modules (95 of them zod's) before
 * it could answer `initialize`, about half of its CPU time; one file does the same work in a
 * fraction of it. Subcommands and the PostgreSQL driver stay lazy: each dynamic import becomes a
 * chunk under dist/src/bundle/, loaded when used; `pg` is not bundled at all (it is loaded from
 * node_modules only for a postgres:// store).
 *
 * The bundle sits where the module it replaces sat, so everything that finds files relative to
 * it (the package.json above it for the version, the client's default binary) still does.
 */
import { build } from 'esbuild';
import fs from 'node:fs';

/**
 * The binary's protocol schemas without their annotations. Every schema carries `.meta({ id,
 * description })` for protocol/schema.json; in zod 4 each such call clones the schema (a full
 * construction, with every method bound to the new instance) and files the clone in the global
 * registry — work the running server never reads back (it validates; generate.ts and the tests
 * load protocol/ unbundled, annotations and all). In the bundle `.meta(x)` becomes
 * `.register(<a registry that keeps nothing>, x)`, which returns the schema itself. The one
 * thing the server took from the registry, the protocol's vocabulary, is generated into
 * protocol/vocabulary.generated.ts (a test keeps it equal to the schemas').
 */
const leanSchemas = {
  name: 'lean-schemas',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]protocol[\\/].*\.js$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      return { contents: text.replace(/\.meta\(/g, '.register({ add() {} }, '), loader: 'js' };
    });
  },
};

const entry = 'dist/src/cli.js';
if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run tsc first`);
fs.rmSync('dist/src/bundle', { recursive: true, force: true });
await build({
  entryPoints: [entry],
  outdir: 'dist/src',
  entryNames: '[name]',
  chunkNames: 'bundle/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['pg', 'pg-native'],
  plugins: [leanSchemas],
  // jsonc-parser's `main` is a UMD build whose factory requires its own files at run time (which
  // a bundle cannot follow); its ES module build is the same code as plain imports.
  alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
  allowOverwrite: true,
  sourcemap: true,
  logLevel: 'warning',
  // The CommonJS dependencies (vscode-jsonrpc, proper-lockfile) call require() for Node's modules.
  banner: { js: "import { createRequire as __sidecarRequire } from 'node:module'; const require = __sidecarRequire(import.meta.url);" },
});
fs.chmodSync(entry, 0o755);
