import { commandList } from './commands.js';

/** Every option of serve (src/cli.ts parseServe): its usage (USAGE) lists each (test/cli/helpFlags.test.ts). */
export const SERVE_OPTIONS = {
  store: { type: 'string' }, 'store-env': { type: 'string' }, workspace: { type: 'string' }, framing: { type: 'string', default: 'auto' },
  'max-message-bytes': { type: 'string', default: String(32 << 20) }, 'log-level': { type: 'string' },
  'lease-stale-ms': { type: 'string', default: '10000' }, 'pg-schema': { type: 'string' }, 'pg-pool-max': { type: 'string' },
  'pg-pooler': { type: 'string' }, 'pg-listen-url': { type: 'string' }, 'pg-listen-url-env': { type: 'string' },
  'encryption-key-env': { type: 'string' }, 'encryption-key-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' },
} as const;

/** `session-sidecar --help`: the commands and serve's options (src/cli.ts parseServe). */
export const USAGE = `session-sidecar — durable, secret-safe session storage for AI agents, over stdio JSON-RPC 2.0

Usage:
  session-sidecar [serve] [options]   serve the protocol on stdin/stdout
  session-sidecar <command> [args]    inspect or manage a store (the inspection commands are
                                      read-only and safe while it is served; prune, trash
                                      restore/empty, rekey and migrate write)
  session-sidecar --help (-h) | --version (-v)

Commands (each takes --store DIR|URL / --store-env NAME / --workspace DIR; see
'session-sidecar <command> --help'):
${commandList()}

Options (serve):
  --store DIR|URL          the store directory (default: <workspace>/.session-sidecar,
                           or $SESSION_SIDECAR_STORE when set), or a PostgreSQL database:
                           postgres://user:pass@host:port/db (also postgresql://,
                           ?sslmode=..., a unix socket with ?host=/dir)
  --store-env NAME         the same, read from the environment variable NAME: keeps a URL's
                           password off the command line (/proc/PID/cmdline is readable by
                           every local user); or give the password by PGPASSWORD, PGPASSFILE
                           or ~/.pgpass. The password is a registered secret: never printed,
                           never stored (a record quoting it is refused)
  --workspace DIR          the workspace whose .session-sidecar/ is the store (default: cwd);
                           with a PostgreSQL store, where tool scratch directories go
  --pg-schema NAME         the PostgreSQL schema of the store (default session_sidecar)
  --pg-pool-max N          pooled PostgreSQL connections (default 4, 1..100); the LISTEN
                           connection is one more, so a sidecar holds at most N + 1
  --pg-pooler transaction  --store is a transaction-pooling proxy (PgBouncer pool_mode =
                           transaction): no startup settings, SET LOCAL in each transaction
  --pg-listen-url URL      where the LISTEN connection goes (default: --store); with
                           --pg-pooler it must reach PostgreSQL directly. Keep its password
                           off the command line: PGPASSWORD, ~/.pgpass, or
  --pg-listen-url-env NAME the same URL read from the environment variable NAME
  --framing MODE           auto (default: decided by the first byte), lsp (Content-Length
                           headers) or ndjson (one JSON message per line)
  --max-message-bytes N    largest accepted message (default 33554432 = 32 MiB)
  --log-level LEVEL        error | warn (default) | info | debug; logs go to stderr
  --lease-stale-ms N       a writer lease left by a killed process is taken over after
                           N ms without refresh (default 10000, 5000..15000)
  --encryption-key-env NAME   encrypt the store at rest with the key in $NAME (base64 of
                           32 random bytes: head -c32 /dev/urandom | base64), a directory
                           store or a PostgreSQL one
  --encryption-key-file PATH  the same key read from PATH (mode 0600, owned by you; a
                           symbolic link is refused). An encrypted store needs its key to
                           be served or inspected; 'session-sidecar rekey' changes it.
                           Without either option: $SESSION_SIDECAR_ENCRYPTION_KEY_ENV (the
                           name of the variable holding the key) or
                           $SESSION_SIDECAR_ENCRYPTION_KEY_FILE (the key file's path)

A client spawns this process, then sends 'initialize'. The protocol: protocol/README.md.
`;

/** Printed on stderr when serve's stdin is a terminal (someone ran it by hand). */
export const TTY_HINT = `session-sidecar: this is a JSON-RPC server that talks to a program on stdin/stdout.
Spawn it from your agent (see README.md); 'session-sidecar --help' lists the options.
Waiting for JSON-RPC messages on stdin (Ctrl-D to end)...
`;
