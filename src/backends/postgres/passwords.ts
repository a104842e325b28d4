/**
 * The database password, wherever it came from — the store URL, PGPASSWORD, or the password
 * file (PGPASSFILE or ~/.pgpass, read by the `pgpass` package the driver itself uses) — so that
 * the server registers it as a process-wide secret (issue 27): a record quoting it is refused or
 * redacted like any registered secret, and no error or log line shows it. The client key's
 * passphrase (`sslpassword` in the URL) is one too, registered the same way.
 */
import os from 'node:os';
import pgPass from 'pgpass';
import type { PgTarget } from './url.js';

export async function databasePasswords(target: PgTarget, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const found = new Set<string>();
  if (target.password) found.add(target.password);
  if (target.sslPassword) found.add(target.sslPassword);
  if (env.PGPASSWORD) found.add(env.PGPASSWORD);
  const fromFile = await new Promise<string | undefined>((resolve) => {
    try {
      pgPass({ host: target.host, port: target.port, database: target.database ?? target.user ?? os.userInfo().username, user: target.user ?? os.userInfo().username }, resolve);
    } catch {
      resolve(undefined);
    }
  });
  if (fromFile) found.add(fromFile);
  return [...found];
}
