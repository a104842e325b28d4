/**
 * Row 10: session/search on PostgreSQL, the scan (every live session listed, every message
 * record read into the sidecar: the path every store had) against the index (migration 7's
 * pg_trgm index, src/backends/postgres/search.ts) — the same searchSessions over the same
 * store, the index hidden for the scan. `sessions` × 40 message records (~200 B each), built
 * straight through the backend (one create of 40 records per session). Two queries: a rare
 * word (one hit: the scan reads everything, the index finds it) and a common one (the first
 * page of 50 hits). Results are checked equal before they are timed. In-process (dist/), on a
 * throwaway cluster (test/pg/pgServer.ts) or SESSION_SIDECAR_TEST_PG.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openPostgresBackend } from '../dist/src/backends/postgres/backend.js';
import { Sessions } from '../dist/src/core/sessions/sessions.js';
import { searchSessions, type Searchable } from '../dist/src/core/services/search.js';
import { FinalGate } from '../dist/src/core/gate.js';
import { SecretSet } from '../dist/src/domain/secrets/knownSecrets.js';
import { scratchAt } from '../dist/src/scratch/localScratch.js';
import { destroyCluster, pgAvailability, startThrowawayCluster, type PgCluster } from '../test/pg/pgServer.js';
import type { Row } from './util.js';

const RECORDS = 40;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november'];

function ulidLike(i: number): string {
  return `01BENCH${i.toString(32).toUpperCase().padStart(19, '0')}`;
}

export async function searchRows(work: string, sessions: number): Promise<Row[]> {
  let skip: string | null;
  try {
    skip = process.env.SESSION_SIDECAR_TEST_PG ? null : pgAvailability();
  } catch (err) {
    skip = (err as Error).message;
  }
  if (skip) {
    process.stderr.write(`bench: search rows skipped: ${skip}\n`);
    return [];
  }
  let cluster: PgCluster | undefined;
  let url = process.env.SESSION_SIDECAR_TEST_PG;
  if (!url) {
    cluster = await startThrowawayCluster(fs.mkdtempSync(path.join('/tmp', 'ss-bench-search-')));
    url = cluster.url;
  }
  const scratch = path.join(work, 'search-scratch');
  fs.mkdirSync(scratch, { recursive: true });
  const backend = await openPostgresBackend({ url, schema: `bench_search_${Date.now().toString(36)}` });
  const store = new Sessions(backend, { scratch: scratchAt(scratch) });
  try {
    const gate = new FinalGate(new SecretSet());
    const t0 = performance.now();
    const rare = Math.floor(sessions * 0.73);
    let next = 0;
    const build = async () => {
      while (next < sessions) {
        const i = next++;
        const sessionId = ulidLike(i);
        const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
        const texts = Array.from({ length: RECORDS }, (_, j) => JSON.stringify({
          kind: 'message',
          message: { role: j % 2 ? 'assistant' : 'user', content: `${WORDS[(i + j) % WORDS.length]} ${WORDS[(i * 3 + j) % WORDS.length]} message ${j} of session ${i}: ${'lorem ipsum dolor sit amet '.repeat(5)}${i === rare && j === 17 ? ' zanzibar' : ''}` },
        }));
        const sealed = gate.records(texts, texts.map(() => 'message'), 1, createdAt);
        if (!('sealed' in sealed)) throw new Error('refused');
        const fence = await backend.leases.acquire(sessionId);
        await backend.create(gate.header({ sessionId, createdAt, text: JSON.stringify({ format: 'session-sidecar/journal', version: 1, sessionId, createdAt, title: `s${i}` }) }, 1 << 20),
          sealed.sealed, gate.snapshot({ turn: null, runtime: null, usage: null, firstMessage: null, lastMessage: null, header: null }), fence);
        await backend.leases.release(fence);
      }
    };
    await Promise.all(Array.from({ length: 4 }, build));
    const buildS = (performance.now() - t0) / 1000;
    const scan: Searchable = { list: (o) => store.list(o), read: (id, o) => store.read(id, o), scrub: (t) => store.scrub(t) };
    const rows: Row[] = [];
    const shape = `${sessions.toLocaleString('en-US')} sessions × ${RECORDS} message records`;
    for (const [label, query] of [['a rare word (1 hit)', 'zanzibar'], ['a common word, first page of 50', 'charlie']] as const) {
      const timed = async (s: Searchable) => {
        const t = performance.now();
        const r = await searchSessions(s, { query, limit: 50 });
        return { ms: performance.now() - t, r };
      };
      const viaIndex = await timed(store); // warm: the first call also asks the server's encoding
      const viaScan = await timed(scan);
      if (JSON.stringify(viaIndex.r) !== JSON.stringify(viaScan.r)) throw new Error(`bench: search '${query}': the index and the scan disagree`);
      const again = await timed(store);
      rows.push({ scenario: `search (PostgreSQL): ${label}, ${shape}, scan`, value: viaScan.ms, unit: 'ms', note: `${viaScan.r.hits.length} hits; built in ${buildS.toFixed(1)} s` });
      rows.push({ scenario: `search (PostgreSQL): ${label}, ${shape}, index`, value: again.ms, unit: 'ms', ratio: again.ms / viaScan.ms, ratioTo: 'scan', note: `${again.r.hits.length} hits, identical to the scan's` });
    }
    return rows;
  } finally {
    await store.closeAll();
    if (cluster) destroyCluster(cluster);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
