import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { StoreError } from '../domain/errors.js';
import { FileSessionStore } from '../stores/fileStore.js';
import type { ListFilter, OpenedSession, SessionStore, SessionSummary } from '../domain/types.js';
import { err } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';
import { openReadOnlyBackend, openReadOnlyPgStore, type StoreTarget, targetOf } from './storeTarget.js';
import { parseDuration } from '../domain/retention.js';
import type { StoreKey } from '../durable/storeKey.js';
import { KeyOptionError, keyFromSettings } from './encryptionKey.js';
import { ConfigError, loadConfigs } from './config.js';
import { type Flags, resolveSettings, type Settings } from './settings.js';
import { StoreEnvError } from './storeEnv.js';

/** A command-line mistake: one line on stderr, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A duration flag checked before the store is opened: a malformed one is a usage error (exit 2) naming the flag. */
export function checkDuration(text: string, flag: string, command: string): void {
  try {
    parseDuration(text, flag);
  } catch {
    throw new UsageError(`${flag} must be a duration such as 30d, 12h, 90m or P30D (units s, m, h, d, w), not ${JSON.stringify(text.slice(0, 40))}`, command);
  }
}

/** A failure to report as one line on stderr (exit code 1, unless given). */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

/** The options of a parseArgs call. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** A subcommand: its one-line summary (for the top-level help), its usage text and its body. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  /**
   * Every option it accepts: the very object its parseArgs call is given (store options
   * included). The flags its usage lists and these are the same set (test/cli/helpFlags.test.ts),
   * and `completion` offers them.
   */
  options?: CommandOptions;
  /** A command of actions (trash list|restore|empty): the options beyond the store's each action takes; others are refused (checkAction). */
  actions?: Readonly<Record<string, readonly string[]>>;
  run(argv: string[]): Promise<number>;
}

/** Refuses an option given to an action that does not take it (`trash list --dry-run`): a usage error naming both. */
export function checkAction(command: Command, action: string, values: Record<string, unknown>): void {
  const own = command.actions?.[action];
  if (!own || !command.options) return;
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || name in STORE_OPTIONS || own.includes(name) || !(name in command.options)) continue;
    throw new UsageError(`--${name} does not go with '${command.name} ${action}'`, command.name);
  }
}

/** Options every inspection command takes, with the same meaning and resolution as `serve`'s. */
export const STORE_OPTIONS = {
  store: { type: 'string' },
  'store-env': { type: 'string' },
  workspace: { type: 'string' },
  'pg-schema': { type: 'string' },
  'encryption-key-env': { type: 'string' },
  'encryption-key-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export const STORE_HELP = `  --store DIR|URL          the store (default: <workspace>/.session-sidecar, or
                           $SESSION_SIDECAR_STORE when set): a directory, or a PostgreSQL
                           database postgres://user:pass@host:port/db (also postgresql://,
                           ?sslmode=..., a unix socket with ?host=/dir); the password is
                           never printed
  --store-env NAME         the same, read from the environment variable NAME (keeps a URL's
                           password off the command line; or use PGPASSWORD, ~/.pgpass)
  --pg-schema NAME         the PostgreSQL schema of the store (default session_sidecar);
                           it must exist: inspection never creates or upgrades it
  --workspace DIR          the workspace whose .session-sidecar/ is the store (default: cwd)
  --encryption-key-env NAME   the key of an encrypted store, base64 in $NAME (as serve's)
  --encryption-key-file PATH  the same key read from PATH (mode 0600, owned by you); without
                              either: $SESSION_SIDECAR_ENCRYPTION_KEY_ENV (a variable's name)
                              or $SESSION_SIDECAR_ENCRYPTION_KEY_FILE (a path)
  -h, --help               this help`;

/**
 * The effective settings of a command (settings.ts: flag > environment > workspace config file >
 * user config file): a flag mistake is a UsageError, a config file or variable refused a CliError.
 */
export function commandSettings(values: Parsed['values']): Settings {
  const str = (k: string) => values[k] as string | undefined;
  const store = str('store');
  const storeEnv = str('store-env');
  const workspace = str('workspace');
  if ((store !== undefined || storeEnv !== undefined) && workspace !== undefined) throw new UsageError(`${storeEnv !== undefined ? '--store-env' : '--store'} and --workspace exclude each other`);
  try {
    return resolveSettings(settingsFlags(values), loadConfigs(workspace ?? process.cwd()));
  } catch (e) {
    if (e instanceof StoreEnvError) throw new UsageError(e.message);
    if (e instanceof ConfigError) throw new CliError(e.message);
    throw e;
  }
}

/** The store options of a command line, as settings.ts takes them. */
export function settingsFlags(values: Parsed['values']): Flags {
  const flags: Flags = {};
  const map = { store: 'store', 'store-env': 'storeEnv', workspace: 'workspace', 'pg-schema': 'pgSchema', 'encryption-key-env': 'keyEnv', 'encryption-key-file': 'keyFile' } as const;
  for (const [flag, name] of Object.entries(map)) if (typeof values[flag] === 'string') flags[name] = values[flag];
  return flags;
}

/** The store a command works on, from its settings. */
export function storeTargetOf(settings: Settings): StoreTarget {
  return targetOf(settings.store.value, settings.pgSchema?.value, (m) => new UsageError(m));
}

/**
 * parseArgs for a subcommand, with its errors turned into one-line usage errors. Returns
 * undefined after printing the usage for --help.
 */
export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** What may be printed of the store: its directory, or its URL without the password. */
  root: string;
  target: StoreTarget;
  /** The effective settings (and where each came from). */
  settings: Settings;
}

/**
 * A command that declares its options (Command.options) is parsed with exactly those: its whole
 * set, store options included or left out; `options` then is that same object. One that does
 * not gets the store options added to `options`.
 */
export function parseCommand(
  command: Command, argv: string[], options: CommandOptions, positionals: { min: number; max: number; names: string },
): Parsed | undefined {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: command.options ?? { ...STORE_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(parseErrorMessage(e), command.name);
  }
  const values = parsed.values as Parsed['values'];
  if (values.help) return undefined;
  const n = parsed.positionals.length;
  if (n < positionals.min) throw new UsageError(`missing ${positionals.names}`, command.name);
  if (n > positionals.max) throw new UsageError(`unexpected argument '${parsed.positionals[positionals.max]}'`, command.name);
  let target: StoreTarget;
  let settings: Settings;
  try {
    settings = commandSettings(values);
    target = storeTargetOf(settings);
  } catch (e) {
    throw e instanceof UsageError ? new UsageError(e.message, command.name) : e;
  }
  const key = keyOf(settings);
  if (key) target = { ...target, key };
  return { values, positionals: parsed.positionals, root: target.display, target, settings };
}

/** The key its settings name (a flag, a variable, a config file); a bad one is a one-line error (exit 1) that never shows it. */
export function keyOf(settings: Settings): StoreKey | undefined {
  try {
    return keyFromSettings(settings);
  } catch (e) {
    throw e instanceof KeyOptionError ? new CliError(e.message) : e;
  }
}

/** parseArgs' messages are long and sometimes multi-line: keep the first sentence. */
function parseErrorMessage(e: unknown): string {
  const code = (e as { code?: string }).code ?? '';
  const message = String((e as Error).message ?? 'invalid arguments');
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) return `unknown option '${quoted}'`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && /argument missing/.test(message) && quoted) return `option '${quoted}' needs a value`;
  return (message.split(/\.\s|\n/)[0] ?? message).trim();
}

export function positiveInt(value: string | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`${name} must be an integer >= ${min}`);
  return n;
}

const quiet = new Set<string>();

/** Store warnings on stderr, each once. */
function storeWarning(message: string): void {
  if (quiet.has(message)) return;
  quiet.add(message);
  err(`session-sidecar: warning: ${message}`);
}

/**
 * Opens an existing store for inspection. Nothing is created: a missing store is an error.
 * A directory store is read-only (`readOnly`: no folders created, no index refresh, every write
 * refused; sessions are opened in read mode: no writer lease, no recovery) and so is its file
 * system (see readOnlyFs), so a running `serve` is never disturbed. A PostgreSQL store is
 * read-only at the server (default_transaction_read_only on every connection), never migrated
 * (a missing schema is an error) and takes no lease.
 */
export async function openStore(target: StoreTarget): Promise<SessionStore> {
  if (target.kind === 'postgres') return openReadOnlyPgStore(target, (m) => new CliError(m), storeWarning);
  return openFileStore(target.root, target.key);
}

/**
 * Opens an existing store for the commands that change it (prune, trash restore|empty): as
 * `serve` does — writer leases taken, so a session a sidecar holds open is never moved — but a
 * missing store (or PostgreSQL schema) is an error, never created.
 */
export async function openWritableStore(target: StoreTarget): Promise<SessionStore> {
  if (target.kind === 'postgres') {
    await (await openReadOnlyBackend(target, (m) => new CliError(m))).close(); // it exists: nothing is created
    const [{ openPostgresBackend }, { Sessions }, { storeErrorOf }, { scratchAt }] = await Promise.all([
      import('../backends/postgres/backend.js'), import('../core/sessions/sessions.js'), import('../backends/postgres/errors.js'), import('../scratch/localScratch.js'),
    ]);
    try {
      const db = await openPostgresBackend({ url: target.url, schema: target.schema, poolMax: 2, applicationName: 'session-sidecar-cli', ...(target.key ? { encryptionKey: target.key } : {}) });
      return new Sessions(db, { scratch: scratchAt(path.join(process.cwd(), '.session-sidecar')), warn: storeWarning });
    } catch (e) {
      throw storeErrorOf(e);
    }
  }
  openFileStore(target.root, target.key); // the same checks: an existing store
  return new FileSessionStore(target.root, { warn: storeWarning, onUnlisted, ...(target.key ? { encryptionKey: target.key } : {}) });
}

function openFileStore(root: string, key?: StoreKey): FileSessionStore {
  const st = fs.lstatSync(root, { throwIfNoEntry: false });
  if (!st) throw new CliError(`no session store at ${root} (use --store DIR or --workspace DIR)`);
  if (!st.isDirectory()) throw new CliError(`${root} is not a session store (not a directory)`);
  if (!fs.lstatSync(path.join(root, 'sessions'), { throwIfNoEntry: false })?.isDirectory()) {
    throw new CliError(`${root} is not a session store (it has no sessions/ directory)`);
  }
  return new FileSessionStore(root, { fs: readOnlyFs(), readOnly: true, warn: storeWarning, onUnlisted, ...(key ? { encryptionKey: key } : {}) });
}

/** Every session of the store, most recently updated first. */
export async function listAll(store: SessionStore, filter: ListFilter = {}): Promise<SessionSummary[]> {
  const all: SessionSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...filter, limit: 1000, ...(cursor ? { cursor } : {}) });
    all.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** What `list` and `stats` work from: the store's sessions, the store left open for the caller to close. */
export interface Listing {
  root: string;
  json: boolean;
  store: SessionStore;
  sessions: SessionSummary[];
  values: Parsed['values'];
}

/** Parses a command that takes no positionals (its options: --json, the store's, others), then lists the store; undefined after --help. */
export async function listingOf(command: Command, argv: string[], options: CommandOptions): Promise<Listing | undefined> {
  const p = parseCommand(command, argv, options, { min: 0, max: 0, names: '' });
  if (!p) return undefined;
  const store = await openStore(p.target);
  return { root: p.root, json: p.values.json === true, store, sessions: await listAll(store), values: p.values };
}

/**
 * Opens a session for reading, by its id or by a unique prefix of it (ULIDs are long):
 * `show 01M8K1` works when a single session id starts so.
 */
/**
 * The sessions of this command's file store that its listings left out because they cannot be
 * read (damaged, unsafe), by id, with the error's kind: `list --all` shows them, and a prefix
 * still names them (`show <prefix>` says the session is damaged, not that it does not exist).
 */
export const unlistedSessions = new Map<string, string>();
const onUnlisted = (sessionId: string, kind: string) => void unlistedSessions.set(sessionId, kind);

export async function openSession(store: SessionStore, idOrPrefix: string): Promise<OpenedSession> {
  try {
    return await store.open(idOrPrefix, 'read');
  } catch (e) {
    if (!(e instanceof StoreError) || e.kind !== 'SessionNotFound') throw e;
    // a damaged session named by its prefix opens by its id: the open's own error says what is wrong
    const id = await sessionIdByPrefix(store, idOrPrefix);
    if (id === undefined) throw e;
    return store.open(id, 'read');
  }
}

/**
 * The one session whose id starts with `idOrPrefix` (case-insensitive), among the listed
 * sessions and those the listing left out (unlistedSessions); undefined for none, a CliError
 * when several match.
 */
export async function sessionIdByPrefix(store: SessionStore, idOrPrefix: string): Promise<string | undefined> {
  const wanted = idOrPrefix.toUpperCase();
  const listed = (await listAll(store)).map((s) => s.sessionId);
  const matches = [...new Set([...listed, ...unlistedSessions.keys()])].filter((id) => id.toUpperCase().startsWith(wanted));
  if (matches.length > 1) throw new CliError(`${matches.length} sessions start with ${idOrPrefix}; give more of the id`);
  return matches[0];
}
