import type { StoreTarget } from './storeTarget.js';
import type { DoctorFinding } from './doctorReport.js';

type PgTarget = Extract<StoreTarget, { kind: 'postgres' }>;

/**
 * doctor's PostgreSQL checks, on one read-only connection of its own: the server reachable (and
 * the login accepted), the schema's migrations against this binary's, and the privileges a
 * sidecar needs on every table of the schema (USAGE on it; SELECT, INSERT, UPDATE, DELETE on its
 * tables). Errors are mapped (backends/postgres/errors.ts): no server text, no password.
 */
export async function pgFindings(t: PgTarget): Promise<DoctorFinding[]> {
  const [{ PgConnections }, { parsePostgresUrl }, { storeErrorOf }, { readSchemaStatus, servable }] = await Promise.all([
    import('../backends/postgres/pool.js'), import('../backends/postgres/url.js'), import('../backends/postgres/errors.js'), import('../backends/postgres/schemaStatus.js'),
  ]);
  const found: DoctorFinding[] = [];
  let conns;
  try {
    conns = await PgConnections.open({ target: parsePostgresUrl(t.url), schema: t.schema, max: 1, applicationName: 'session-sidecar-doctor', readOnly: true });
    await conns.query('SELECT 1');
  } catch (e) {
    await conns?.close().catch(() => undefined);
    const mapped = storeErrorOf(e) as Error;
    found.push({ status: 'problem', check: 'postgres', message: `cannot reach the store: ${mapped.message}`, advice: 'check the URL (host, port, database, user), the password source (PGPASSWORD, ~/.pgpass, PGPASSFILE) and that the server accepts this host (pg_hba.conf); session-sidecar pg status --store URL shows the same error' });
    return found;
  }
  try {
    found.push({ status: 'ok', check: 'postgres', message: `reachable: ${t.display}` });
    const s = await readSchemaStatus(conns, t.schema);
    if (s.state === 'noSchema') {
      found.push({ status: 'problem', check: 'schema', message: `there is no session store in schema ${t.schema}`, advice: `as the schema owner: session-sidecar pg migrate --store URL --pg-schema ${t.schema}` });
      return found;
    }
    if (servable(s)) found.push({ status: 'ok', check: 'schema', message: `schema ${t.schema} at version ${s.version} (this binary knows ${s.known})` });
    else if (s.state === 'missing') found.push({ status: 'problem', check: 'schema', message: `schema ${t.schema} lacks migrations ${s.missing.join(', ')}`, advice: `as the schema owner: session-sidecar pg migrate --store URL --pg-schema ${t.schema}` });
    else found.push({ status: 'problem', check: 'schema', message: `schema ${t.schema} has a migration this binary cannot serve (version ${s.version}, it knows ${s.known})`, advice: 'upgrade session-sidecar to the version that migrated the schema' });
    const rows = await conns.query<{ table: string; missing: string[] }>(
      `SELECT c.relname AS table, array_remove(ARRAY[
         CASE WHEN has_table_privilege(c.oid, 'SELECT') THEN NULL ELSE 'SELECT' END,
         CASE WHEN has_table_privilege(c.oid, 'INSERT') THEN NULL ELSE 'INSERT' END,
         CASE WHEN has_table_privilege(c.oid, 'UPDATE') THEN NULL ELSE 'UPDATE' END,
         CASE WHEN has_table_privilege(c.oid, 'DELETE') THEN NULL ELSE 'DELETE' END], NULL) AS missing
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`, [t.schema]);
    const usage = await conns.query<{ ok: boolean }>('SELECT has_schema_privilege($1, \'USAGE\') AS ok', [t.schema]);
    const lacking = rows.filter((r) => r.missing.length > 0);
    if (usage[0]?.ok === false) found.push({ status: 'problem', check: 'privileges', message: `this login has no USAGE on schema ${t.schema}`, advice: `as the schema owner: GRANT USAGE ON SCHEMA ${t.schema} TO <this login>` });
    if (lacking.length === 0) found.push({ status: 'ok', check: 'privileges', message: `this login may read and write every table of ${t.schema} (${rows.length})` });
    for (const r of lacking) found.push({ status: 'problem', check: 'privileges', message: `this login lacks ${r.missing.join(', ')} on ${t.schema}.${r.table}`, advice: `as the schema owner: GRANT ${r.missing.join(', ')} ON ${t.schema}.${r.table} TO <this login>` });
  } catch (e) {
    found.push({ status: 'problem', check: 'postgres', message: `a check failed: ${(storeErrorOf(e) as Error).message}`, advice: 'session-sidecar pg status --store URL' });
  } finally {
    await conns.close();
  }
  return found;
}
