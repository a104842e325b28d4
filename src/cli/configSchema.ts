import { z } from 'zod';

/**
 * The config file's members (`.session-sidecar/config.json` of a workspace, or
 * `$XDG_CONFIG_HOME/session-sidecar/config.json`). Strict: an unknown member is an error naming
 * it. It holds no secret: the encryption key and a database password come by an environment
 * variable NAME or a key file PATH, never themselves (config.ts refuses a value that looks like
 * a key and a URL that carries a password, without quoting either).
 */
const ENV_NAME = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable ([A-Za-z_][A-Za-z0-9_]*)');
/** Paths are absolute or ~/...: a relative one would depend on the directory a command runs in. */
const PATH = z.string().min(1).refine((p) => p.startsWith('/') || p.startsWith('~/'), 'must be an absolute path (or start with ~/)');

export const CONFIG_SCHEMA = z.strictObject({
  /** The store: a directory (absolute or ~/...), or a postgres:// URL without a password. */
  store: z.string().min(1).optional(),
  /** The store (a directory or a URL) read from this environment variable. */
  storeEnv: ENV_NAME.optional(),
  /** The name of the environment variable holding the store's key (base64). */
  encryptionKeyEnv: ENV_NAME.optional(),
  /** The key file's path (mode 0600, owned by you). */
  encryptionKeyFile: PATH.optional(),
  /** The PostgreSQL schema of the store (used only with a PostgreSQL store). */
  pgSchema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must match [a-z_][a-z0-9_]{0,62}').optional(),
  /** serve's log level. */
  logLevel: z.enum(['error', 'warn', 'info', 'debug']).optional(),
}).refine((c) => c.store === undefined || c.storeEnv === undefined, { message: 'store and storeEnv exclude each other', path: ['storeEnv'] })
  .refine((c) => c.encryptionKeyEnv === undefined || c.encryptionKeyFile === undefined, { message: 'encryptionKeyEnv and encryptionKeyFile exclude each other', path: ['encryptionKeyFile'] });

export type ConfigValues = z.infer<typeof CONFIG_SCHEMA>;

/** The members, for `config show` and the docs (in the schema's order). */
export const CONFIG_KEYS = ['store', 'storeEnv', 'encryptionKeyEnv', 'encryptionKeyFile', 'pgSchema', 'logLevel'] as const;
