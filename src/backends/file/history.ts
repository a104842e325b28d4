import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { removeQuietly } from './journal/compact.js';
import { decodeLine } from './journal/format.js';
import { scanLines } from './journal/lines.js';
import { readHeader } from './journal/scan.js';
import type { JournalCipher } from './journal/cipher.js';
import { openPrivate } from '../../durable/durableFile.js';
import type { StoreLayout } from './layout.js';
import type { HistoryEntry } from '../../domain/types.js';

/** Temp files a crashed create or compaction left: never read, removed by the next writable open. */
export function removeStaleTemps(fsl: FsLayer, layout: StoreLayout, id: string): void {
  removeQuietly(fsl, layout.journalTemp(id));
  for (const name of namesIn(fsl, layout.historySessionDir(id))) if (name.endsWith('.tmp')) removeQuietly(fsl, `${layout.historySessionDir(id)}/${name}`);
  // Temps of atomic replaces (index entry, state values: `<name>.<random>.tmp`) a killed writer
  // left: this process holds the session's lease, so no other writer of them exists.
  const entry = `${id}.json.`;
  for (const name of namesIn(fsl, layout.indexDir)) if (name.startsWith(entry) && name.endsWith('.tmp')) removeQuietly(fsl, `${layout.indexDir}/${name}`);
  for (const name of namesIn(fsl, layout.stateDir(id))) if (name.endsWith('.tmp')) removeQuietly(fsl, `${layout.stateDir(id)}/${name}`);
  const holder = `${id}.lock.holder.json.`; // the lease holder record's temps (leases.ts), beside the lock
  for (const name of namesIn(fsl, layout.locksDir)) if (name.startsWith(holder) && name.endsWith('.tmp')) removeQuietly(fsl, `${layout.locksDir}/${name}`);
}

function namesIn(fsl: FsLayer, dir: string): string[] {
  try {
    return fsl.readdirSync(dir);
  } catch {
    return []; // absent: nothing to clean
  }
}

/**
 * Each archived generation is described by the checkpoint that starts the next generation
 * (the next archive, or the active journal): when it was archived, through which seq, and its size.
 *
 * A snapshot as of one instant, whatever compactions run meanwhile: the active journal is read
 * first, once. Every archive of a generation before its own was made durable under its name
 * before that journal was renamed in (compaction steps 1 and 3), and such an archive never
 * changes, so the directory listed after it holds all of them; a compaction running meanwhile
 * only adds later generations, which this listing leaves out.
 */
export function listHistory(fsl: FsLayer, layout: StoreLayout, id: string): HistoryEntry[] {
  const current = checkpointOf(fsl, layout.journal(id));
  let names: string[] = [];
  try {
    names = fsl.readdirSync(layout.historySessionDir(id));
  } catch {
    return [];
  }
  // Only generations before the active one are archived ones. A compaction that failed (or
  // crashed) before its rename may have left an archive of the active generation: it describes
  // nothing new (the next compaction replaces it) and must not be listed twice.
  const active = generationOf(current);
  const archives = names.filter((n) => /^\d+\.jsonl$/.test(n)).map((n) => Number.parseInt(n, 10)).filter((g) => g < active);
  const checkpoints = [...archives.map((g) => checkpointOf(fsl, layout.archive(id, g))), current];
  const entries: HistoryEntry[] = [];
  for (const cp of checkpoints) {
    if (!cp) continue;
    const archived = cp.archived as { generation?: number; records?: number; bytes?: number } | undefined;
    if (typeof archived?.generation !== 'number') continue;
    entries.push({
      generation: archived.generation, throughSeq: Number(cp.throughSeq), records: Number(archived.records ?? 0),
      bytes: Number(archived.bytes ?? 0), createdAt: String(cp.ts),
    });
  }
  return entries.sort((a, b) => a.generation - b.generation);
}

/** The generation of a journal starting with checkpoint `cp`: its number, or 0 before any compaction. */
function generationOf(cp: Record<string, unknown> | undefined): number {
  const generation = Number(cp?.generation ?? 0);
  return Number.isSafeInteger(generation) && generation >= 0 ? generation : 0;
}

function checkpointOf(fsl: FsLayer, file: string): Record<string, unknown> | undefined {
  let fd: number;
  try {
    fd = openPrivate(fsl, file, false);
  } catch {
    return undefined;
  }
  try {
    const size = fsl.fstatSync(fd).size;
    let cipher: JournalCipher | undefined;
    try {
      cipher = readHeader(fsl, fd, size).cipher; // encryption at rest: the key its lines are sealed with
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'KeyMismatch') throw err;
      return undefined;
    }
    const lines = scanLines(fsl, fd, 0, size);
    lines.next(); // the header
    const second = lines.next();
    if (second.done || !second.value.terminated) return undefined;
    const decoded = decodeLine(second.value.bytes, cipher);
    return decoded.ok && decoded.value.kind === 'checkpoint' ? decoded.value : undefined;
  } finally {
    fsl.closeSync(fd);
  }
}
