/**
 * The migrations, in order. Each runs with search_path set to the store's schema: the
 * transactional ones together in ONE transaction, then the `concurrently` ones one at a time
 * outside any transaction (migrations.ts).
 *
 * Rules for adding a migration (a DBA and older binaries depend on them):
 * - A published migration (1–4 and every later one that shipped) never changes — not its SQL,
 *   not its version, not a flag once recorded: a schema change is a new entry with the next
 *   version.
 * - An index on a table that may hold rows is built `concurrently: true` with
 *   `CREATE INDEX CONCURRENTLY <index> ...` as its only statement (no IF NOT EXISTS: the
 *   framework checks for a leftover itself) and `index` naming it, so writes go on while it
 *   builds. (Migration 4 predates this and builds inside the transaction; it stays so.)
 * - An index is dropped `concurrently: true` with `dropIndex` naming it (the framework runs the
 *   DROP INDEX CONCURRENTLY): a transactional DROP INDEX takes ACCESS EXCLUSIVE on the table,
 *   and while it waits for a running transaction every writer queues behind it. Its `sql`, run
 *   first in autocommit, must be idempotent (a crash before the recording runs it again) and
 *   take no lock that blocks writers (ALTER TABLE SET (fillfactor) takes SHARE UPDATE EXCLUSIVE).
 * - Expand/contract (rolling upgrades): mark a migration `additive: true` only when a binary
 *   that does not know it can keep serving the schema after it — a new table, a new index, a
 *   new NULLable column without a default that old writers never need to fill, dropping an
 *   index that older binaries only use for speed (none is unique, none named in a query). A column
 *   newer binaries keep in step with other data (a derived total) is NOT additive when old
 *   writers would leave it stale; dropping, renaming, tightening (NOT NULL, CHECK) or changing
 *   what a column means is never additive (contract: ship it only after every older binary is
 *   gone). `compatibleDownTo` says it more finely: the oldest known-version of a binary that
 *   may serve after it. What is recorded in `schema_migrations.compatible_down_to` is what older
 *   binaries read (schemaStatus.ts), so a binary never needs to know a newer migration.
 * Defaults (no flags): transactional, not additive — an older binary refuses the schema.
 *
 * Texts are `text`, never jsonb: jsonb would reorder keys and renormalise numbers, so the
 * stored bytes would no longer be the ones the secret gate checked and the checksum covers.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Run outside a transaction (CREATE INDEX CONCURRENTLY), after the transactional ones; needs `index` or `dropIndex`. */
  concurrently?: boolean;
  /** The index a `concurrently` migration builds (unqualified name): an INVALID leftover of it is rebuilt. */
  index?: string;
  /**
   * The index a `concurrently` migration drops instead (unqualified name): the framework runs
   * `DROP INDEX CONCURRENTLY IF EXISTS` itself, after `sql` (one idempotent statement run in
   * autocommit — it may be empty), and records the version once the index is gone.
   */
  dropIndex?: string;
  /**
   * A `concurrently` migration whose index needs this extension (its operator class): the
   * extension is used where it is installed, else created in schema `public` (migrations.ts
   * withExtension); `{extschema}` in `sql` stands for its schema, quoted. When it cannot be had
   * (not installed on the server, no privilege to create it) the migration is recorded WITHOUT
   * its index: the index is an optimisation the store's SQL does not depend on (STORAGE.md says
   * how a DBA adds it later).
   */
  extension?: string;
  /** An older binary may keep serving after it (expand): compatibleDownTo defaults to 1. */
  additive?: boolean;
  /** The oldest known-version of a binary that may serve after this migration (default: additive ? 1 : version). */
  compatibleDownTo?: number;
}

/** What is recorded for `m` in schema_migrations.compatible_down_to. */
export function compatibleDownToOf(m: Migration): number {
  return m.compatibleDownTo ?? (m.additive ? 1 : m.version);
}

/**
 * 2–4 are marked additive as the framework came in: the flag of migration v is read only by a
 * binary that knows fewer than v versions, and the binaries that predate v ≤ 4 predate this
 * rule too (they refuse any newer schema), so it changes nothing for them.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, records, leases, blobs, state values, archived generations',
    sql: `
CREATE TABLE sessions (
  session_id    text PRIMARY KEY,
  header_text   text NOT NULL,            -- exactly as sealed
  header_crc    text NOT NULL,
  created_at    text NOT NULL,            -- the header's createdAt
  updated_at    timestamptz NOT NULL DEFAULT now(),
  generation    integer NOT NULL DEFAULT 0,
  first_seq     bigint NOT NULL DEFAULT 1,
  last_seq      bigint NOT NULL DEFAULT 0,
  last_ts       text,
  record_count  bigint NOT NULL DEFAULT 0,
  stored_bytes  bigint NOT NULL DEFAULT 0,
  turn_text     text,
  runtime_text  text,
  first_message text,
  last_message  text,
  tool_seq      bigint NOT NULL DEFAULT 0,  -- highest reserved toolSeq
  trashed_at    timestamptz
);
CREATE TABLE records (
  session_id text NOT NULL REFERENCES sessions ON DELETE CASCADE,
  generation integer NOT NULL,
  seq        bigint NOT NULL,
  ts         text NOT NULL,
  kind       text NOT NULL,
  text       text NOT NULL,                -- exactly as checked by the secret gate
  crc        text NOT NULL,
  PRIMARY KEY (session_id, generation, seq)
);
CREATE TABLE archived_generations (
  session_id   text NOT NULL REFERENCES sessions ON DELETE CASCADE,
  generation   integer NOT NULL,
  first_seq    bigint NOT NULL,
  last_seq     bigint NOT NULL,
  through_seq  bigint NOT NULL,
  record_count bigint NOT NULL,
  stored_bytes bigint NOT NULL,
  archived_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, generation)
);
CREATE TABLE leases (
  session_id   text PRIMARY KEY,           -- no FK: a lease may precede create
  token        bigint NOT NULL,            -- fencing token, +1 on every acquisition
  holder_host  text NOT NULL,
  holder_pid   integer NOT NULL,
  sidecar_id   text NOT NULL,
  conn_pid     integer NOT NULL,           -- the holder's liveness connection
  conn_start   timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL,
  released_at  timestamptz
);
CREATE TABLE blobs (
  sha256     text PRIMARY KEY,             -- content address: stored once per store
  size       bigint NOT NULL,
  bytes      bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE state_values (
  session_id text NOT NULL REFERENCES sessions ON DELETE CASCADE,
  key        text NOT NULL,
  text       text NOT NULL,
  crc        text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, key)
);
`,
  },
  {
    version: 2,
    additive: true,
    name: 'the effective title/metadata/tags after session/update (engine text)',
    sql: `ALTER TABLE sessions ADD COLUMN header_state text;`,
  },
  {
    version: 3,
    additive: true,
    name: 'usage totals in the session row',
    // NULL in rows written before: the store reduces their totals from the records once.
    sql: 'ALTER TABLE sessions ADD COLUMN usage_text text;',
  },
  {
    version: 4,
    additive: true,
    name: 'session/list order as an index (updatedAt, then session id, newest first; byte order)',
    // The expression is sessions.ts's UPDATED_AT: a list page reads its rows from the cursor on
    // in this order and stops once it has the page, instead of reading every row.
    sql: `CREATE INDEX sessions_by_update ON sessions
  ((GREATEST(COALESCE(last_ts, created_at) COLLATE "C", created_at COLLATE "C")) DESC, (session_id COLLATE "C") DESC)
  WHERE trashed_at IS NULL;`,
  },
  {
    version: 5,
    name: 'the writer\'s fencing token in the session row (the append checks it in its WHERE, not by a lease row lock)',
    // NULL until a writer of this version acquires the session's lease (leases.ts acquire sets it
    // in the takeover's transaction). Not additive in effect: a binary that predates it fences
    // by the lease row only and would not see a takeover by one that fences here: not additive
    // (the default), so an older binary refuses a schema at version 5.
    sql: 'ALTER TABLE sessions ADD COLUMN writer_token bigint;',
  },
  {
    version: 6,
    name: 'HOT updates of the session row: no index over what every commit changes (sessions_by_update dropped), fillfactor 75',
    // Every append rewrites the sessions row (last_seq, last_ts, counters, snapshot). With
    // migration 4's index over last_ts no such update could be HOT: each left a dead row and
    // new entries in both indexes. Without it, only the primary key (session_id, never
    // changed) indexes the table, and fillfactor leaves a quarter of each page free so the new
    // version fits on the same page (HOT) and page pruning reclaims the old one without VACUUM.
    // The fillfactor applies to pages written from now on (VACUUM FULL or pg_repack rewrites
    // the old ones; not needed: rows move to new pages as they are updated).
    // Additive: the index was only an access path — list reads the same rows in the same order
    // by a scan and top-N sort (sessions.ts listByUpdate) — so a binary that knows version 5
    // serves after it, only its list is slower (one that knows only 4 is refused by 5 already).
    // No lock that blocks writers: the drop is CONCURRENTLY, the ALTER takes SHARE UPDATE
    // EXCLUSIVE. The drop waits for every transaction that has the table open (a running
    // pg_dump too); writers go on meanwhile.
    sql: 'ALTER TABLE sessions SET (fillfactor = 75)',
    concurrently: true,
    dropIndex: 'sessions_by_update',
    additive: true,
  },
  {
    version: 7,
    additive: true,
    concurrently: true,
    index: 'records_message_trgm',
    extension: 'pg_trgm',
    name: 'session/search over an index: pg_trgm trigrams of the message records\' text',
    // Partial: only `message` records are searched (search.ts). No column of it changes after
    // its INSERT (records are immutable), so it costs appends one GIN insertion per message
    // (into the pending list: fastupdate) and nothing on the session row's HOT update.
    sql: 'CREATE INDEX CONCURRENTLY records_message_trgm ON records USING gin (text {extschema}.gin_trgm_ops) WHERE kind = \'message\'',
  },
  {
    version: 8,
    name: 'the store\'s encryption marker (encryption at rest: the key id, or a rekey under way)',
    // At most one row (encryptionRow.ts); none: a plaintext store. Not additive: a binary that
    // predates it would ignore the marker, hand sealed texts out as records and write plaintext
    // into an encrypted store, so an older binary refuses a schema at version 8.
    sql: `CREATE TABLE store_encryption (
  one        boolean PRIMARY KEY DEFAULT true CHECK (one),   -- a single row
  key_id     text,                                         -- the key's id (never the key); NULL during a rekey
  rekeying   boolean NOT NULL DEFAULT false,
  rekey_from text,                                         -- during a rekey: the old key's id (NULL: plaintext)
  rekey_to   text,                                         -- during a rekey: the new key's id (NULL: plaintext)
  updated_at timestamptz NOT NULL DEFAULT now()
);`,
  },
];
