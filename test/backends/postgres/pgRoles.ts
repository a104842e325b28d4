/**
 * Database roles for the least-privilege tests: a login role per test (roles are cluster-wide,
 * so the name carries the test's schema), given exactly the GRANTs protocol/STORAGE.md
 * documents for a serving role. The shared cluster uses trust auth: no password.
 */
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { pgUrl } from './pgTestKit.js';

/** An owner (superuser) connection set on the shared cluster; close it after use. */
export async function ownerConnections(schema: string): Promise<PgConnections> {
  return PgConnections.open({ target: parsePostgresUrl(await pgUrl()), schema, max: 2 });
}

/** `pg migrate` as the owner, with a list standing in for a binary. */
export async function migrateAsOwner(schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const c = await ownerConnections(schema);
  try {
    return (await migrate(c, schema, migrations)).applied;
  } finally {
    await c.close();
  }
}

/** The statements STORAGE.md gives for a DML-only serving role of `schema` (this schema has no sequences or functions). */
export function servingGrants(schema: string, role: string): string[] {
  return [
    `GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`,
  ];
}

/** A new login role with no rights beyond PUBLIC's (CONNECT, TEMP); its URL. */
export async function loginRole(schema: string, suffix: string, grants: (role: string) => string[] = () => []): Promise<{ role: string; url: string }> {
  const role = `${schema}_${suffix}`.slice(0, 63);
  const c = await ownerConnections(schema);
  try {
    await c.query(`CREATE ROLE "${role}" LOGIN`);
    for (const g of grants(role)) await c.query(g);
  } finally {
    await c.close();
  }
  const url = (await pgUrl()).replace(/^postgres:\/\/postgres@/, `postgres://${role}@`);
  if (!url.includes(`//${role}@`)) throw new Error('the test cluster URL has an unexpected shape');
  return { role, url };
}
