#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { printOut } from './cliOutput.js';
import { type CommandEntry, findCommand, loadCommand, splitCommand } from './cli/commands.js';
import { SERVE_OPTIONS, TTY_HINT, USAGE } from './cli/serveUsage.js';
import { CliError, type Command, UsageError as CommandUsageError } from './cli/common.js';
import { endOut, out, err as printErr } from './cli/output.js';
import { createStderrLogger, type LogLevel, redirectConsoleToStderr } from './log.js';
import { protocolVocabulary } from '../protocol/vocabulary.js';
import { startServer } from './server/server.js';
import { StoreError } from './domain/errors.js';
import { FileSessionStore } from './stores/fileStore.js';
import { MemoryBackend } from './backends/memory/memoryBackend.js';
import { Sessions } from './core/sessions/sessions.js';
import { MIN_SECRET_CHARS, SecretSet } from './domain/secrets/knownSecrets.js';
import { EphemeralRouter } from './core/services/ephemeral.js';
import type { SessionStore } from './domain/types.js';
import { DEFAULT_PG_SCHEMA, isPostgresUrl } from './backends/postgres/url.js';
import { packageInfo } from './version.js';
import type { StoreKey } from './durable/storeKey.js';
import { KeyOptionError, keyFromSettings } from './cli/encryptionKey.js';
import { ConfigError, loadConfigs } from './cli/config.js';
import { resolveSettings, type Settings } from './cli/settings.js';
import { storeOption, StoreEnvError } from './cli/storeEnv.js';

redirectConsoleToStderr(); // before anything else can print: stdout is for protocol frames

class UsageError extends Error {}
/** A key that cannot be used (malformed, unreadable, unsafe file): a startup error, never printing the key. */
class KeyError extends Error {}

interface ServeArgs {
  store: string;
  /** A PostgreSQL store: the schema, and the local directory whose scratch/ holds tool scratch. */
  pg?: { schema: string; localRoot: string; poolMax?: number; pooler?: 'transaction'; listenUrl?: string };
  framing: 'auto' | 'lsp' | 'ndjson';
  maxMessageBytes: number;
  logLevel: LogLevel;
  leaseStaleMs: number;
  /** Encryption at rest (file or PostgreSQL store): the key, never printed. */
  key?: StoreKey;
}

function parseServe(argv: string[]): ServeArgs | 'help' | 'version' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: SERVE_OPTIONS,
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  const [command, ...extra] = positionals;
  if ((command !== undefined && command !== 'serve') || extra.length > 0) {
    throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  }
  let listen: string | undefined;
  let settings: Settings;
  try {
    listen = storeOption(values['pg-listen-url'], values['pg-listen-url-env'], { value: '--pg-listen-url', env: '--pg-listen-url-env' });
    settings = resolveSettings({
      ...(values.store !== undefined ? { store: values.store } : {}), ...(values['store-env'] !== undefined ? { storeEnv: values['store-env'] } : {}),
      ...(values.workspace !== undefined ? { workspace: values.workspace } : {}), ...(values['pg-schema'] !== undefined ? { pgSchema: values['pg-schema'] } : {}),
      ...(values['encryption-key-env'] !== undefined ? { keyEnv: values['encryption-key-env'] } : {}),
      ...(values['encryption-key-file'] !== undefined ? { keyFile: values['encryption-key-file'] } : {}),
      ...(values['log-level'] !== undefined ? { logLevel: values['log-level'] } : {}),
    }, loadConfigs(values.workspace ?? process.cwd()));
  } catch (e) {
    if (e instanceof StoreEnvError) throw new UsageError(e.message);
    throw e; // a ConfigError (a config file or variable refused) ends the start, naming it
  }
  const store = settings.store.value;
  const url = isPostgresUrl(store) ? store : undefined;
  // With a PostgreSQL store, --workspace is where tool scratch goes; with a directory, it names the store.
  if ((values.store !== undefined || values['store-env'] !== undefined) && values.workspace !== undefined && !url) {
    throw new UsageError(`${values['store-env'] !== undefined ? '--store-env' : '--store'} and --workspace exclude each other`);
  }
  const schema = settings.pgSchema?.value;
  if (values['pg-schema'] !== undefined && !url) throw new UsageError('--pg-schema needs a PostgreSQL store (--store postgres://...)');
  if (schema !== undefined && !PG_SCHEMA.test(schema)) throw new UsageError('--pg-schema must match [a-z_][a-z0-9_]{0,62}');
  if (values['pg-pool-max'] !== undefined && !url) throw new UsageError('--pg-pool-max needs a PostgreSQL store (--store postgres://...)');
  if ((values['pg-pooler'] !== undefined || listen !== undefined) && !url) throw new UsageError('--pg-pooler and --pg-listen-url need a PostgreSQL store (--store postgres://...)');
  if (values['pg-pooler'] !== undefined && values['pg-pooler'] !== 'transaction') throw new UsageError('--pg-pooler must be transaction');
  if (listen !== undefined && !isPostgresUrl(listen)) throw new UsageError('--pg-listen-url must be a postgres:// URL');
  const pooler = values['pg-pooler'] === 'transaction' ? { pooler: 'transaction' as const } : {};
  const listenUrl = listen !== undefined ? { listenUrl: listen } : {};
  const poolMax = values['pg-pool-max'] === undefined ? undefined : Number(values['pg-pool-max']);
  if (poolMax !== undefined && (!Number.isSafeInteger(poolMax) || poolMax < 1 || poolMax > 100)) throw new UsageError('--pg-pool-max must be an integer from 1 to 100');
  const framing = values.framing;
  if (framing !== 'auto' && framing !== 'lsp' && framing !== 'ndjson') throw new UsageError('--framing must be auto, lsp or ndjson');
  const maxMessageBytes = Number(values['max-message-bytes']);
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1024) throw new UsageError('--max-message-bytes must be an integer >= 1024');
  const leaseStaleMs = Number(values['lease-stale-ms']);
  if (!Number.isSafeInteger(leaseStaleMs) || leaseStaleMs < 5000 || leaseStaleMs > 15000) throw new UsageError('--lease-stale-ms must be an integer from 5000 to 15000');
  const logLevel = settings.logLevel.value;
  if (!['error', 'warn', 'info', 'debug'].includes(logLevel)) throw new UsageError('--log-level must be error, warn, info or debug');
  let key: StoreKey | undefined;
  try {
    key = keyFromSettings(settings);
  } catch (e) {
    throw e instanceof KeyOptionError ? new KeyError(e.message) : e;
  }
  const common = { framing, maxMessageBytes, logLevel, leaseStaleMs, ...(key ? { key } : {}) } as const;
  // The workspace must exist: the store (or, with PostgreSQL, the tool scratch directories) goes
  // inside it, and is never created with parents on a mistyped path.
  if (values.workspace !== undefined && !fs.statSync(values.workspace, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`--workspace ${values.workspace}: no such directory`);
  }
  if (url) {
    const localRoot = path.resolve(values.workspace ?? process.cwd(), '.session-sidecar');
    return { store: url, pg: { schema: schema ?? DEFAULT_PG_SCHEMA, localRoot, ...(poolMax !== undefined ? { poolMax } : {}), ...pooler, ...listenUrl }, ...common };
  }
  return { store, ...common };
}

const PG_SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** How long `serve` waits for a PostgreSQL store that is down at start (SESSION_SIDECAR_PG_START_WAIT_MS overrides). */
const PG_START_WAIT_MS = Number(process.env.SESSION_SIDECAR_PG_START_WAIT_MS ?? 30_000);

/**
 * The served store: the durable one (file or PostgreSQL) behind the router that keeps ephemeral
 * sessions (protocol §17) in a file store over memory; one secret set gates both.
 */
async function openStore(args: ServeArgs, log: ReturnType<typeof createStderrLogger>): Promise<SessionStore> {
  const warn = (m: string) => log.warn(m);
  const secrets = new SecretSet();
  const durable = await openDurableStore(args, warn, secrets);
  // Ephemeral sessions (protocol §17): the same core over a backend in this process's memory, one secret set for both.
  return new EphemeralRouter(durable, () => new Sessions(new MemoryBackend(), { warn, vocabulary: protocolVocabulary, secrets }));
}

async function openDurableStore(args: ServeArgs, warn: (m: string) => void, secrets: SecretSet): Promise<SessionStore> {
  if (!args.pg) {
    // First the store lock: a rekey under way refuses the start; while we serve, no rekey starts.
    const serving = await FileSessionStore.lockForServing(args.store);
    try {
      const store = new FileSessionStore(args.store, { warn, vocabulary: protocolVocabulary, leaseStaleMs: args.leaseStaleMs, secrets, ...(args.key ? { encryptionKey: args.key } : {}) });
      store.holdServingLock(serving);
      return store;
    } catch (err) {
      serving?.release();
      throw err;
    }
  }
  // Loaded only for a PostgreSQL store: a file store's start never pays for them.
  const [{ openPostgresBackend }, { storeErrorOf }, { scratchAt }, { databasePasswords }, { parsePostgresUrl }] = await Promise.all([
    import('./backends/postgres/backend.js'), import('./backends/postgres/errors.js'), import('./scratch/localScratch.js'),
    import('./backends/postgres/passwords.js'), import('./backends/postgres/url.js'),
  ]);
  args.key?.registerWith(secrets); // the key may never be stored, in any encoding (as the file store's)
  // The database password is a process-wide secret: no record, error or log line may carry it
  // (one shorter than a registered secret's minimum is not, as any such value).
  for (const u of [args.store, ...(args.pg.listenUrl !== undefined ? [args.pg.listenUrl] : [])]) {
    for (const password of await databasePasswords(parsePostgresUrl(u)).catch(() => [])) {
      if (password.length >= MIN_SECRET_CHARS) secrets.add(password);
    }
  }
  let backend;
  // A database that is down or still starting (restarted with the fleet, say) is waited for,
  // with backoff, up to PG_START_WAIT_MS; a configuration error (authentication, no such
  // database, a schema this binary cannot serve) ends the start at once.
  const started = Date.now();
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    try {
      backend = await openPostgresBackend({
        url: args.store, schema: args.pg.schema, leaseStaleMs: args.leaseStaleMs, ...(args.pg.poolMax !== undefined ? { poolMax: args.pg.poolMax } : {}),
        ...(args.pg.pooler ? { pooler: args.pg.pooler } : {}), ...(args.pg.listenUrl !== undefined ? { listenUrl: args.pg.listenUrl } : {}),
        onError: (e) => warn(`database: ${e.kind}${e.details.reason ? ` (${String(e.details.reason)})` : ''}`),
        ...(args.key ? { encryptionKey: args.key } : {}),
      });
      break;
    } catch (e) {
      const err = storeErrorOf(e);
      if (!(err instanceof StoreError) || err.kind !== 'Unavailable' || err.details.retryable !== true || Date.now() - started + delay > PG_START_WAIT_MS) throw err;
      if (delay === 250) warn(`database: Unavailable (${String(err.details.reason ?? 'connection')}); waiting up to ${PG_START_WAIT_MS / 1000} s for it`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  return new Sessions(backend, { scratch: scratchAt(args.pg.localRoot), warn, vocabulary: protocolVocabulary, secrets });
}

async function serve(args: ServeArgs): Promise<number> {
  const log = createStderrLogger(args.logLevel);
  const store = await openStore(args, log);
  log.scrubWith((text) => store.scrub(text));
  if (process.stdin.isTTY) process.stderr.write(TTY_HINT);
  const server = startServer({
    store, input: process.stdin, output: process.stdout, framing: args.framing,
    maxMessageBytes: args.maxMessageBytes, log, serverInfo: packageInfo(),
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => server.stop(0, signal));
  return server.exited;
}

/** A subcommand, with its errors as one line on stderr: 2 for usage, 1 for failures. */
async function runCommand(entry: CommandEntry | 'help', argv: string[]): Promise<number> {
  if (entry === 'help') {
    const name = argv.find((a) => !a.startsWith('-'));
    const wanted = name === undefined ? undefined : findCommand(name);
    if (name !== undefined && !wanted && name !== 'serve') {
      printErr(`session-sidecar: help: unknown command '${name}'`);
      return 2;
    }
    out(wanted ? (await loadCommand(wanted)).usage : USAGE);
    return 0;
  }
  const command: Command = await loadCommand(entry);
  try {
    const code = await command.run(argv);
    await endOut();
    return code;
  } catch (e) {
    await endOut(); // a pager quits first: the error is the last thing on the terminal
    const name = command.name;
    if (e instanceof CommandUsageError) {
      printErr(`session-sidecar: ${name}: ${e.message} (see 'session-sidecar ${name} --help')`);
      return 2;
    }
    if (e instanceof CliError) {
      printErr(`session-sidecar: ${e.message}`);
      return e.exitCode;
    }
    if (e instanceof StoreError) {
      printErr(`session-sidecar: ${e.message}`);
      return e.kind === 'InvalidSessionId' ? 2 : 1;
    }
    // Never the raw message: it could quote a path or content. Its kind and code are enough.
    const code = (e as { code?: string }).code;
    printErr(`session-sidecar: ${name} failed: ${(e as Error).name ?? 'error'}${code ? ` ${code}` : ''}`);
    return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  const sub = splitCommand(argv);
  if (sub) return runCommand(sub.command, sub.rest);
  const parsed = parseServe(argv);
  if (parsed === 'help') return printOut(USAGE), 0;
  if (parsed === 'version') return printOut(`${packageInfo().version}\n`), 0;
  return serve(parsed);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`session-sidecar: ${(err as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    const what = err instanceof StoreError || err instanceof KeyError || err instanceof ConfigError ? err.message : `${(err as Error).name ?? 'error'} ${(err as { code?: string }).code ?? ''}`;
    process.stderr.write(`session-sidecar: cannot start: ${what}\n`);
    process.exit(1);
  },
);
