/**
 * Shared pieces of the PostgreSQL backend tests: the server (test/pg/pgServer.ts), a backend
 * per test in its own schema (closed after the test), and record builders.
 */
import { runSql } from '../../pg/ownDatabase.js';
import { afterAll, afterEach } from 'vitest';
import { openPostgresBackend, type PostgresBackend, type PostgresBackendOptions } from '../../../src/backends/postgres/backend.js';
import { recordCrc, type SealedHeader, type SealedRecord, type Snapshot } from '../../../src/backends/postgres/types.js';
import { FinalGate, type Gated } from '../../../src/core/gate.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../../pg/pgServer.js';

/** Why PostgreSQL tests skip here (printed), or null. Throws under CI=true. */
export const pgSkip = pgAvailability();

const open: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
afterAll(() => releaseSharedCluster());

export async function pgUrl(): Promise<string> {
  return (await sharedCluster()).url;
}

/** A backend on the shared cluster; a fresh schema unless one is given. */
export async function backend(o: Partial<PostgresBackendOptions> = {}): Promise<PostgresBackend> {
  const b = await openPostgresBackend({ url: o.url ?? (await pgUrl()), schema: o.schema ?? freshSchema(), ...o });
  open.push(b);
  return b;
}

let idCounter = 0;
/** A ULID-shaped id, increasing within the run. */
export function newId(): string {
  const n = (Date.now() * 1000 + idCounter++).toString(32).toUpperCase().padStart(26, '0');
  return n.slice(-26);
}

/**
 * The core's final gate with no secret registered: what the backend is handed goes through it,
 * as the core's writes do (the port takes gated values only).
 */
export const pass = new FinalGate(new SecretSet());

export function header(sessionId: string, title = 'test'): Gated<SealedHeader> {
  const createdAt = new Date().toISOString();
  return pass.header({ sessionId, createdAt, text: JSON.stringify({ format: 'session-sidecar/journal', version: 1, sessionId, createdAt, title }) }, 1 << 20);
}

export function recs(fromSeq: number, n: number, kind = 'message', body = 'hello', ts = new Date().toISOString()): Array<Gated<SealedRecord>> {
  const texts = Array.from({ length: n }, (_, i) => JSON.stringify({ kind, message: { role: 'user', content: `${body} ${fromSeq + i}` } }));
  const sealed = pass.records(texts, texts.map(() => kind), fromSeq, ts);
  if (!('sealed' in sealed)) throw new Error('refused');
  return sealed.sealed;
}

export function snap(label: string | null = null): Gated<Snapshot> {
  return pass.snapshot({ turn: label, runtime: null, usage: null, firstMessage: label, lastMessage: label, header: null });
}

export { recordCrc };

/** The kind a promise rejects with ('resolved' when it does not). */
export async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return (e as { kind: string }).kind;
  }
}

/** One statement over a connection of its own (raw SQL: what the tests inspect or tamper with). */
export async function sql<R extends Record<string, unknown> = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> {
  return runSql<R>(await pgUrl(), text, params);
}
