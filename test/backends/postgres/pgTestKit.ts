/**
 * Shared pieces of the PostgreSQL backend tests: the server (test/pg/pgServer.ts), a backend
 * per test in its own schema (closed after the test), and record builders.
 */
import { afterAll, afterEach } from 'vitest';
import { openPostgresBackend, type PostgresBackend, type PostgresBackendOptions } from '../../../src/backends/postgres/backend.js';
import { recordCrc, type SealedHeader, type SealedRecord, type Snapshot } from '../../../src/backends/postgres/types.js';
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

export function header(sessionId: string, title = 'test'): SealedHeader {
  const createdAt = new Date().toISOString();
  return { sessionId, createdAt, text: JSON.stringify({ format: 'session-sidecar/journal', version: 1, sessionId, createdAt, title }) };
}

export function recs(fromSeq: number, n: number, kind = 'message', body = 'hello'): SealedRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const seq = fromSeq + i;
    return { seq, ts: new Date().toISOString(), kind, text: JSON.stringify({ kind, message: { role: 'user', content: `${body} ${seq}` } }) };
  });
}

export function snap(label: string | null = null): Snapshot {
  return { turn: label, runtime: null, usage: null, firstMessage: label, lastMessage: label, header: null };
}

export { recordCrc };
