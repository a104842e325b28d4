/**
 * `--store-env NAME`: the store (a directory or a PostgreSQL URL) read from the environment
 * variable NAME, so that a URL's password is never in the command line (`/proc/PID/cmdline` is
 * readable by every local user; a process's environment only by its own user and root).
 *
 * Invariant: no message here quotes the variable's value — only its name, and a malformed
 * name is not quoted either (someone may have passed the URL itself as the name).
 */

/** A mistake in the store options: the caller turns it into its own usage error. */
export class StoreEnvError extends Error {}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The store text of `--store` / `--store-env` (`flags` names the pair when it is another, such
 * as `--from` / `--from-store-env`), or undefined when neither is given. The two exclude each other.
 */
export function storeOption(
  store: string | undefined, storeEnv: string | undefined, flags = { value: '--store', env: '--store-env' }, env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (storeEnv === undefined) return store;
  if (store !== undefined) throw new StoreEnvError(`${flags.value} and ${flags.env} exclude each other (give the store one way)`);
  if (!ENV_NAME.test(storeEnv)) {
    throw new StoreEnvError(`${flags.env} takes the NAME of an environment variable ([A-Za-z_][A-Za-z0-9_]*) that holds it, not the value itself`);
  }
  const value = env[storeEnv];
  if (value === undefined) throw new StoreEnvError(`${flags.env} ${storeEnv}: the environment variable ${storeEnv} is not set`);
  if (value.trim() === '') throw new StoreEnvError(`${flags.env} ${storeEnv}: the environment variable ${storeEnv} is empty`);
  return value;
}
