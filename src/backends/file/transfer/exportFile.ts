/**
 * Export of whole sessions from a file store (`session-sidecar migrate`), read-only: the journal
 * (sessions/<id>/ or, for a deleted session, trash/<id>/session/), its archived generations
 * (history/<id>/ or trash/<id>/history/) and its state values, each journal line verified
 * (checksum, canonical form, seqs one by one from the header on). Texts come out exactly as
 * stored: a record's text is its line without the envelope (seq, ts, batchEnd, crc), which is
 * byte for byte the text the secret gate checked (lines are canonical JSON).
 *
 * A journal that ends in a torn tail or an unfinished batch is refused (Corrupt, reason
 * tornTail): such a session was being written when its writer died; `serve` repairs it on its
 * next writable open, after which it can be moved.
 */
import os from 'node:os';
import path from 'node:path';
import type { BundleGeneration, SealedRecord, SessionBundle } from '../../../core/port.js';
import { openPrivate } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import { decodeLine, openHeader } from '../journal/format.js';
import { fileAad, type JournalCipher, storeKeyOf } from '../journal/cipher.js';
import { openText } from '../sealedFile.js';
import { scanLines } from '../journal/lines.js';
import type { StoreLayout } from '../layout.js';

export interface FileSessionPlace {
  journal: string;
  historyDir: string;
  stateDir: string;
  trashed: boolean;
}

/** Where a session's parts are: live, or in the trash; undefined when it does not exist. */
export function placeOf(fsl: FsLayer, layout: StoreLayout, id: string): FileSessionPlace | undefined {
  if (fsl.lstatSync(layout.journal(id))) return { journal: layout.journal(id), historyDir: layout.historySessionDir(id), stateDir: layout.stateDir(id), trashed: false };
  const trash = layout.trashSessionDir(id);
  const journal = path.join(trash, 'session', 'journal.jsonl');
  if (!fsl.lstatSync(journal)) return undefined;
  // After a crashed delete some parts may still be in their live places (STORAGE.md, Delete).
  const historyDir = fsl.lstatSync(path.join(trash, 'history')) ? path.join(trash, 'history') : layout.historySessionDir(id);
  return { journal, historyDir, stateDir: path.join(trash, 'session', 'state'), trashed: true };
}

const ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Ids of every session, live and in the trash, sorted. */
export function fileSessionIds(fsl: FsLayer, layout: StoreLayout): string[] {
  const names = (dir: string) => {
    try {
      return fsl.readdirSync(dir).filter((n) => ID.test(n) && !n.startsWith('.') && !n.includes('..'));
    } catch {
      return [];
    }
  };
  const ids = new Set<string>();
  for (const id of [...names(layout.sessionsDir), ...names(layout.trashDir)]) if (placeOf(fsl, layout, id)) ids.add(id);
  return [...ids].sort();
}

const corrupt = (id: string, file: string, what: string, reason = 'damaged') =>
  new StoreError('Corrupt', `session ${id}: ${path.basename(file)} ${what}`, { sessionId: id, reason });

/** The header text (without the journal envelope) and the records of one journal file, verified. */
function readJournal(fsl: FsLayer, id: string, file: string): { headerText: string; createdAt: string; records: SealedRecord[] } {
  const fd = openPrivate(fsl, file, false);
  try {
    const size = fsl.fstatSync(fd).size;
    let header: { text: string; createdAt: string } | undefined;
    let cipher: JournalCipher | undefined;
    const records: SealedRecord[] = [];
    let batchEnd = 0;
    for (const line of scanLines(fsl, fd, 0, size)) {
      if (!line.terminated) throw corrupt(id, file, 'ends in a torn tail (open the session once with serve to repair it)', 'tornTail');
      const d = decodeLine(line.bytes, cipher);
      if (!d.ok) throw corrupt(id, file, `has a damaged line (${d.reason}) at byte ${line.start}`);
      if (!header) {
        const opened = openHeader(d.value, storeKeyOf(fsl)); // encryption at rest: KeyMismatch without the store's key
        if (!opened.ok) throw corrupt(id, file, `has a damaged header (${opened.reason})`);
        cipher = opened.cipher;
        const { format, version, ...fields } = opened.value;
        if (format !== 'session-sidecar/journal' || version !== 1 || fields.sessionId !== id) throw corrupt(id, file, 'has no valid header');
        header = { text: JSON.stringify(fields), createdAt: String(fields.createdAt) };
        continue;
      }
      const { seq, ts, batchEnd: be, ...members } = d.value as Record<string, unknown>;
      if (typeof seq !== 'number' || typeof ts !== 'string' || typeof members.kind !== 'string') throw corrupt(id, file, `has an invalid record line at byte ${line.start}`);
      const prev = records[records.length - 1];
      if (prev && seq !== prev.seq + 1) throw corrupt(id, file, `skips from seq ${prev.seq} to ${seq}`);
      if (typeof be === 'number') batchEnd = Math.max(batchEnd, be);
      records.push({ seq, ts, kind: members.kind, text: JSON.stringify(members) });
    }
    if (!header) throw corrupt(id, file, 'is empty');
    const last = records[records.length - 1];
    if (last && batchEnd > last.seq) throw corrupt(id, file, 'ends in an unfinished batch (open the session once with serve to repair it)', 'tornTail');
    return { headerText: header.text, createdAt: header.createdAt, records };
  } finally {
    fsl.closeSync(fd);
  }
}

function generationOfJournal(records: SealedRecord[]): number {
  const first = records[0];
  if (first?.kind !== 'checkpoint') return 0;
  const g = (JSON.parse(first.text) as { generation?: unknown }).generation;
  return typeof g === 'number' ? g : 0;
}

export function exportFileSession(fsl: FsLayer, layout: StoreLayout, id: string): SessionBundle {
  const place = placeOf(fsl, layout, id);
  if (!place) throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
  const active = readJournal(fsl, id, place.journal);
  const activeGeneration = generationOfJournal(active.records);
  let names: string[] = [];
  try {
    names = fsl.readdirSync(place.historyDir);
  } catch {
    names = [];
  }
  // Only archives of generations before the active one (a stale archive of the active one is never listed).
  const gens = names.filter((n) => /^\d+\.jsonl$/.test(n)).map((n) => Number.parseInt(n, 10)).filter((g) => g < activeGeneration).sort((a, b) => a - b);
  const generations: BundleGeneration[] = gens.map((g) => {
    const file = path.join(place.historyDir, `${g}.jsonl`);
    const archived = readJournal(fsl, id, file);
    if (archived.headerText !== active.headerText) throw corrupt(id, file, 'has a header other than the journal\'s');
    return { generation: g, records: archived.records };
  });
  generations.push({ generation: activeGeneration, records: active.records });
  // An archive's throughSeq: the seq of the checkpoint that starts the next generation.
  for (let i = 0; i + 1 < generations.length; i++) {
    const next = generations[i + 1]!.records[0];
    generations[i]!.throughSeq = next?.kind === 'checkpoint' ? next.seq : 0;
  }
  return { header: { sessionId: id, createdAt: active.createdAt, text: active.headerText }, trashed: place.trashed, generations, state: readState(fsl, id, place.stateDir) };
}

function readState(fsl: FsLayer, id: string, dir: string): Array<{ key: string; text: string }> {
  let names: string[];
  try {
    names = fsl.readdirSync(dir);
  } catch {
    return [];
  }
  const out: Array<{ key: string; text: string }> = [];
  for (const name of names.filter((n) => /^[A-Za-z0-9._-]{1,128}\.json$/.test(n) && !n.startsWith('.')).sort()) {
    const fd = openPrivate(fsl, path.join(dir, name), false);
    try {
      const size = fsl.fstatSync(fd).size;
      const buf = Buffer.alloc(size);
      for (let got = 0; got < size; ) {
        const n = fsl.readSync(fd, buf, got, size - got, got);
        if (n === 0) break;
        got += n;
      }
      const key = name.slice(0, -'.json'.length);
      const text = openText(fsl, fileAad('state', id, key), buf.toString('utf8'));
      if (text === undefined) throw corrupt(id, name, 'does not authenticate under the store\'s key');
      try {
        JSON.parse(text);
      } catch {
        throw corrupt(id, name, 'is not a valid state value');
      }
      out.push({ key, text });
    } finally {
      fsl.closeSync(fd);
    }
  }
  return out;
}

/**
 * The holder of a session's writer lease when a writer holds it now: the lock directory
 * refreshed within `staleMs`, and its holder not provably dead on this machine.
 */
export function fileLeaseHeld(fsl: FsLayer, layout: StoreLayout, id: string, staleMs: number): { host: string; pid: number } | undefined {
  const st = fsl.lstatSync(layout.lockDir(id));
  if (!st || Date.now() - st.mtimeMs > staleMs) return undefined;
  let holder: { pid?: number; hostname?: string } = {};
  try {
    const fd = openPrivate(fsl, `${layout.lockDir(id)}.holder.json`, false);
    try {
      const buf = Buffer.alloc(4096);
      holder = JSON.parse(buf.subarray(0, fsl.readSync(fd, buf, 0, 4096, 0)).toString('utf8')) as typeof holder;
    } finally {
      fsl.closeSync(fd);
    }
  } catch {
    holder = {};
  }
  const pid = holder.pid ?? 0;
  const host = holder.hostname ?? '?';
  if (host === os.hostname() && pid > 0) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as { code?: string }).code === 'ESRCH') return undefined;
    }
  }
  return { host, pid };
}
