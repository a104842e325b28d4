/**
 * PostgreSQL stores for the command-line tests: a store populated through the PostgreSQL
 * SessionStore (the same code `serve` runs), a dump of a schema's tables ("nothing changed"
 * assertions) and URLs carrying a password that must never be printed.
 */
import { createHash } from 'node:crypto';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { PgConnections } from '../../src/backends/postgres/pool.js';
import { parsePostgresUrl } from '../../src/backends/postgres/url.js';
import { Sessions } from '../../src/core/sessions/sessions.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import type { RecordInput } from '../../src/domain/types.js';
import { tempDir } from '../helpers.js';
import { msg } from './helpers.js';

export const PASSWORD = 'pw-Zq8Xv3Lk9Tm2';

/** The URL with a password in it (trust auth ignores it; it must never appear in any output). */
export function withPassword(url: string): string {
  return url.replace(/^postgres:\/\/postgres@/, `postgres://postgres:${PASSWORD}@`);
}

export async function pgStore(url: string, schema: string): Promise<Sessions> {
  const backend = await openPostgresBackend({ url, schema });
  return new Sessions(backend, { scratch: scratchAt(tempDir('sidecar-pgcli-local-')) });
}

export interface PgFixture {
  chat: string;
  compacted: string;
  trashed: string;
  /** A session with state values and a blob. */
  runtime: string;
  blobText: string;
}

/** Sessions like test/cli/helpers.ts makeStore's, plus a trashed one and runtime data, in `schema`. */
export async function makePgStore(url: string, schema: string): Promise<PgFixture> {
  const store = await pgStore(url, schema);
  try {
    const { sessionId: chat } = await store.create({ title: 'Fix the build', cwd: '/home/me/project', systemPrompt: 'You are careful.' });
    const { turnId } = await store.startTurn(chat, 'user');
    await store.append(chat, [msg('user', 'Why does CI fail?')]);
    await store.append(chat, [msg('assistant', 'Let me look.', { toolCalls: [{ id: 'call_1', name: 'bash', arguments: '{"cmd":"ls"}' }] })]);
    await store.append(chat, [msg('tool', 'a b c', { toolCallId: 'call_1' })]);
    await store.transitionTurn(chat, turnId, { event: 'finish', outcome: 'completed' });

    const { sessionId: compacted } = await store.create({ title: 'Greetings' });
    await store.append(compacted, [msg('user', 'hi'), msg('assistant', 'hello')]);
    await store.compact(compacted, { summary: 'They greeted each other.', throughSeq: 2 });
    await store.append(compacted, [msg('user', 'again?')]);

    const { sessionId: trashed } = await store.create({ title: 'Thrown away' });
    await store.append(trashed, [msg('user', 'forget me')]);
    await store.delete(trashed);

    const blobText = `${'large tool output line\n'.repeat(200)}end`;
    const { sessionId: runtime } = await store.create({ title: 'Runtime', blobThreshold: 1024 });
    await store.setState(runtime, 'plan', { steps: ['a', 'b'] });
    await store.setState(runtime, 'cursor', 7);
    const { toolSeq } = await store.allocateScratch(runtime, 'r1');
    const records: RecordInput[] = [
      { kind: 'toolStart', requestId: 'r1', tool: 'bash', toolSeq },
      { kind: 'toolStream', toolSeq, stream: 'stdout', text: blobText },
      { kind: 'api', direction: 'request', payload: { n: 1 } },
    ];
    await store.append(runtime, records);
    return { chat, compacted, trashed, runtime, blobText };
  } finally {
    await store.closeAll();
  }
}

/** Every row of every table of the schema, in a fixed order: equal dumps mean nothing changed. */
export async function dumpSchema(url: string, schema: string): Promise<string> {
  const conns = await PgConnections.open({ target: parsePostgresUrl(url), schema });
  try {
    const tables = await conns.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
    const out: string[] = [];
    for (const { t } of tables) {
      const rows = await conns.query(`SELECT * FROM "${schema}"."${t}" ORDER BY 1, 2`);
      // One line per row (a readable diff); bytea as its digest (blobs are long).
      for (const row of rows) {
        out.push(`${t}: ${JSON.stringify(row, (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer'
          ? `bytes:${createHash('sha256').update(Buffer.from((v as { data: number[] }).data)).digest('hex')}` : v))}`);
      }
    }
    return out.join('\n');
  } finally {
    await conns.close();
  }
}

export async function schemaExists(url: string, schema: string): Promise<boolean> {
  const conns = await PgConnections.open({ target: parsePostgresUrl(url), schema: 'public' });
  try {
    return (await conns.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).length > 0;
  } finally {
    await conns.close();
  }
}
