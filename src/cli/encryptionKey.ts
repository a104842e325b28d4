import fs from 'node:fs';
import { KeyFormatError, parseKey, type StoreKey } from '../durable/storeKey.js';

/**
 * The store key of `--encryption-key-env NAME` (base64 in that environment variable) or
 * `--encryption-key-file PATH` (base64 in a regular file of ours, mode 0600 or stricter, opened
 * with O_NOFOLLOW). At most one of the two. Every refusal is a KeyOptionError whose message
 * names the option, never the key or any part of it.
 */
export class KeyOptionError extends Error {}

const MAX_KEY_FILE_BYTES = 4096;

export interface KeySource {
  env?: string;
  file?: string;
}

export function loadKey(src: KeySource, env: NodeJS.ProcessEnv = process.env, flag = '--encryption-key', names = { env: `${flag}-env`, file: `${flag}-file` }): StoreKey | undefined {
  if (src.env !== undefined && src.file !== undefined) throw new KeyOptionError(`${names.env} and ${names.file} exclude each other`);
  if (src.env !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(src.env)) throw new KeyOptionError(`${names.env} needs an environment variable name`);
    const text = env[src.env];
    if (text === undefined || text === '') throw new KeyOptionError(`${names.env} ${src.env}: the variable is not set`);
    return parsed(text, `${names.env} ${src.env}`);
  }
  if (src.file !== undefined) return parsed(readKeyFile(src.file, names.file), names.file);
  return undefined;
}

/**
 * Where a store's key comes from when no option names it, so that it need not be repeated on
 * every command: `SESSION_SIDECAR_ENCRYPTION_KEY_ENV` holds the NAME of the variable with the
 * key, `SESSION_SIDECAR_ENCRYPTION_KEY_FILE` the path of the key file — never the key itself.
 */
export const KEY_SOURCE_VARS = { env: 'SESSION_SIDECAR_ENCRYPTION_KEY_ENV', file: 'SESSION_SIDECAR_ENCRYPTION_KEY_FILE' } as const;

/** The store key of --encryption-key-env/--encryption-key-file, else of the KEY_SOURCE_VARS; undefined for none. */
export function storeKeyFrom(flags: KeySource, env: NodeJS.ProcessEnv = process.env): StoreKey | undefined {
  if (flags.env !== undefined || flags.file !== undefined) return loadKey(flags, env);
  const fromEnv = { env: env[KEY_SOURCE_VARS.env] || undefined, file: env[KEY_SOURCE_VARS.file] || undefined };
  return loadKey(fromEnv.env !== undefined ? { env: fromEnv.env, ...(fromEnv.file !== undefined ? { file: fromEnv.file } : {}) } : fromEnv.file !== undefined ? { file: fromEnv.file } : {}, env, '', { env: `$${KEY_SOURCE_VARS.env}`, file: `$${KEY_SOURCE_VARS.file}` });
}

/** The store key of resolved settings (settings.ts), its errors naming the source (flag, variable, config file member). */
export function keyFromSettings(settings: { key?: { value: KeySource; names: { env: string; file: string } } }, env: NodeJS.ProcessEnv = process.env): StoreKey | undefined {
  return settings.key ? loadKey(settings.key.value, env, '', settings.key.names) : undefined;
}

function parsed(text: string, where: string): StoreKey {
  try {
    return parseKey(text);
  } catch (e) {
    throw new KeyOptionError(`${where}: ${e instanceof KeyFormatError ? e.message : 'malformed key'}`);
  }
}

function readKeyFile(file: string, flag: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new KeyOptionError(code === 'ELOOP' ? `${flag}: the key file is a symbolic link (refused)` : `${flag}: cannot open the key file (${code ?? 'error'})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new KeyOptionError(`${flag}: the key file is not a regular file`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new KeyOptionError(`${flag}: the key file is not owned by this user`);
    if ((st.mode & 0o077) !== 0) throw new KeyOptionError(`${flag}: the key file is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
    if (st.size > MAX_KEY_FILE_BYTES) throw new KeyOptionError(`${flag}: the key file is too large to hold a key`);
    const buf = Buffer.alloc(MAX_KEY_FILE_BYTES);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.toString('utf8', 0, n);
  } finally {
    fs.closeSync(fd);
  }
}
