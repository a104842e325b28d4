/**
 * `migrate` into PostgreSQL treats the database password as a registered secret, as `serve`
 * does: a directory-store session quoting it (written where the password was not known) is
 * refused, not copied, and no row of the destination holds it; the other sessions are copied.
 * The URL comes by --to-store-env (the shared test cluster trusts local connections: the
 * password is carried, never checked).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli } from './helpers.js';
import { dumpSchema, PASSWORD, withPassword } from './pgCliKit.js';

describe.skipIf(pgSkip)('migrate into PostgreSQL: the database password is a secret there too', () => {
  it('a session quoting it is refused; the others are copied; no row holds it; nothing prints it', async () => {
    const root = path.join(tempDir('sidecar-migpw-'), 'store');
    const store = new FileSessionStore(root, { leases: false });
    const { sessionId: quoting } = await store.create({ title: 'pasted a connection string' });
    await store.append(quoting, [msg('user', `connect with the password ${PASSWORD} please`)]);
    const { sessionId: clean } = await store.create({ title: 'nothing secret' });
    await store.append(clean, [msg('user', 'hello')]);
    await store.closeAll();

    const url = await pgUrl();
    const schema = freshSchema('migpw');
    const r = await runCli(['migrate', '--yes', '--from', root, '--to-store-env', 'SS_TO', '--pg-schema', schema], { env: { SS_TO: withPassword(url) } });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`session ${quoting} not copied: .*registered secret`));
    expect(r.stdout).toContain(clean);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    const rows = await dumpSchema(url, schema);
    expect(rows).toContain(clean);
    expect(rows).not.toContain(quoting);
    expect(rows).not.toContain(PASSWORD);
  }, 60_000);
});
