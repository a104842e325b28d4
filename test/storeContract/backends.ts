/**
 * The store contract kit: the SessionStore backends, each able to give a second instance on
 * the same data (a restart, or another machine), so one test body runs against all of them.
 *
 * - `file`: FileSessionStore on a temporary directory, writer leases on (as `serve` runs it).
 * - `postgres`: the core's Sessions over a PostgresBackend on a fresh schema of the shared test
 *   cluster (test/pg/pgServer.ts). Without PostgreSQL it is skipped with the printed reason; under
 *   CI=true pgAvailability() throws instead, so CI cannot pass by skipping.
 * - `memory`: the core's Sessions over a MemoryBackend (the ephemeral sessions' backend), which
 *   proves the port: the same contract over a third backend.
 * - `postgres, encrypted`: `postgres` with an encryption key (src/backends/postgres/sealing.ts):
 *   the whole contract over sealed values.
 *
 * Every instance a test makes is closed after the test (closeAll), crashed ones excepted.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { StoreKey } from '../../src/durable/storeKey.js';
import fs from 'node:fs';
import path from 'node:path';
import pgLib from 'pg';
import { afterAll, afterEach, describe, expect } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import type { PostgresBackend } from '../../src/backends/postgres/backend.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { MemoryBackend } from '../../src/backends/memory/memoryBackend.js';
import type { Fence } from '../../src/core/port.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { StoreError, type StoreErrorKind } from '../../src/domain/errors.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { FileBackend } from '../../src/backends/file/fileBackend.js';
import type { RecordInput, SessionStore, StoredRecord } from '../../src/domain/types.js';
import type { SecretSet } from '../../src/domain/secrets/knownSecrets.js';
import { tempDir } from '../helpers.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';

export type BackendName = 'file' | 'postgres' | 'memory';

/** Options every instance of a test's store shares (what a sidecar's command line would give). */
export interface StoreOpts {
  env?: NodeJS.ProcessEnv;
  vocabulary?: readonly string[];
  maxRecordBytes?: number;
  readOnly?: boolean;
  /** The secret set the instance gates against (shared with an ephemeral store, say). */
  secrets?: SecretSet;
}

/** One store's data (a directory, or a schema) and the instances opened on it. */
export interface StoreFixture {
  backend: BackendName;
  /** The first instance. */
  store: SessionStore;
  /** Another instance on the same data: a restarted sidecar, or one on another machine. */
  reopen(opts?: StoreOpts): Promise<SessionStore>;
  /**
   * Drops an instance as a SIGKILL would: nothing closed, its writer leases takeable at once
   * (file: abandon(); postgres: its connections closed without releasing, and gone from the
   * server). The instance must not be used again.
   */
  crash(s: SessionStore): Promise<void>;
  /**
   * Every byte the backend keeps, as text to search: every file under the store's root (file),
   * every row of every table of the schema, as PostgreSQL prints it (postgres; bytea as hex).
   */
  dump(): Promise<string>;
  /** The backend seals what it keeps (dump() then shows ciphertext only). */
  encrypted?: boolean;
}

export interface Backend {
  name: BackendName;
  /** Shown in the describe title when it differs from the name (a variant of a backend). */
  label?: string;
  /** null when it can run, else why not (printed). */
  skip: string | null;
  make(opts?: StoreOpts): Promise<StoreFixture>;
}

const live: SessionStore[] = [];
afterEach(async () => {
  for (const s of live.splice(0).reverse()) await s.closeAll().catch(() => undefined);
});
afterAll(() => releaseSharedCluster());

const fileBackend: Backend = {
  name: 'file',
  skip: null,
  async make(opts = {}) {
    const root = tempDir('contract-file-');
    const open = (o: StoreOpts) => {
      const s = new FileSessionStore(root, { leases: true, ...o });
      live.push(s);
      return s;
    };
    return {
      backend: 'file',
      store: open(opts),
      reopen: async (o = opts) => open(o),
      crash: async (s) => {
        (s as FileSessionStore).abandon();
        live.splice(live.indexOf(s), 1);
      },
      dump: async () => filesUnder(root).map((f) => fs.readFileSync(f).toString('latin1')).join('\n'),
    };
  },
};

let pgSkip: string | null | undefined;
/** `postgres`, or (`key`) the same encrypted at rest: every test of the contract runs over sealed values too. */
const postgresOf = (key?: StoreKey): Backend => ({
  name: 'postgres',
  ...(key ? { label: 'postgres, encrypted' } : {}),
  get skip() {
    pgSkip ??= pgAvailability();
    return pgSkip;
  },
  async make(opts = {}) {
    const { url } = await sharedCluster();
    const schema = freshSchema('contract');
    const localRoot = tempDir('contract-pg-local-');
    const open = async (o: StoreOpts) => {
      // A name of its own, to see in pg_stat_activity when its connections are gone (crash).
      const applicationName = `contract-${randomUUID()}`;
      const db = await openPostgresBackend({ url, schema, applicationName, ...(o.readOnly ? { readOnly: true } : {}), ...(key ? { encryptionKey: key } : {}) });
      const s = new Sessions(db, { scratch: scratchAt(localRoot), ...o });
      live.push(s);
      names.set(s, applicationName);
      return s;
    };
    const names = new Map<SessionStore, string>();
    return {
      backend: 'postgres',
      ...(key ? { encrypted: true } : {}),
      dump: async () => {
        const c = new pgLib.Client({ connectionString: url });
        await c.connect();
        try {
          const tables = await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [schema]);
          const out: string[] = [];
          for (const { table_name: t } of tables.rows as Array<{ table_name: string }>) {
            const rows = await c.query(`SELECT t::text AS row FROM ${schema}.${t} t`);
            for (const r of rows.rows as Array<{ row: string }>) out.push(`${t}: ${r.row}`);
          }
          return out.join('\n');
        } finally {
          await c.end();
        }
      },
      store: await open(opts),
      reopen: (o = opts) => open(o),
      crash: async (s) => {
        live.splice(live.indexOf(s), 1);
        await ((s as Sessions).port as PostgresBackend).close();
        // The server ends a backend shortly after its client went: wait until none is left, as a
        // takeover after a real kill would find it.
        const c = new pgLib.Client({ connectionString: url });
        await c.connect();
        try {
          for (let i = 0; i < 500; i++) {
            const r = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [names.get(s)]);
            if (r.rows[0].n === 0) return;
            await new Promise((res) => setTimeout(res, 10));
          }
          throw new Error('the crashed instance\'s connections did not go away');
        } finally {
          await c.end();
        }
      },
    };
  },
});

/**
 * `memory`: the core's Sessions over one MemoryBackend (ephemeral sessions' backend): another
 * instance is another Sessions over the same backend (what a restart would keep if memory
 * survived it); a crash drops an instance unclosed (its leases are taken over by the next).
 */
const memoryBackend: Backend = {
  name: 'memory',
  skip: null,
  async make(opts = {}) {
    const backend = new MemoryBackend();
    const localRoot = tempDir('contract-memory-local-'); // scratch directories: the router refuses them for ephemeral sessions, the core has them
    // Instances share the backend: closing one (closeAll) must not drop what the others see.
    const shared = Object.create(backend, { close: { value: async () => {} } }) as MemoryBackend;
    const open = (o: StoreOpts) => {
      const s = new Sessions(shared, { scratch: scratchAt(localRoot), ...o });
      live.push(s);
      return s;
    };
    return {
      backend: 'memory',
      store: open(opts),
      reopen: async (o = opts) => open(o),
      crash: async (s) => {
        live.splice(live.indexOf(s), 1);
        // A dead process's leases are taken over at once: its writers' fences are given back.
        const open = (s as unknown as { c: { sessions: Map<string, { fence?: Fence }> } }).c.sessions;
        for (const { fence } of open.values()) if (fence) await backend.leases.release(fence);
        open.clear();
      },
      dump: async () => backend.dump(),
    };
  },
};

export const BACKENDS: Backend[] = [fileBackend, postgresOf(), postgresOf(new StoreKey(randomBytes(32))), memoryBackend];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * describe() once per backend; the body gets a `setup` that makes a fresh store fixture.
 * A backend that cannot run here is skipped with its reason printed.
 */
export function eachBackend(title: string, body: (setup: (opts?: StoreOpts) => Promise<StoreFixture>, name: BackendName) => void): void {
  for (const b of BACKENDS) {
    const skip = b.skip;
    describe.skipIf(skip !== null)(`${title} [${b.label ?? b.name}]${skip ? ` (skipped: ${skip})` : ''}`, () => body((o) => b.make(o), b.name));
  }
}

// ---------------------------------------------------------------------------------------------
// record helpers shared by the contract tests

export type Msg = Record<string, unknown> & { role: string };
export const msg = (m: Msg): RecordInput => ({ kind: 'message', message: m });
export const user = (content: string) => msg({ role: 'user', content });
export const final = (content: string) => msg({ role: 'assistant', content });
export const call = (id: string, name = 'bash', args = '{"cmd":"ls"}') => ({ id, name, arguments: args });
export const calls = (...ids: string[]) => msg({ role: 'assistant', content: null, toolCalls: ids.map((id) => call(id)) });
export const tool = (id: string, content: string, name = 'bash') => msg({ role: 'tool', toolCallId: id, name, content });
export const note = (i: number, extra: Record<string, unknown> = {}): RecordInput => ({ kind: 'note', i, ...extra });

export type Rec = StoredRecord & Record<string, unknown>;

/** Every record of the active generation (paged through). */
export async function readAll(s: SessionStore, id: string, opts: { generation?: number; inline?: boolean } = {}): Promise<Rec[]> {
  const out: Rec[] = [];
  for (let after = 0; ;) {
    const page = await s.read(id, { ...opts, afterSeq: after, limit: 1000 });
    out.push(...(page.records as Rec[]));
    if (page.nextAfterSeq === null) return out;
    after = page.nextAfterSeq;
  }
}

/** Awaits `p` and returns the StoreError it rejects with, asserting its kind. */
export async function storeError(p: Promise<unknown> | (() => unknown), kind: StoreErrorKind): Promise<StoreError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err, `expected StoreError ${kind}`).toBeInstanceOf(StoreError);
  expect((err as StoreError).kind, (err as Error).message).toBe(kind);
  return err as StoreError;
}

/** What a client can observe of a session: its records (all fields), turn and lastSeq. */
export async function observe(s: SessionStore, id: string): Promise<{ records: Rec[]; turn: unknown }> {
  return { records: await readAll(s, id), turn: await s.getTurn(id) };
}
