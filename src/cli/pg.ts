import { summaryOf } from './commands.js';
import { checkAction, type Command, parseCommand, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { out } from './output.js';
import type { StoreTarget } from './storeTarget.js';

type PgTargetOf = Extract<StoreTarget, { kind: 'postgres' }>;

const { store, 'store-env': storeEnv, 'pg-schema': pgSchema, help } = STORE_OPTIONS;
/** Every option pg accepts (its usage lists each): a PostgreSQL store's, no workspace, no key (migrations read no sealed value). */
const OPTIONS = { store, 'store-env': storeEnv, 'pg-schema': pgSchema, help, status: { type: 'boolean' }, json: { type: 'boolean' } } as const satisfies CommandOptions;

export const pgCommand: Command = {
  name: 'pg',
  summary: summaryOf('pg'),
  options: OPTIONS,
  actions: { migrate: ['status', 'json'], status: ['json'] },
  usage: `Usage: session-sidecar pg migrate --store URL|--store-env NAME [--pg-schema NAME] [--json]
       session-sidecar pg migrate --status --store URL [--pg-schema NAME] [--json]
       session-sidecar pg status --store URL [--pg-schema NAME] [--json]

Administration of a PostgreSQL store.

'migrate' applies the schema migrations this binary knows and the schema does not have yet,
as the role of the URL, which must own the schema (or may create it: CREATE on the database)
— see the owner's rights in protocol/STORAGE.md. Run it with the NEW binary before rolling
the sidecars out: a schema that is current lets 'serve' start with only the DML GRANTs, and
an older sidecar keeps serving after migrations recorded as additive (expand/contract).
No data is dropped or rewritten. Indexes are built (and dropped) CONCURRENTLY: writers go
on; an index left INVALID by an interrupted build is rebuilt, an interrupted drop finished. A
schema newer than this binary may serve is refused, nothing applied. The search index
(migration 7) needs the pg_trgm extension: used where installed, else created in schema public;
when it cannot be (not installed, not permitted) the migration is recorded without the index
and search runs the same SQL without it. Prints each migration applied, then the version.

'status' (or 'migrate --status') changes nothing (read-only connection): prints the schema's
version, the version this binary knows, and whether this binary can serve it.

Exit code: migrate 0 when the schema is current afterwards; status 0 when this binary can
serve the schema as it is, 1 when it cannot (missing migrations, a newer incompatible
schema, no store); 1 on any failure; 2 for usage.

Options:
  --status                 (migrate) only show the status, as 'pg status'
  --json                   the result as JSON
  --store URL              the PostgreSQL store, postgres://user@host:port/db (also
                           postgresql://, ?sslmode=..., a unix socket with ?host=/dir), or
                           $SESSION_SIDECAR_STORE; it is never printed. Keep the password
                           off the command line: --store-env, PGPASSWORD, PGPASSFILE or
                           ~/.pgpass
  --store-env NAME         the store URL read from the environment variable NAME
  --pg-schema NAME         the store's schema (default session_sidecar); migrate creates it
                           when missing
  -h, --help               this help
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 1, max: 1, names: 'migrate or status' });
    if (!p) return out(this.usage), 0;
    const action = p.positionals[0];
    if (action !== 'migrate' && action !== 'status') throw new UsageError(`unknown action '${action}' (migrate or status)`, this.name);
    checkAction(this, action, p.values);
    if (p.target.kind !== 'postgres') throw new UsageError('pg needs a PostgreSQL store (--store postgres://...)', this.name);
    const json = p.values.json === true;
    return action === 'status' || p.values.status === true ? status(p.target, json) : migrateSchema(p.target, json);
  },
};

async function withConnections<T>(t: PgTargetOf, readOnly: boolean, body: (conns: import('../backends/postgres/pool.js').PgConnections) => Promise<T>): Promise<T> {
  const [{ PgConnections }, { parsePostgresUrl }, { storeErrorOf }] = await Promise.all([
    import('../backends/postgres/pool.js'), import('../backends/postgres/url.js'), import('../backends/postgres/errors.js'),
  ]);
  const conns = await PgConnections.open({ target: parsePostgresUrl(t.url), schema: t.schema, max: 1, applicationName: 'session-sidecar-cli', ...(readOnly ? { readOnly: true } : {}) });
  try {
    return await body(conns);
  } catch (e) {
    // Mapped errors carry no database text and no password (errors.ts); others only their kind.
    throw storeErrorOf(e);
  } finally {
    await conns.close();
  }
}

async function migrateSchema(t: PgTargetOf, json: boolean): Promise<number> {
  const [{ migrate }, { MIGRATIONS }, { knownVersion }] = await Promise.all([
    import('../backends/postgres/migrations.js'), import('../backends/postgres/schema.js'), import('../backends/postgres/schemaStatus.js'),
  ]);
  const known = knownVersion(MIGRATIONS);
  if (!json) out(`migrating ${t.display} (this binary knows version ${known})\n`);
  const applied: Array<{ version: number; name: string; concurrently: boolean }> = [];
  const r = await withConnections(t, false, (conns) => migrate(conns, t.schema, MIGRATIONS, {
    onApplied: (m) => {
      applied.push({ version: m.version, name: m.name, concurrently: m.concurrently === true });
      if (!json) out(`applied ${m.version}: ${m.name}${m.concurrently ? (m.dropIndex !== undefined ? ' (index dropped concurrently)' : ' (index built concurrently)') : ''}\n`);
    },
  }));
  if (json) out(`${JSON.stringify({ store: t.display, schema: t.schema, applied, version: r.version, known })}\n`);
  else out(`${applied.length === 0 ? 'nothing to apply: ' : ''}the schema is at version ${r.version}\n`);
  return 0;
}

async function status(t: PgTargetOf, json: boolean): Promise<number> {
  const [{ readSchemaStatus, servable }] = await Promise.all([import('../backends/postgres/schemaStatus.js')]);
  const s = await withConnections(t, true, (conns) => readSchemaStatus(conns, t.schema));
  const canServe = servable(s);
  const why: Record<typeof s.state, string> = {
    current: 'yes',
    newerCompatible: 'yes (newer migrations, all additive for this binary)',
    newerIncompatible: 'no: a newer migration is not compatible with this binary; upgrade it',
    missing: `no: migrations ${s.missing.join(', ')} are missing; run 'session-sidecar pg migrate' as the schema owner`,
    noSchema: `no: there is no session store in schema ${t.schema}; 'session-sidecar pg migrate' creates it`,
  };
  if (json) {
    out(`${JSON.stringify({ store: t.display, schema: t.schema, state: s.state, version: s.version, known: s.known, canServe, missing: s.missing, newer: s.newer })}\n`);
  } else {
    out(`store:             ${t.display}\n`
      + `schema version:    ${s.state === 'noSchema' ? 'none (no store)' : s.version}\n`
      + `this binary knows: ${s.known}\n`
      + `can serve:         ${why[s.state]}\n`
      + s.newer.map((n) => `newer migration ${n.version}: ${n.name} (${n.compatibleDownTo === null ? 'not compatible with older binaries' : `compatible with binaries down to ${n.compatibleDownTo}`})\n`).join(''));
  }
  return canServe ? 0 : 1;
}
