import path from 'node:path';
import { isPostgresUrl } from '../backends/postgres/url.js';
import type { LogLevel } from '../log.js';
import { type ConfigFile, ConfigError, expandHome } from './config.js';
import { KEY_SOURCE_VARS, type KeySource } from './encryptionKey.js';
import { storeOption } from './storeEnv.js';

/**
 * The effective settings of `serve` and of every command, each from the first source that
 * gives it: flag > environment > workspace config file > user config file > default.
 *
 * The store: --store / --store-env (flags); with --workspace DIR the store is that workspace's
 * (its config file's store/storeEnv, else DIR/.session-sidecar) — the environment and the user
 * file do not move an explicitly named workspace's store; otherwise $SESSION_SIDECAR_STORE,
 * then the workspace (cwd) file, the user file, and <cwd>/.session-sidecar.
 * The PostgreSQL schema from the environment or a file applies only to a PostgreSQL store (a
 * directory store ignores it; only the flag is an error there).
 *
 * Invariant: `from` names a flag, a variable or a file and member — never a value.
 */
export interface Sourced<T> {
  value: T;
  /** Where it came from: '--store', '$SESSION_SIDECAR_STORE', '<file> (store)', 'default'. */
  from: string;
}

export interface Flags {
  store?: string;
  storeEnv?: string;
  workspace?: string;
  pgSchema?: string;
  keyEnv?: string;
  keyFile?: string;
  logLevel?: string;
}

export interface Settings {
  /** The store text: a directory (absolute) or a postgres:// URL (never printed as is). */
  store: Sourced<string>;
  /** The schema, when the store is a PostgreSQL one (undefined: the default). */
  pgSchema?: Sourced<string>;
  /** Where the key comes from (a variable's name or a file's path), and the names its errors use. */
  key?: Sourced<KeySource> & { names: { env: string; file: string } };
  logLevel: Sourced<LogLevel>;
}

export const SETTING_VARS = { store: 'SESSION_SIDECAR_STORE', pgSchema: 'SESSION_SIDECAR_PG_SCHEMA', logLevel: 'SESSION_SIDECAR_LOG_LEVEL', ...KEY_SOURCE_VARS } as const;

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];
const PG_SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** Resolves the settings; StoreEnvError for flag mistakes, ConfigError for an environment or file one (each names its source). */
export function resolveSettings(flags: Flags, files: readonly ConfigFile[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Settings {
  const store = storeOf(flags, files, env, cwd);
  const settings: Settings = { store, logLevel: logLevelOf(flags, files, env) };
  const schema = pgSchemaOf(flags, files, env, isPostgresUrl(store.value));
  if (schema) settings.pgSchema = schema;
  const key = keyOf(flags, files, env);
  if (key) settings.key = key;
  return settings;
}

const member = (f: ConfigFile, key: string) => `${f.path} (${key})`;

function storeOf(flags: Flags, files: readonly ConfigFile[], env: NodeJS.ProcessEnv, cwd: string): Sourced<string> {
  const given = storeOption(flags.store, flags.storeEnv, undefined, env);
  if (given !== undefined) return { value: isPostgresUrl(given) ? given : path.resolve(given), from: flags.storeEnv !== undefined ? `--store-env ${flags.storeEnv}` : '--store' };
  const candidates = flags.workspace !== undefined ? files.filter((f) => f.where === 'workspace') : files;
  if (flags.workspace === undefined && env[SETTING_VARS.store]) {
    const v = env[SETTING_VARS.store] as string;
    return { value: isPostgresUrl(v) ? v : path.resolve(v), from: `$${SETTING_VARS.store}` };
  }
  for (const f of candidates) {
    if (f.values.store !== undefined) {
      const v = f.values.store;
      return { value: isPostgresUrl(v) ? v : path.resolve(expandHome(v, env)), from: member(f, 'store') };
    }
    if (f.values.storeEnv !== undefined) {
      const name = f.values.storeEnv;
      const v = env[name];
      if (v === undefined || v.trim() === '') throw new ConfigError(f.path, `storeEnv ${name}: the environment variable ${name} is ${v === undefined ? 'not set' : 'empty'}`);
      return { value: isPostgresUrl(v) ? v : path.resolve(v), from: `${member(f, 'storeEnv')}: $${name}` };
    }
  }
  return { value: path.resolve(flags.workspace ?? cwd, '.session-sidecar'), from: flags.workspace !== undefined ? '--workspace' : 'default (the working directory\'s .session-sidecar)' };
}

function pgSchemaOf(flags: Flags, files: readonly ConfigFile[], env: NodeJS.ProcessEnv, postgres: boolean): Sourced<string> | undefined {
  if (flags.pgSchema !== undefined) return { value: flags.pgSchema, from: '--pg-schema' }; // its checks stay the caller's (usage errors)
  if (!postgres) return undefined;
  const v = env[SETTING_VARS.pgSchema];
  if (v) {
    if (!PG_SCHEMA.test(v)) throw new ConfigError(`$${SETTING_VARS.pgSchema}`, 'must match [a-z_][a-z0-9_]{0,62}');
    return { value: v, from: `$${SETTING_VARS.pgSchema}` };
  }
  const f = files.find((c) => c.values.pgSchema !== undefined);
  return f ? { value: f.values.pgSchema as string, from: member(f, 'pgSchema') } : undefined;
}

function logLevelOf(flags: Flags, files: readonly ConfigFile[], env: NodeJS.ProcessEnv): Sourced<LogLevel> {
  if (flags.logLevel !== undefined) return { value: flags.logLevel as LogLevel, from: '--log-level' }; // checked by serve
  const v = env[SETTING_VARS.logLevel];
  if (v) {
    if (!LOG_LEVELS.includes(v as LogLevel)) throw new ConfigError(`$${SETTING_VARS.logLevel}`, 'must be error, warn, info or debug');
    return { value: v as LogLevel, from: `$${SETTING_VARS.logLevel}` };
  }
  const f = files.find((c) => c.values.logLevel !== undefined);
  return f ? { value: f.values.logLevel as LogLevel, from: member(f, 'logLevel') } : { value: 'warn', from: 'default' };
}

function keyOf(flags: Flags, files: readonly ConfigFile[], env: NodeJS.ProcessEnv): Settings['key'] {
  if (flags.keyEnv !== undefined || flags.keyFile !== undefined) {
    const src: KeySource = { ...(flags.keyEnv !== undefined ? { env: flags.keyEnv } : {}), ...(flags.keyFile !== undefined ? { file: flags.keyFile } : {}) };
    return { value: src, from: flags.keyEnv !== undefined ? '--encryption-key-env' : '--encryption-key-file', names: { env: '--encryption-key-env', file: '--encryption-key-file' } };
  }
  const e = env[KEY_SOURCE_VARS.env] || undefined;
  const fl = env[KEY_SOURCE_VARS.file] || undefined;
  if (e !== undefined || fl !== undefined) {
    const src: KeySource = { ...(e !== undefined ? { env: e } : {}), ...(fl !== undefined ? { file: fl } : {}) };
    return { value: src, from: `$${e !== undefined ? KEY_SOURCE_VARS.env : KEY_SOURCE_VARS.file}`, names: { env: `$${KEY_SOURCE_VARS.env}`, file: `$${KEY_SOURCE_VARS.file}` } };
  }
  for (const f of files) {
    if (f.values.encryptionKeyEnv !== undefined) return { value: { env: f.values.encryptionKeyEnv }, from: member(f, 'encryptionKeyEnv'), names: { env: `config file ${member(f, 'encryptionKeyEnv')}`, file: '' } };
    if (f.values.encryptionKeyFile !== undefined) {
      return { value: { file: expandHome(f.values.encryptionKeyFile, env) }, from: member(f, 'encryptionKeyFile'), names: { env: '', file: `config file ${member(f, 'encryptionKeyFile')}` } };
    }
  }
  return undefined;
}
