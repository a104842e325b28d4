/**
 * Builds the large stores the read, open, list and compaction rows need, fast and for real:
 * through the store library itself (the code the sidecar runs: guard, checksums, fdatasync,
 * index), in this process, appending large batches. Leases are off because this store
 * instance is the only writer of its own fresh root, and it is closed before any sidecar
 * opens the root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileSessionStore } from '../dist/src/stores/fileStore.js';
import { MB, messageRecord } from './util.js';

export interface BuiltSession { sessionId: string; bytes: number; records: number; journal: string; buildMs: number }

export function openStore(root: string): FileSessionStore {
  return new FileSessionStore(root, { leases: false });
}

export function journalPath(root: string, sessionId: string): string {
  return path.join(root, 'sessions', sessionId, 'journal.jsonl');
}

/**
 * A session whose journal grows to at least `targetBytes`, of message records of ~`recordBytes`
 * (alternately user and assistant), appended in batches of ~8 MB, then closed.
 */
export async function buildSession(root: string, targetBytes: number, recordBytes: number, title = 'bench'): Promise<BuiltSession> {
  const t0 = performance.now();
  const store = openStore(root);
  const { sessionId } = await store.create({ title, cwd: '/work/project' });
  const journal = journalPath(root, sessionId);
  const perBatch = Math.max(1, Math.min(10_000, Math.floor((8 * MB) / recordBytes)));
  const batch = [messageRecord(recordBytes, 'user'), messageRecord(recordBytes, 'assistant')];
  const records = Array.from({ length: perBatch }, (_, i) => batch[i % 2]!);
  let count = 0;
  for (let bytes = fs.statSync(journal).size; bytes < targetBytes; bytes = fs.statSync(journal).size) {
    const left = Math.ceil((targetBytes - bytes) / recordBytes);
    const chunk = left < records.length ? records.slice(0, left) : records;
    await store.append(sessionId, chunk);
    count += chunk.length;
  }
  await store.closeAll();
  return { sessionId, bytes: fs.statSync(journal).size, records: count, journal, buildMs: performance.now() - t0 };
}

/**
 * `n` small sessions, each with a user and an assistant message (what a list shows), created
 * `lanes` at a time; every one is closed right after so no descriptors pile up.
 */
export async function buildManySessions(root: string, n: number, lanes = 16): Promise<{ buildMs: number }> {
  const t0 = performance.now();
  const store = openStore(root);
  const pair = [messageRecord(300, 'user'), messageRecord(600, 'assistant')];
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const { sessionId } = await store.create({ title: `bench session ${i}`, cwd: '/work/project' });
      await store.append(sessionId, pair);
      await store.close(sessionId);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  await store.closeAll();
  return { buildMs: performance.now() - t0 };
}
