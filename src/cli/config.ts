import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPostgresUrl, parsePostgresUrl, PgUrlError } from '../backends/postgres/url.js';
import { parseKey } from '../durable/storeKey.js';
import { CONFIG_SCHEMA, type ConfigValues } from './configSchema.js';

/**
 * The config files: `<workspace>/.session-sidecar/config.json` (inside the default store
 * directory; the store ignores it) and `$XDG_CONFIG_HOME/session-sidecar/config.json` (default
 * `~/.config/...`). settings.ts resolves them with the flags and the environment: flag >
 * environment > workspace file > user file.
 *
 * Invariants: a file is read only if it is a regular file (not a symbolic link: opened with
 * O_NOFOLLOW), owned by this user, not writable by others, and at most MAX_CONFIG_BYTES; every
 * refusal is a ConfigError naming the file (and the member), never quoting a value — a value
 * that looks like an encryption key, or a URL with a password, is refused unshown.
 */
export class ConfigError extends Error {
  constructor(readonly file: string, problem: string) {
    super(`config file ${file}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export const MAX_CONFIG_BYTES = 64 * 1024;

export type ConfigWhere = 'workspace' | 'user';

export interface ConfigFile {
  path: string;
  where: ConfigWhere;
  values: ConfigValues;
}

/** What was found at a config file's place: nothing, a valid file, or a refused one (why). */
export type ConfigProbe = { path: string; where: ConfigWhere } & ({ state: 'absent' } | { state: 'ok'; file: ConfigFile } | { state: 'refused'; error: ConfigError });

export function workspaceConfigPath(workspace: string): string {
  return path.join(path.resolve(workspace), '.session-sidecar', 'config.json');
}

/** `$XDG_CONFIG_HOME/session-sidecar/config.json` (an absolute XDG_CONFIG_HOME only, as the spec says), else `~/.config/...`. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(env.HOME ?? os.homedir(), '.config');
  return path.join(base, 'session-sidecar', 'config.json');
}

/** `~/x` as the home directory's x; other paths as given. */
export function expandHome(p: string, env: NodeJS.ProcessEnv = process.env): string {
  return p.startsWith('~/') ? path.join(env.HOME ?? os.homedir(), p.slice(2)) : p;
}

/** Both config files' places, in precedence order (workspace first), each probed; never throws. */
export function probeConfigs(workspace: string, env: NodeJS.ProcessEnv = process.env): ConfigProbe[] {
  return ([['workspace', workspaceConfigPath(workspace)], ['user', userConfigPath(env)]] as const).map(([where, file]) => {
    try {
      const found = readConfigFile(file, where);
      return found ? { path: file, where, state: 'ok' as const, file: found } : { path: file, where, state: 'absent' as const };
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      return { path: file, where, state: 'refused' as const, error: e };
    }
  });
}

/** The config files that exist, workspace first; the first refused one throws its ConfigError. */
export function loadConfigs(workspace: string, env: NodeJS.ProcessEnv = process.env): ConfigFile[] {
  return probeConfigs(workspace, env).flatMap((p) => {
    if (p.state === 'refused') throw p.error;
    return p.state === 'ok' ? [p.file] : [];
  });
}

/** One config file, checked; undefined when there is none. */
export function readConfigFile(file: string, where: ConfigWhere): ConfigFile | undefined {
  const text = readSafely(file);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigError(file, 'not valid JSON');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'must hold a JSON object');
  refuseSecrets(file, raw as Record<string, unknown>);
  const parsed = CONFIG_SCHEMA.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      throw new ConfigError(file, `unknown member ${issue.keys.map((k) => `'${k}'`).join(', ')} (known: store, storeEnv, encryptionKeyEnv, encryptionKeyFile, pgSchema, logLevel)`);
    }
    const member = issue?.path.length ? `'${issue.path.join('.')}'` : 'the object';
    throw new ConfigError(file, `${member} ${issue?.message ?? 'is not valid'}`);
  }
  const values = parsed.data;
  if (values.store !== undefined) checkStore(file, values.store);
  return { path: file, where, values };
}

function readSafely(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ConfigError(file, code === 'ELOOP' ? 'is a symbolic link (refused: give the file itself)' : `cannot be opened (${code ?? 'error'})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(file, 'is not a regular file');
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new ConfigError(file, 'is owned by another user (refused)');
    if ((st.mode & 0o022) !== 0) throw new ConfigError(file, `is writable by others (mode ${(st.mode & 0o777).toString(8)}); chmod go-w ${file}`);
    if (st.size > MAX_CONFIG_BYTES) throw new ConfigError(file, `is larger than ${MAX_CONFIG_BYTES} bytes`);
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    if (n > MAX_CONFIG_BYTES) throw new ConfigError(file, `is larger than ${MAX_CONFIG_BYTES} bytes`);
    return buf.toString('utf8', 0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** A long base64 or hex run (paths excepted); a store key's own form is caught by parseKey, even starting with '/'. */
const KEY_LIKE = [/^[A-Za-z0-9+/_-]{40,}={0,2}$/, /^[0-9a-fA-F]{64}$/];

function looksLikeKey(v: string): boolean {
  try {
    parseKey(v);
    return true;
  } catch {
    return !v.startsWith('/') && !v.startsWith('~') && KEY_LIKE.some((re) => re.test(v.trim()));
  }
}

/** Any string member, at any depth, that looks like a key is refused, by member name only. */
function refuseSecrets(file: string, raw: Record<string, unknown>, prefix = ''): void {
  for (const [k, v] of Object.entries(raw)) {
    const member = `${prefix}${k}`;
    if (typeof v === 'string' && looksLikeKey(v)) {
      throw new ConfigError(file, `'${member}' holds what looks like an encryption key (not shown): a config file never holds the key; name the variable holding it (encryptionKeyEnv) or its key file (encryptionKeyFile)`);
    }
    if (v !== null && typeof v === 'object') refuseSecrets(file, v as Record<string, unknown>, `${member}.`);
  }
}

/** `store`: an absolute (or ~/) directory, or a postgres:// URL without a password. */
function checkStore(file: string, store: string): void {
  if (!isPostgresUrl(store)) {
    if (!store.startsWith('/') && !store.startsWith('~/')) throw new ConfigError(file, "'store' must be an absolute directory (or start with ~/), or a postgres:// URL");
    return;
  }
  let target;
  try {
    target = parsePostgresUrl(store, {});
  } catch (e) {
    throw new ConfigError(file, `'store': ${e instanceof PgUrlError ? e.message : 'the PostgreSQL URL is malformed'}`);
  }
  if (target.password !== undefined || target.sslPassword !== undefined || /[?&]password=/i.test(store)) {
    throw new ConfigError(file, "'store' is a PostgreSQL URL with a password (not shown): a config file never holds one; put the URL in an environment variable and name it with storeEnv, or give the password by PGPASSWORD, PGPASSFILE or ~/.pgpass");
  }
}
