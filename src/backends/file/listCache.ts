import path from 'node:path';
import { readPrivateSmallBytes, replaceAtomically } from '../../durable/durableFile.js';
import { fileAad } from './journal/cipher.js';
import { openBytes, sealedLimit, sealText } from './sealedFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { isSessionId } from '../../domain/ids.js';
import type { StoreLayout } from './layout.js';
import { type IndexEntry, summaryOf } from './sessionIndex.js';
import type { SessionSummary } from '../../domain/types.js';

/**
 * The summary table behind session/list (protocol/STORAGE.md, "The list cache"): one row per
 * session — the journal's inode and length the row describes, and the session's summary — kept
 * in memory for the life of the store instance and saved as `index/list.cache` when the
 * instance closes, so a fresh process lists from one file instead of one entry per session.
 *
 * Trust: a row is used only while the journal's inode, length and ctime (one lstat, on every
 * list) are still the ones it names — an entry's check (inode and length) and more: a journal
 * rewritten in place at the same length no longer matches, so a row is never trusted beyond an
 * entry. A row whose journal changed is dropped for that list and the
 * session is summarized from its entry or journal, so a session appended, created or deleted by
 * another process shows on the next list. Rows come only from index entries (read from disk, or
 * written by this instance's writers), never from a reader's scan: the saved file vouches for
 * nothing an entry did not. It is a cache of a cache: written atomically, not fsynced, never
 * read by opens, and rebuilt from the entries and journals when absent, damaged or stale.
 */
export interface CacheRow {
  ino: number;
  bytes: number;
  /**
   * The journal's ctime (ms) when the row was made: any write to it changes that, also one that
   * keeps its length (a program rewriting it in place), and no one can set it back.
   */
  ctime: number;
  updatedAt: string;
  /** Saved in list.cache (false: a summary this instance scanned from the journal itself). */
  fromEntry: boolean;
  /** When (Date.now()) this instance last saw the journal match the row; 0: never (loaded from the file). */
  checkedAt: number;
  /** Parsed on first use: a fresh process parses only the rows of the pages it returns. */
  summary?: SessionSummary;
  /** Where the row's summary JSON lies in the loaded file (decoded as UTF-8 on first use). */
  at?: number;
  end?: number;
}

const HEADER = 'session-sidecar list cache v3'; // v3: summaries name cwd and tags

/** What a row is checked against: one lstat of the journal. */
export interface JournalStat {
  ino: number;
  size: number;
  ctimeMs: number;
  mode: number;
}
const MAX_FILE_BYTES = 256 << 20;

/** Not `<id>.json`: no session's entry can have this name. */
export const LIST_CACHE_FILE = 'list.cache';
/** A temp file of a save older than this was left by a killed process (a save takes milliseconds). */
const STALE_TEMP_MS = 10 * 60_000;

export class ListCache {
  private readonly rows = new Map<string, CacheRow>();
  private loaded = false;
  /** The loaded file: rows' summary texts are decoded from it when first used (or saved). */
  private source: Buffer | undefined;
  private dirty = false;

  constructor(private readonly fsl: FsLayer, private readonly layout: StoreLayout) {}

  private get file(): string {
    return path.join(this.layout.indexDir, LIST_CACHE_FILE);
  }

  /** The row for a journal with this inode, length and ctime, if it still describes it. */
  lookup(id: string, st: JournalStat): CacheRow | undefined {
    this.load();
    const row = this.rows.get(id);
    if (!row || !rowMatches(row, st)) return undefined;
    row.checkedAt = Date.now();
    return row;
  }

  /**
   * The row of a session, unchecked, if it was checked at or after `since` (ms); see list.ts for
   * why a page after a cursor may skip the journals it does not return.
   */
  checkedSince(id: string, since: number): CacheRow | undefined {
    const row = this.rows.get(id);
    return row && row.checkedAt >= since ? row : undefined;
  }

  /**
   * An index entry that matched its journal (read by a lister, or written by a writer of this
   * instance), with the journal's lstat now: no row unless that lstat is the entry's journal.
   */
  noteEntry(entry: IndexEntry, st: JournalStat | undefined): void {
    // A journal no open would accept (not a private regular file) is listed from its entry but
    // gets no row: nothing is saved on its behalf (a refused journal changes nothing in the store).
    if (st && (st.mode & 0o170777) !== 0o100600) return;
    if (!st || st.ino !== entry.ino || st.size !== entry.bytes) {
      this.drop(entry.sessionId); // the journal moved on since the entry: the next list looks again
      return;
    }
    const summary = summaryOf(entry);
    this.rows.set(entry.sessionId, { ino: entry.ino, bytes: entry.bytes, ctime: st.ctimeMs, updatedAt: summary.updatedAt, fromEntry: true, checkedAt: Date.now(), summary });
    this.dirty = true;
  }

  /** A summary scanned from the journal: kept for this instance's next lists, never saved. */
  noteScanned(summary: SessionSummary, ino: number, bytes: number, ctime: number): void {
    this.rows.set(summary.sessionId, { ino, bytes, ctime, updatedAt: summary.updatedAt, fromEntry: false, checkedAt: Date.now(), summary });
  }

  /** A row that turned out unusable (damaged text): forgotten, so the entry or journal answers. */
  drop(id: string): void {
    if (this.rows.delete(id)) this.dirty = true;
  }

  /** Forgets the rows of sessions that no longer exist. */
  retainOnly(ids: ReadonlySet<string>): void {
    for (const id of this.rows.keys()) if (!ids.has(id)) this.drop(id);
  }

  /** The row's summary; undefined when its saved text is damaged or names another session. */
  summaryOf(id: string, row: CacheRow): SessionSummary | undefined {
    if (row.summary) return row.summary;
    try {
      const s = JSON.parse(this.textOf(row)) as SessionSummary;
      const ok = s !== null && typeof s === 'object' && s.sessionId === id && s.updatedAt === row.updatedAt && s.bytes === row.bytes
        && typeof s.createdAt === 'string' && Number.isSafeInteger(s.lastSeq);
      if (!ok) return undefined;
      row.summary = summaryOf(s as IndexEntry); // its own members only
      return row.summary;
    } catch {
      return undefined;
    }
  }

  /** A loaded row's saved summary text ('' when it has none: not trusted). */
  private textOf(row: CacheRow): string {
    return row.at === undefined || !this.source ? '' : this.source.toString('utf8', row.at, row.end);
  }

  /**
   * Reads list.cache once per instance; anything unreadable is ignored (the entries answer).
   * The file is split as latin1 (one char per byte, no UTF-8 decoding of 10,000 summaries):
   * its ids and numbers are ASCII, and a row's summary is decoded from the bytes when used.
   */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    let buf: Buffer | undefined;
    try {
      buf = readPrivateSmallBytes(this.fsl, this.file, sealedLimit(MAX_FILE_BYTES));
      if (buf !== undefined) buf = openBytes(this.fsl, fileAad('list.cache'), buf);
    } catch {
      return; // unsafe, unreadable or not this store's key's: never read; replaced at the next save
    }
    if (buf === undefined) return;
    const text = buf.toString('latin1');
    if (!text.startsWith(`${HEADER}\n`)) return;
    this.source = buf;
    let at = HEADER.length + 1;
    while (at < text.length) {
      const end = text.indexOf('\n', at);
      if (end === -1) break; // a cut last line: ignored
      this.loadLine(text, at, end);
      at = end + 1;
    }
  }

  /** `<id>\t<ino>\t<bytes>\t<ctime>\t<updatedAt>\t<summary JSON>` at [start, end); a malformed line is skipped. */
  private loadLine(text: string, start: number, end: number): void {
    const tabs: number[] = [];
    for (let t = start - 1; tabs.length < 5;) {
      t = text.indexOf('\t', t + 1);
      if (t === -1 || t >= end) return;
      tabs.push(t);
    }
    const [t1, t2, t3, t4, t5] = tabs as [number, number, number, number, number];
    const id = text.slice(start, t1);
    if (t5 + 1 >= end || this.rows.has(id) || !isSessionId(id)) return; // a row set by this instance's writer is newer
    const row: CacheRow = {
      ino: Number(text.slice(t1 + 1, t2)), bytes: Number(text.slice(t2 + 1, t3)), ctime: Number(text.slice(t3 + 1, t4)),
      updatedAt: text.slice(t4 + 1, t5), fromEntry: true, checkedAt: 0, at: t5 + 1, end,
    };
    if (!Number.isSafeInteger(row.ino) || !Number.isSafeInteger(row.bytes) || !Number.isFinite(row.ctime)) return;
    this.rows.set(id, row);
  }

  /**
   * Saves the rows that came from entries, when they changed (at close). Not fsynced: a crash
   * leaves the old file or the new one (atomic rename), and either is checked row by row. A
   * failure (including the secret gate refusing a summary) leaves the old file: it is a cache.
   */
  async save(): Promise<void> {
    if (!this.dirty) return;
    this.load();
    this.dirty = false;
    const out: string[] = [HEADER, '\n'];
    for (const [id, row] of this.rows) {
      if (!row.fromEntry) continue;
      out.push(id, '\t', String(row.ino), '\t', String(row.bytes), '\t', String(row.ctime), '\t', row.updatedAt, '\t', row.summary ? JSON.stringify(row.summary) : this.textOf(row), '\n');
    }
    try {
      await replaceAtomically(this.fsl, this.file, sealText(this.fsl, fileAad('list.cache'), out.join('')), false);
    } catch {
      // left as it was: the next list checks every row anyway
    }
    this.removeStaleTemps();
  }

  /** Temps (`list.cache.<random>.tmp`) of saves a killed process left; another process's save in flight is younger. */
  private removeStaleTemps(): void {
    try {
      const prefix = `${LIST_CACHE_FILE}.`;
      for (const name of this.fsl.readdirSync(this.layout.indexDir)) {
        if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
        const p = path.join(this.layout.indexDir, name);
        const st = this.fsl.lstatSync(p);
        if (st?.isFile() && Date.now() - st.mtimeMs > STALE_TEMP_MS) this.fsl.unlinkSync(p);
      }
    } catch {
      // best effort: a leftover temp is never read
    }
  }
}


/** The journal is still the one the row describes: same inode, same length, not written since. */
export function rowMatches(row: CacheRow, st: JournalStat): boolean {
  return st.ino === row.ino && st.size === row.bytes && st.ctimeMs === row.ctime;
}
