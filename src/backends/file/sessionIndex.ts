import { readPrivateSmall, replaceAtomically } from '../../durable/durableFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { isGateRefusal } from '../../domain/secrets/finalGate.js';
import type { JournalHandle } from './journal/open.js';
import type { JournalPosition } from './journal/scan.js';
import { asCounters, NO_RUNTIME, type RuntimeCounters } from '../../domain/runtimeCounters.js';
import type { StoreLayout } from './layout.js';
import { effectiveHeader, type HeaderState } from '../../domain/sessionUpdate.js';
import { asUsage, NO_USAGE, type UsageTotals } from '../../domain/usage.js';
import type { SessionHeader, SessionSummary, TurnState } from '../../domain/types.js';
import { fileAad } from './journal/cipher.js';
import { headOf } from './journal/identity.js';
import { openText, sealedLimit, sealText } from './sealedFile.js';

/**
 * index/<id>.json: a derived summary of one journal. It is a cache: written atomically but
 * not fsynced (an append never waits for it), and trusted only while the journal's bytes still
 * match it — its head (header line, generation, first seq) and the checksum of the line ending at
 * the entry's length (journal/identity.ts); otherwise the journal is scanned. Nothing of the
 * file's identity on disk is part of the check, so a copy of the store keeps its index.
 * Invariant: an entry vouches only for bytes known durable — written by a writer of this
 * process and synced, or fsynced by a write open — so it is written by writers only, never by a
 * process that merely read the journal (it cannot know whether the bytes it saw were synced).
 */
export interface IndexEntry extends SessionSummary {
  v: 1;
  records: number;
  /** The journal's inode when the entry was written: checked only for entries without a head (written by older versions). */
  ino: number;
  /** The journal generation's head (journal/identity.ts headOf); absent in entries of older versions. */
  head?: string;
  lastCrc: string;
  /** Turn state after the last record: an open that trusts the entry need not reduce the journal. */
  turn?: TurnState | null;
  /** Runtime counters after the last record (absent: all zero, as in entries of journals without runtime records). */
  runtime?: RuntimeCounters;
  /** The effective title/metadata/tags after session/update (absent: never updated). */
  header?: HeaderState;
  /** 1: the entry names cwd and tags (entries of older versions do not, and list summarizes those from the journal). */
  hv?: 1;
  /** Usage totals after the last record; an entry without them (written before usage totals existed) is not trusted. */
  usage?: UsageTotals;
  /** session/create's idempotencyKey stamp of the header, when it has one (never shown: session/list's summaries leave it out). */
  idempotency?: SessionHeader['idempotency'];
  /** 1: the entry carries the header's idempotency stamp when there is one (older entries do not: a search for a key scans their journals). */
  iv?: 1;
}

const MAX_INDEX_BYTES = 1 << 20;

export function readIndexEntry(fsl: FsLayer, layout: StoreLayout, id: string, file = layout.indexEntry(id)): IndexEntry | undefined {
  let text: string | undefined;
  try {
    text = readPrivateSmall(fsl, file, sealedLimit(MAX_INDEX_BYTES));
    if (text !== undefined) text = openText(fsl, fileAad('index', id), text);
  } catch {
    return undefined; // unreadable, unsafe, or not this store's key's: rebuilt from the journal, never trusted
  }
  if (text === undefined) return undefined;
  try {
    const e = JSON.parse(text) as IndexEntry;
    const ok = e && e.v === 1 && e.sessionId === id && Number.isSafeInteger(e.bytes) && Number.isSafeInteger(e.lastSeq)
      && Number.isSafeInteger(e.records) && typeof e.lastCrc === 'string' && typeof e.createdAt === 'string'
      && e.turn !== undefined // an entry without the turn state cannot vouch for it: scan instead
      && e.usage !== undefined // nor one without the usage totals
      && (e.head === undefined || typeof e.head === 'string');
    return ok ? e : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the entry; returns it as written (without its summaries when the secret gate refused them). */
export async function writeIndexEntry(fsl: FsLayer, layout: StoreLayout, entry: IndexEntry): Promise<IndexEntry> {
  const st = fsl.lstatSync(layout.indexEntry(entry.sessionId));
  // Refused rather than replaced (replaceAtomically refuses it too): an unsafe entry is left for verify to report.
  if (st && !st.isFile()) throw new Error('index entry is not a regular file');
  try {
    await replaceAtomically(fsl, layout.indexEntry(entry.sessionId), sealText(fsl, fileAad('index', entry.sessionId), `${JSON.stringify(entry)}\n`), false);
    return entry;
  } catch (err) {
    if (!isGateRefusal(err)) throw err;
    // The summaries are derived text (whitespace folded, parts joined, cut): they can rebuild a
    // registered secret the records never held as such, or repeat a title written before the
    // secret was registered. The entry is then written without them; it vouches for the same bytes.
    // An entry whose header state is left out could not vouch for it: it drops its turn too, so
    // no open or list trusts it (they scan the journal).
    const { title: _t, firstMessage: _f, lastMessage: _l, ...rest } = entry;
    const { header: _h, turn: _turn, ...noHeader } = rest;
    const bare = entry.header ? (noHeader as IndexEntry) : rest;
    await replaceAtomically(fsl, layout.indexEntry(entry.sessionId), sealText(fsl, fileAad('index', entry.sessionId), `${JSON.stringify(bare)}\n`), false);
    return bare;
  }
}

/** The position an index entry vouches for, to be checked against the journal before use. */
export function positionOf(entry: IndexEntry): JournalPosition {
  return {
    bytes: entry.bytes, lastSeq: entry.lastSeq, records: entry.records, lastCrc: entry.lastCrc, lastTs: entry.updatedAt,
    turn: entry.turn ?? null, runtime: asCounters(entry.runtime), usage: asUsage(entry.usage), ...(entry.header ? { header: entry.header } : {}),
  };
}

export function summaryOf(entry: IndexEntry): SessionSummary {
  const { sessionId, title, createdAt, updatedAt, lastSeq, bytes, firstMessage, lastMessage, parent, cwd, tags } = entry;
  return {
    sessionId, title, createdAt, updatedAt, lastSeq, bytes, firstMessage, lastMessage, ...(parent ? { parent } : {}),
    ...(typeof cwd === 'string' ? { cwd } : {}), ...(Array.isArray(tags) ? { tags } : {}),
  };
}

/** The entry describing a verified journal handle. */
export function entryOf(handle: JournalHandle, updatedAt?: string): IndexEntry {
  const { position, ino, firstMessage, lastMessage } = handle;
  const header = effectiveHeader(handle.header, position.header);
  return {
    v: 1, hv: 1, iv: 1, ...(handle.header.idempotency ? { idempotency: handle.header.idempotency } : {}), sessionId: header.sessionId, title: header.title, parent: header.parent, createdAt: header.createdAt,
    ...(header.cwd !== undefined ? { cwd: header.cwd } : {}), ...(header.tags ? { tags: header.tags } : {}),
    ...(position.header ? { header: position.header } : {}),
    updatedAt: updatedAt ?? latest(position.lastTs, header.createdAt), lastSeq: position.lastSeq, records: position.records,
    bytes: position.bytes, ino, head: headOf(handle.headerCrc, handle.generation, handle.firstSeq), lastCrc: position.lastCrc, firstMessage, lastMessage, turn: position.turn ?? null,
    ...(position.runtime && position.runtime !== NO_RUNTIME ? { runtime: position.runtime } : {}),
    usage: position.usage ?? NO_USAGE,
  };
}

/** The later of two RFC 3339 UTC timestamps (a fork's copied records are older than the fork). */
export function latest(a: string | undefined, b: string): string {
  return a !== undefined && a > b ? a : b;
}
