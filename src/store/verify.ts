import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPrivateSmall } from '../durable/durableFile.js';
import { type FsLayer, nodeFs } from '../durable/fsLayer.js';
import { StoreError } from './errors.js';
import { checkSessionId } from './ids.js';
import { decodeLine, peekSeq } from './journal/format.js';
import { lineEndingAt, scanLines } from './journal/lines.js';
import { type CommittedRecord, crcOf, type JournalPosition, readHeader, scanRecords } from './journal/scan.js';
import { StoreLayout } from './layout.js';
import { type IndexEntry, readIndexEntry } from './sessionIndex.js';

/**
 * `verifyStore`: a read-only audit of a store (protocol/STORAGE.md is what it checks against).
 * Every journal, archived generation (history/<id>/<gen>.jsonl), index entry, recovery file and
 * the store's folders are checked: header, checksums, canonical lines, seq continuity and
 * batches (with the store's own journal reader, src/store/journal/), compaction chains, index
 * drift, file modes (0600 files, 0700 directories) and ownership. Nothing is ever written or
 * repaired: files are opened O_RDONLY and a torn tail is reported, not cut.
 *
 * Findings have a severity:
 *   error    the store is damaged or unsafe (corruption, lost acknowledged records, wrong modes);
 *   warning  something to look at that the store handles itself (a torn tail the next writable
 *            open repairs, a stale temp file, an orphan or unusable index entry);
 *   note     information (recovery evidence kept, an index entry behind its journal, a lease held).
 *
 * Extension point: VERIFY_EXTENSIONS (below) — checks that need every record (blob references,
 * say) or that run once over the whole store after the sessions.
 */

export type Severity = 'error' | 'warning' | 'note';

export interface Finding {
  severity: Severity;
  /** Which check found it: layout, permissions, journal, archive, index, recovery, lease, or an extension's name. */
  check: string;
  /** One sentence; never record content. */
  message: string;
  /** The file concerned, relative to the store root. */
  file?: string;
  /** 1-based line of a journal file (the header is line 1). */
  line?: number;
}

export interface SessionReport {
  sessionId: string;
  /** live: under sessions/; trash: a deleted session under trash/. */
  location: 'live' | 'trash';
  findings: Finding[];
  /** The verified journal: bytes, record lines, last seq, first seq (a checkpoint's after compaction), generation. */
  journal?: { bytes: number; records: number; lastSeq: number; firstSeq: number; generation: number };
  /** Archived generations verified. */
  archives: number;
  /** Bytes of the journal and its archives. */
  bytes: number;
  ok: boolean;
}

export interface VerifyReport {
  root: string;
  /** No finding of severity error anywhere. */
  ok: boolean;
  /** Findings about the store itself (folders, stray and orphan files, extensions). */
  store: Finding[];
  sessions: SessionReport[];
  totals: { sessions: number; journals: number; archives: number; indexEntries: number; bytes: number; errors: number; warnings: number; notes: number };
}

export interface VerifyProgress {
  done: number;
  total: number;
  bytesDone: number;
  bytesTotal: number;
}

/** What an extension sees of the store being verified. */
export interface VerifyContext {
  root: string;
  layout: StoreLayout;
  fsl: FsLayer;
  /** Ids of the live sessions verified. */
  sessionIds: readonly string[];
  /** True when only one session is verified (store-wide checks should then stay quiet). */
  single: boolean;
}

/**
 * A pluggable check. `onRecord` sees every committed record of every verified journal and
 * archive (in seq order per file), so a check can collect what records reference without a
 * second pass; `finish` runs once after all sessions and returns store-wide findings.
 */
export interface VerifyExtension {
  name: string;
  onRecord?(sessionId: string, record: Readonly<Record<string, unknown>>, file: string): void;
  finish?(ctx: VerifyContext): Finding[] | Promise<Finding[]>;
}

/**
 * EXTENSION POINT. Checks added to every verification. A `blobs` check belongs here: it would
 * collect `{"$blob": "sha256:<hex>"}` references in onRecord, then in finish hash every blob
 * file under the store (name = content hash, 0600 files, 0700 folders) and report blobs that
 * are damaged, missing while referenced, or unreferenced. Add it as `VERIFY_EXTENSIONS.push(blobsCheck)`
 * from its module, or list it here.
 */
export const VERIFY_EXTENSIONS: VerifyExtension[] = [];

export interface VerifyOptions {
  /** Verify this session only (and no store-wide checks). */
  sessionId?: string;
  /** The file-system seam (default: node's fs). Only read calls are made. */
  fs?: FsLayer;
  /** Called after each session (and once at the start) with the work done so far. */
  onProgress?: (p: VerifyProgress) => void;
  /** Extensions to run instead of VERIFY_EXTENSIONS. */
  extensions?: readonly VerifyExtension[];
  /** Also verify deleted sessions in trash/ (default true; ignored with sessionId). */
  includeTrash?: boolean;
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
/** Damaged lines listed after the first one (the rest are counted). */
const MORE_DAMAGE_LISTED = 5;

export async function verifyStore(root: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const fsl = opts.fs ?? nodeFs;
  const layout = new StoreLayout(path.resolve(root));
  const extensions = opts.extensions ?? VERIFY_EXTENSIONS;
  const v = new Verifier(fsl, layout, extensions);
  const store: Finding[] = [];
  const single = opts.sessionId !== undefined;

  const rootSt = fsl.lstatSync(layout.root);
  if (!rootSt || !rootSt.isDirectory()) {
    throw new StoreError('SessionNotFound', `no session store at ${layout.root}`);
  }
  let live: string[];
  if (single) {
    const id = checkSessionId(opts.sessionId as string);
    if (!fsl.lstatSync(layout.sessionDir(id))) throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
    live = [id];
  } else {
    store.push(...v.checkLayout());
    live = v.sessionDirs(store);
  }
  const trashed = !single && opts.includeTrash !== false ? v.trashDirs() : [];

  const work = [...live.map((id) => ({ id, location: 'live' as const })), ...trashed.map((id) => ({ id, location: 'trash' as const }))];
  const sizes = work.map((w) => v.sessionBytes(w.id, w.location));
  const progress: VerifyProgress = { done: 0, total: work.length, bytesDone: 0, bytesTotal: sizes.reduce((a, b) => a + b, 0) };
  opts.onProgress?.({ ...progress });

  const sessions: SessionReport[] = [];
  for (const [i, w] of work.entries()) {
    sessions.push(w.location === 'live' ? v.verifyLive(w.id) : v.verifyTrashed(w.id));
    progress.done += 1;
    progress.bytesDone += sizes[i] ?? 0;
    opts.onProgress?.({ ...progress });
    if (i % 16 === 15) await new Promise((r) => setImmediate(r)); // let signals and timers run
  }

  if (!single) store.push(...v.orphans(new Set(live)));
  const ctx: VerifyContext = { root: layout.root, layout, fsl, sessionIds: live, single };
  for (const ext of extensions) {
    if (!ext.finish) continue;
    try {
      store.push(...(await ext.finish(ctx)));
    } catch (err) {
      store.push({ severity: 'error', check: ext.name, message: `the ${ext.name} check failed: ${describe(err)}` });
    }
  }

  const all = [...store, ...sessions.flatMap((s) => s.findings)];
  const count = (s: Severity) => all.filter((f) => f.severity === s).length;
  return {
    root: layout.root,
    ok: count('error') === 0,
    store,
    sessions,
    totals: {
      sessions: sessions.length,
      journals: sessions.filter((s) => s.journal).length,
      archives: sessions.reduce((a, s) => a + s.archives, 0),
      indexEntries: v.indexEntries,
      bytes: sessions.reduce((a, s) => a + s.bytes, 0),
      errors: count('error'),
      warnings: count('warning'),
      notes: count('note'),
    },
  };
}

/** An error's kind and code, never its message (it could quote paths or content). */
function describe(err: unknown): string {
  if (err instanceof StoreError) return err.message;
  const code = (err as { code?: string }).code;
  return code ? `${(err as Error).name ?? 'Error'} ${code}` : ((err as Error).name ?? 'error');
}

interface ScannedJournal {
  header: Record<string, unknown>;
  headerLine: Buffer;
  position: JournalPosition;
  size: number;
  ino: number;
  dataStart: number;
  firstSeq: number;
  /** The checkpoint starting the file, if any. */
  checkpoint?: CommittedRecord;
  tail?: { offset: number; bytes: number; reason: string };
}

class Verifier {
  indexEntries = 0;
  private readonly uid = typeof process.getuid === 'function' ? process.getuid() : undefined;

  constructor(
    private readonly fsl: FsLayer,
    private readonly layout: StoreLayout,
    private readonly extensions: readonly VerifyExtension[],
  ) {}

  private rel(p: string): string {
    return path.relative(this.layout.root, p) || '.';
  }

  // ---- the store's folders -------------------------------------------------------------

  checkLayout(): Finding[] {
    const out: Finding[] = [];
    const { layout } = this;
    const st = this.fsl.lstatSync(layout.root) as fs.Stats;
    const mode = st.mode & 0o777;
    if ((mode & 0o022) !== 0) out.push({ severity: 'error', check: 'permissions', message: `the store directory has mode ${octal(mode)}: writable by others (the sidecar refuses it)`, file: '.' });
    else if (mode !== DIR_MODE) out.push({ severity: 'warning', check: 'permissions', message: `the store directory has mode ${octal(mode)}, expected 700 (others can read session contents)`, file: '.' });
    this.owner(st, layout.root, out);
    for (const [dir, required] of [
      [layout.sessionsDir, true], [layout.indexDir, false], [layout.recoveryDir, false],
      [layout.historyDir, false], [layout.trashDir, false], [layout.locksDir, false], [path.join(layout.root, 'blobs'), false],
    ] as const) {
      const d = this.fsl.lstatSync(dir);
      if (!d) {
        if (required) out.push({ severity: 'error', check: 'layout', message: 'the sessions folder is missing: this is not a session store', file: this.rel(dir) });
        else if (dir === layout.indexDir || dir === layout.recoveryDir) out.push({ severity: 'warning', check: 'layout', message: 'folder missing (the sidecar creates it on start)', file: this.rel(dir) });
        continue;
      }
      this.dirMode(d, dir, out);
    }
    const gi = this.fsl.lstatSync(path.join(layout.root, '.gitignore'));
    if (!gi) out.push({ severity: 'warning', check: 'layout', message: 'no .gitignore: a store inside a repository could be committed', file: '.gitignore' });
    else if (!gi.isFile()) out.push({ severity: 'error', check: 'layout', message: '.gitignore is not a regular file', file: '.gitignore' });
    return out;
  }

  /** Live session ids (directories under sessions/); stray entries are reported. */
  sessionDirs(out: Finding[]): string[] {
    const ids: string[] = [];
    for (const name of this.list(this.layout.sessionsDir)) {
      const p = path.join(this.layout.sessionsDir, name);
      if (!isSessionId(name)) {
        out.push({ severity: 'warning', check: 'layout', message: 'unexpected entry in sessions/ (not a session id)', file: this.rel(p) });
        continue;
      }
      ids.push(name);
    }
    return ids.sort();
  }

  trashDirs(): string[] {
    return this.list(this.layout.trashDir).filter(isSessionId).sort();
  }

  /** Bytes of a session's journal and archives (for progress). */
  sessionBytes(id: string, location: 'live' | 'trash'): number {
    const dirs = location === 'live'
      ? { journal: this.layout.journal(id), history: this.layout.historySessionDir(id) }
      : { journal: path.join(this.layout.trashSessionDir(id), 'session', 'journal.jsonl'), history: path.join(this.layout.trashSessionDir(id), 'history') };
    let n = this.fsl.lstatSync(dirs.journal)?.size ?? 0;
    for (const name of this.list(dirs.history)) n += this.fsl.lstatSync(path.join(dirs.history, name))?.size ?? 0;
    return n;
  }

  /** Index entries, recovery folders and archives of sessions that do not exist. */
  orphans(live: ReadonlySet<string>): Finding[] {
    const out: Finding[] = [];
    for (const name of this.list(this.layout.indexDir)) {
      const p = path.join(this.layout.indexDir, name);
      const m = /^(.+)\.json$/.exec(name);
      if (m && isSessionId(m[1] as string)) {
        if (!live.has(m[1] as string)) out.push({ severity: 'warning', check: 'index', message: 'index entry of a session that does not exist (ignored)', file: this.rel(p) });
      } else if (!/\.json\.\d+$/.test(name) && !/\.json\.[0-9a-f]+$/.test(name)) {
        out.push({ severity: 'warning', check: 'layout', message: 'unexpected file in index/', file: this.rel(p) });
      }
    }
    for (const [dir, what] of [[this.layout.recoveryDir, 'recovery evidence'], [this.layout.historyDir, 'archived generations']] as const) {
      for (const name of this.list(dir)) {
        if (isSessionId(name) && !live.has(name)) {
          out.push({ severity: 'warning', check: 'layout', message: `${what} of a session that does not exist`, file: this.rel(path.join(dir, name)) });
        }
      }
    }
    return out;
  }

  // ---- one session --------------------------------------------------------------------

  verifyLive(id: string): SessionReport {
    const { layout } = this;
    const findings: Finding[] = [];
    const dir = layout.sessionDir(id);
    const dst = this.fsl.lstatSync(dir);
    let journal: ScannedJournal | undefined;
    let bytes = 0;
    if (dst && dst.isSymbolicLink()) {
      findings.push({ severity: 'error', check: 'permissions', message: 'the session directory is a symbolic link (the sidecar refuses it)', file: this.rel(dir) });
    } else if (dst && !dst.isDirectory()) {
      findings.push({ severity: 'error', check: 'layout', message: 'the session entry is not a directory', file: this.rel(dir) });
    } else if (dst) {
      this.dirMode(dst, dir, findings);
      for (const name of this.list(dir)) {
        if (name === 'journal.jsonl') continue;
        const p = path.join(dir, name);
        if (name === 'state') this.verifyState(p, findings);
        else if (name === 'scratch') this.verifyScratch(p, findings);
        else if (name === 'journal.jsonl.tmp') findings.push({ severity: 'warning', check: 'layout', message: 'a temporary journal left by a crashed create or compaction (removed by the next writable open)', file: this.rel(p) });
        else findings.push({ severity: 'warning', check: 'layout', message: 'unexpected file in the session directory', file: this.rel(p) });
      }
      if (!this.fsl.lstatSync(layout.journal(id))) {
        const temp = this.fsl.lstatSync(layout.journalTemp(id));
        findings.push(temp
          ? { severity: 'note', check: 'journal', message: 'no journal, only the temporary file of a create that crashed: not a session', file: this.rel(layout.journalTemp(id)) }
          : { severity: 'warning', check: 'journal', message: 'session directory without a journal', file: this.rel(dir) });
      } else {
        journal = this.scanFile(id, layout.journal(id), 'journal', findings);
        bytes += journal?.size ?? this.fsl.lstatSync(layout.journal(id))?.size ?? 0;
      }
    }
    const archives = this.verifyArchives(id, layout.historySessionDir(id), journal, findings);
    bytes += archives.bytes;
    this.verifyIndex(id, layout.indexEntry(id), journal, findings);
    this.verifyRecovery(layout.recoverySessionDir(id), findings);
    this.verifyLease(id, findings);
    return report(id, 'live', findings, journal, archives.count, bytes);
  }

  verifyTrashed(id: string): SessionReport {
    const findings: Finding[] = [];
    const trash = this.layout.trashSessionDir(id);
    const tst = this.fsl.lstatSync(trash);
    if (tst) this.dirMode(tst, trash, findings);
    const file = path.join(trash, 'session', 'journal.jsonl');
    let journal: ScannedJournal | undefined;
    let bytes = 0;
    if (this.fsl.lstatSync(file)) {
      journal = this.scanFile(id, file, 'journal', findings);
      bytes += journal?.size ?? 0;
    } else if (this.list(trash).length > 0) {
      findings.push({ severity: 'warning', check: 'journal', message: 'deleted session without a journal (a delete or restore that did not complete)', file: this.rel(trash) });
    }
    const archives = this.verifyArchives(id, path.join(trash, 'history'), journal, findings);
    bytes += archives.bytes;
    this.verifyRecovery(path.join(trash, 'recovery'), findings);
    return report(id, 'trash', findings, journal, archives.count, bytes);
  }

  /**
   * One journal file (the active journal or an archive), fully: its mode, header, and every
   * record line with the store's own scanner. Undefined when its records could not be read.
   */
  private scanFile(id: string, file: string, what: 'journal' | 'archive', out: Finding[], severity: Severity = 'error'): ScannedJournal | undefined {
    const rel = this.rel(file);
    const st = this.fsl.lstatSync(file);
    if (!st) {
      out.push({ severity, check: what, message: `${what} missing`, file: rel });
      return undefined;
    }
    if (st.isSymbolicLink()) {
      out.push({ severity: 'error', check: 'permissions', message: `the ${what} is a symbolic link (the sidecar refuses it)`, file: rel });
      return undefined;
    }
    if (!st.isFile()) {
      out.push({ severity: 'error', check: 'permissions', message: `the ${what} is not a regular file`, file: rel });
      return undefined;
    }
    this.fileMode(st, file, out);
    let fd: number;
    try {
      fd = this.fsl.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (err) {
      out.push({ severity: 'error', check: what, message: `cannot be read (${describe(err)})`, file: rel });
      return undefined;
    }
    try {
      const fst = this.fsl.fstatSync(fd);
      if (!fst.isFile()) {
        out.push({ severity: 'error', check: 'permissions', message: `the ${what} is not a regular file`, file: rel });
        return undefined;
      }
      let size = fst.size;
      let head;
      try {
        head = readHeader(this.fsl, fd, size);
      } catch (err) {
        out.push({ severity, check: what, message: `header: ${reasonOf(err)}`, file: rel, line: 1 });
        return undefined;
      }
      const { header, line } = head;
      if (header.sessionId !== id) {
        out.push({ severity, check: what, message: 'the header names another session', file: rel, line: 1 });
        return undefined;
      }
      let checkpoint: CommittedRecord | undefined;
      let firstSeq: number | undefined;
      const onCommit = (rec: CommittedRecord) => {
        firstSeq ??= rec.seq;
        if (rec.kind === 'checkpoint') checkpoint = { ...rec };
        for (const ext of this.extensions) ext.onRecord?.(id, rec, rel);
      };
      const origin: JournalPosition = { bytes: line.end, lastSeq: 0, records: 0, lastCrc: crcOf(line.bytes) };
      let scan;
      try {
        scan = scanRecords(this.fsl, fd, origin, size, onCommit);
        if (scan.tail && what === 'journal') {
          // A sidecar may be writing right now: what looked torn may be a batch being written.
          const now = this.fsl.fstatSync(fd).size;
          if (now > size) {
            size = now;
            const more = scanRecords(this.fsl, fd, scan.position, size, onCommit);
            scan = more;
          }
        }
      } catch (err) {
        const lineNo = err instanceof StoreError && typeof err.details.line === 'number' ? err.details.line : undefined;
        out.push({ severity, check: what, message: reasonOf(err), file: rel, ...(lineNo !== undefined ? { line: lineNo } : {}) });
        if (lineNo !== undefined) {
          const more = moreDamage(this.fsl, fd, line.end, size, lineNo);
          if (more.count > 0) {
            const listed = more.lines.join(', ');
            out.push({ severity, check: what, message: `${more.count} more damaged line${more.count === 1 ? '' : 's'} after it (line${more.lines.length === 1 ? '' : 's'} ${listed}${more.count > more.lines.length ? ', …' : ''})`, file: rel });
          }
        }
        return undefined;
      }
      const { position, tail } = scan;
      if (tail) {
        if (what === 'journal') {
          out.push({
            severity: severity === 'error' ? 'warning' : severity, check: what, file: rel, line: position.records + 2,
            message: `torn tail: ${tail.bytes} bytes after seq ${position.lastSeq} (${tail.reason}): an append that was never acknowledged, or one being written now; the next writable open moves it to recovery/`,
          });
        } else {
          out.push({
            severity, check: what, file: rel, line: position.records + 2,
            message: `damaged: the last ${tail.bytes} bytes do not verify (${tail.reason}); an archive is written whole, so this is not a torn write`,
          });
        }
      }
      return {
        header, headerLine: line.bytes, position, size, ino: fst.ino, dataStart: line.end,
        firstSeq: firstSeq ?? (checkpoint ? Number(checkpoint.seq) : 1), ...(checkpoint ? { checkpoint } : {}), ...(tail ? { tail } : {}),
      };
    } finally {
      this.fsl.closeSync(fd);
    }
  }

  /**
   * history/<id>/: every generation before the active one must be there, whole, with the
   * journal's header, starting where the previous compaction left off, and matching what the
   * next generation's checkpoint says it archived.
   */
  private verifyArchives(id: string, dir: string, journal: ScannedJournal | undefined, out: Finding[]): { count: number; bytes: number } {
    const names = this.list(dir);
    const dst = this.fsl.lstatSync(dir);
    if (dst) this.dirMode(dst, dir, out);
    const active = journal?.checkpoint ? generationOf(journal.checkpoint) : 0;
    const found = new Map<number, string>();
    for (const name of names) {
      const p = path.join(dir, name);
      if (/^\d+\.jsonl$/.test(name)) found.set(Number.parseInt(name, 10), p);
      else if (name.endsWith('.tmp')) out.push({ severity: 'warning', check: 'archive', message: 'a temporary file left by a compaction that did not complete (removed by the next writable open)', file: this.rel(p) });
      else out.push({ severity: 'warning', check: 'archive', message: 'unexpected file in the session\'s history', file: this.rel(p) });
    }
    let bytes = 0;
    let count = 0;
    const scanned = new Map<number, ScannedJournal>();
    for (const [g, p] of [...found].sort((a, b) => a[0] - b[0])) {
      const stale = journal !== undefined && g >= active;
      const before = out.length;
      const a = this.scanFile(id, p, 'archive', out, stale ? 'warning' : 'error');
      if (stale && out.length === before) {
        out.push({ severity: 'note', check: 'archive', message: `generation ${g} is not older than the active one (${active}): left by a compaction that did not complete; the next compaction replaces it`, file: this.rel(p) });
      }
      bytes += a?.size ?? this.fsl.lstatSync(p)?.size ?? 0;
      count += 1;
      if (!a) continue;
      scanned.set(g, a);
      if (stale) continue;
      const rel = this.rel(p);
      if (journal && !a.headerLine.equals(journal.headerLine)) out.push({ severity: 'error', check: 'archive', message: 'its header differs from the journal\'s (compaction keeps it byte for byte)', file: rel, line: 1 });
      if (g === 0 && a.checkpoint) out.push({ severity: 'error', check: 'archive', message: 'generation 0 starts with a checkpoint', file: rel, line: 2 });
      if (g > 0 && (!a.checkpoint || generationOf(a.checkpoint) !== g)) {
        out.push({ severity: 'error', check: 'archive', message: `generation ${g} does not start with the checkpoint of generation ${g}`, file: rel, line: 2 });
      }
    }
    if (!journal) return { count, bytes };
    for (let g = 0; g < active; g++) {
      const a = scanned.get(g);
      if (!found.has(g)) {
        out.push({ severity: 'error', check: 'archive', message: `generation ${g} is missing: the records it archived exist nowhere else`, file: this.rel(path.join(dir, `${g}.jsonl`)) });
        continue;
      }
      if (!a || a.tail) continue; // damaged: already reported
      // The checkpoint that starts generation g + 1 describes archive g.
      const next = g + 1 === active ? journal : scanned.get(g + 1);
      const cp = next?.checkpoint;
      if (!cp) continue;
      const archived = (cp.archived ?? {}) as { generation?: unknown; records?: unknown; bytes?: unknown };
      const through = Number(cp.throughSeq ?? cp.seq);
      const rel = this.rel(path.join(dir, `${g}.jsonl`));
      if (archived.generation !== g) out.push({ severity: 'error', check: 'archive', message: `the checkpoint of generation ${g + 1} names archive ${String(archived.generation)}, not ${g}`, file: rel });
      if (typeof archived.bytes === 'number' && archived.bytes !== a.size) {
        out.push({ severity: 'error', check: 'archive', message: `${a.size} bytes where the checkpoint of generation ${g + 1} recorded ${archived.bytes}`, file: rel });
      }
      if (typeof archived.records === 'number' && archived.records !== a.position.records) {
        out.push({ severity: 'error', check: 'archive', message: `${a.position.records} records where the checkpoint of generation ${g + 1} recorded ${archived.records}`, file: rel });
      }
      if (!(through >= a.firstSeq - (a.checkpoint ? 0 : 1) && through <= a.position.lastSeq)) {
        out.push({ severity: 'error', check: 'archive', message: `the checkpoint of generation ${g + 1} stands for records through seq ${through}, but this archive holds seqs ${a.firstSeq}..${a.position.lastSeq}`, file: rel });
      }
    }
    return { count, bytes };
  }

  /**
   * index/<id>.json against the verified journal. A cache may lag (it is written after commits,
   * without fsync), but what it records as committed must still be in the journal as recorded.
   */
  private verifyIndex(id: string, file: string, journal: ScannedJournal | undefined, out: Finding[]): void {
    const rel = this.rel(file);
    const st = this.fsl.lstatSync(file);
    if (!st) {
      if (journal) out.push({ severity: 'warning', check: 'index', message: 'no index entry (rebuilt by the next list or writable open)', file: rel });
      return;
    }
    this.indexEntries += 1;
    if (st.isSymbolicLink() || !st.isFile()) {
      out.push({ severity: 'error', check: 'permissions', message: 'the index entry is not a regular file', file: rel });
      return;
    }
    this.fileMode(st, file, out);
    const entry = readIndexEntry(this.fsl, this.layout, id);
    if (!entry) {
      if ((st.mode & 0o777) === FILE_MODE) out.push({ severity: 'warning', check: 'index', message: 'the index entry is not valid (ignored and rebuilt from the journal)', file: rel });
      return;
    }
    if (!journal) return; // nothing verified to compare with
    const drift = (field: string, has: unknown, want: unknown) => out.push({
      severity: 'error', check: 'index', file: rel, message: `index drift: ${field} is ${show(has)} but the journal says ${show(want)}`,
    });
    if (entry.createdAt !== journal.header.createdAt) drift('createdAt', entry.createdAt, journal.header.createdAt);
    if ((entry.title ?? undefined) !== (journal.header.title ?? undefined)) drift('title', entry.title, journal.header.title);
    if (entry.ino !== journal.ino) {
      out.push({ severity: 'warning', check: 'index', file: rel, message: 'the index entry describes a journal file that was replaced (stale; rebuilt by the next open)' });
      return;
    }
    const verifiedEnd = journal.position.bytes;
    if (entry.bytes > journal.size) {
      out.push({ severity: 'error', check: 'index', file: rel, message: `the index records ${entry.bytes} bytes as committed but the journal has ${journal.size}: acknowledged records are missing` });
      return;
    }
    if (entry.bytes > verifiedEnd) {
      if (journal.tail) {
        // What looked like a torn tail is in bytes that were acknowledged: corruption (as the store would say).
        const torn = out.findIndex((f) => f.check === 'journal' && f.message.startsWith('torn tail'));
        if (torn !== -1) out.splice(torn, 1);
        out.push({
          severity: 'error', check: 'journal', file: this.rel(this.layout.journal(id)), line: journal.position.records + 2,
          message: `journal line ${journal.position.records + 2} is damaged: ${journal.tail.reason}, in bytes the index records as committed (acknowledged records are damaged)`,
        });
        return;
      }
      out.push({ severity: 'error', check: 'index', file: rel, message: `the index records ${entry.bytes} bytes as committed but only ${verifiedEnd} verify: acknowledged records are damaged` });
      return;
    }
    if (entry.records === 0 ? entry.bytes !== journal.dataStart || entry.lastSeq !== 0 : !this.lineMatches(journal, entry)) {
      out.push({ severity: 'error', check: 'index', file: rel, message: `index drift: the journal line ending at byte ${entry.bytes} is not the one the index recorded (seq ${entry.lastSeq}, crc ${entry.lastCrc})` });
      return;
    }
    if (entry.firstSeq !== undefined && entry.firstSeq !== journal.firstSeq) drift('firstSeq', entry.firstSeq, journal.firstSeq);
    const generation = journal.checkpoint ? generationOf(journal.checkpoint) : 0;
    if (entry.generation !== undefined && entry.generation !== generation) drift('generation', entry.generation, generation);
    if (entry.bytes < verifiedEnd) {
      const behind = journal.position.lastSeq - entry.lastSeq;
      out.push({ severity: 'note', check: 'index', file: rel, message: `the index entry is ${behind} record${behind === 1 ? '' : 's'} behind the journal (normal after a crash or while a sidecar writes)` });
      return;
    }
    if (entry.lastSeq !== journal.position.lastSeq) drift('lastSeq', entry.lastSeq, journal.position.lastSeq);
    if (entry.records !== journal.position.records) drift('records', entry.records, journal.position.records);
    // State the journal reduces to (turn, and whatever else positions carry): compared when both sides have it.
    const pos = journal.position as unknown as Record<string, unknown>;
    for (const key of ['turn', 'runtime']) {
      const has = (entry as unknown as Record<string, unknown>)[key];
      const want = pos[key];
      if (has === undefined || want === undefined) continue;
      if (canonical(has ?? null) !== canonical(want ?? null) && !(key === 'runtime' && isZeroRuntime(has) && isZeroRuntime(want))) drift(key, has, want);
    }
  }

  private lineMatches(journal: ScannedJournal, entry: IndexEntry): boolean {
    let fd: number | undefined;
    try {
      fd = this.fsl.openSync(this.layout.journal(entry.sessionId), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      if (this.fsl.fstatSync(fd).ino !== journal.ino) return true; // replaced since the scan: judged on the next run
      const last = lineEndingAt(this.fsl, fd, entry.bytes, journal.dataStart);
      return last !== undefined && last.bytes.length > 10 && crcOf(last.bytes) === entry.lastCrc && peekSeq(last.bytes) === entry.lastSeq;
    } catch {
      return false;
    } finally {
      if (fd !== undefined) this.fsl.closeSync(fd);
    }
  }

  /** sessions/<id>/state/: one 0600 file per state value (write-file-atomic may leave a temp file after a crash). */
  private verifyState(dir: string, out: Finding[]): void {
    const st = this.fsl.lstatSync(dir);
    if (!st) return;
    this.dirMode(st, dir, out);
    if (!st.isDirectory()) return;
    for (const name of this.list(dir)) {
      const p = path.join(dir, name);
      const f = this.fsl.lstatSync(p);
      if (!f) continue;
      if (!f.isFile()) out.push({ severity: 'error', check: 'permissions', message: 'a state value that is not a regular file', file: this.rel(p) });
      else if (name.endsWith('.json')) this.fileMode(f, p, out);
      else out.push({ severity: 'warning', check: 'layout', message: 'a temporary file left by a state write that did not complete', file: this.rel(p) });
    }
  }

  /** sessions/<id>/scratch/: tool runs' private directories (0700); what tools put inside is theirs. */
  private verifyScratch(dir: string, out: Finding[]): void {
    const st = this.fsl.lstatSync(dir);
    if (!st) return;
    this.dirMode(st, dir, out);
    if (!st.isDirectory()) return;
    for (const name of this.list(dir)) {
      const p = path.join(dir, name);
      const d = this.fsl.lstatSync(p);
      if (d) this.dirMode(d, p, out);
    }
  }

  /** recovery/<id>/: torn tails cut by recovery, kept as evidence. Their presence is reported. */
  private verifyRecovery(dir: string, out: Finding[]): void {
    const dst = this.fsl.lstatSync(dir);
    if (!dst) return;
    this.dirMode(dst, dir, out);
    for (const name of this.list(dir)) {
      const p = path.join(dir, name);
      const st = this.fsl.lstatSync(p);
      if (!st) continue;
      const m = /^(\d+)-(\d+)\.torn$/.exec(name);
      if (!m || !st.isFile()) {
        out.push({ severity: 'warning', check: 'recovery', message: 'unexpected entry among the recovery evidence', file: this.rel(p) });
        continue;
      }
      this.fileMode(st, p, out);
      const when = new Date(Number(m[1])).toISOString();
      out.push({ severity: 'note', check: 'recovery', file: this.rel(p), message: `recovery evidence: ${st.size} bytes of a torn tail cut at offset ${m[2]} on ${when}` });
    }
  }

  /** locks/<id>.lock: a writer lease, held now or left by a process that died. */
  private verifyLease(id: string, out: Finding[]): void {
    const lock = this.layout.lockDir(id);
    if (!this.fsl.lstatSync(lock)) return;
    let holder: { pid?: unknown; hostname?: unknown; startedAt?: unknown } | undefined;
    try {
      const text = readPrivateSmall(this.fsl, `${lock}.holder.json`, 4096);
      holder = text === undefined ? undefined : (JSON.parse(text) as typeof holder);
    } catch {
      holder = undefined;
    }
    if (!holder || typeof holder.pid !== 'number') {
      out.push({ severity: 'note', check: 'lease', message: 'a writer lease is held (holder unknown)', file: this.rel(lock) });
      return;
    }
    const here = holder.hostname === os.hostname();
    const alive = here ? processAlive(holder.pid) : undefined;
    const who = `pid ${holder.pid} on ${String(holder.hostname)} since ${String(holder.startedAt)}`;
    out.push(alive === false
      ? { severity: 'note', check: 'lease', file: this.rel(lock), message: `a writer lease left by a process that is gone (${who}); the next writer takes it over` }
      : { severity: 'note', check: 'lease', file: this.rel(lock), message: `open for writing by ${who}` });
  }

  // ---- helpers ------------------------------------------------------------------------

  private list(dir: string): string[] {
    try {
      return this.fsl.readdirSync(dir).sort();
    } catch {
      return [];
    }
  }

  private owner(st: fs.Stats, p: string, out: Finding[]): void {
    if (this.uid !== undefined && st.uid !== this.uid) out.push({ severity: 'error', check: 'permissions', message: 'owned by another user (the sidecar refuses it)', file: this.rel(p) });
  }

  private dirMode(st: fs.Stats, p: string, out: Finding[]): void {
    if (st.isSymbolicLink()) {
      out.push({ severity: 'error', check: 'permissions', message: 'a symbolic link where a directory belongs', file: this.rel(p) });
      return;
    }
    if (!st.isDirectory()) {
      out.push({ severity: 'error', check: 'layout', message: 'not a directory', file: this.rel(p) });
      return;
    }
    const mode = st.mode & 0o777;
    if (mode !== DIR_MODE) out.push({ severity: 'error', check: 'permissions', message: `directory mode ${octal(mode)}, expected 700`, file: this.rel(p) });
    this.owner(st, p, out);
  }

  private fileMode(st: fs.Stats, p: string, out: Finding[]): void {
    const mode = st.mode & 0o777;
    if (mode !== FILE_MODE) out.push({ severity: 'error', check: 'permissions', message: `file mode ${octal(mode)}, expected 600${(mode & 0o077) !== 0 ? ' (others can read it)' : ''}`, file: this.rel(p) });
    this.owner(st, p, out);
  }
}

function report(id: string, location: 'live' | 'trash', findings: Finding[], journal: ScannedJournal | undefined, archives: number, bytes: number): SessionReport {
  return {
    sessionId: id, location, findings, archives, bytes,
    ...(journal ? {
      journal: {
        bytes: journal.size, records: journal.position.records, lastSeq: journal.position.lastSeq, firstSeq: journal.firstSeq,
        generation: journal.checkpoint ? generationOf(journal.checkpoint) : 0,
      },
    } : {}),
    ok: !findings.some((f) => f.severity === 'error'),
  };
}

/** Damaged lines after the first one, found by decoding each line on its own. */
function moreDamage(fsl: FsLayer, fd: number, dataStart: number, size: number, firstBad: number): { count: number; lines: number[] } {
  const lines: number[] = [];
  let count = 0;
  let lineNo = 1;
  for (const line of scanLines(fsl, fd, dataStart, size)) {
    lineNo += 1;
    if (lineNo <= firstBad) continue;
    const ok = line.terminated && decodeLine(line.bytes).ok;
    if (ok) continue;
    count += 1;
    if (lines.length < MORE_DAMAGE_LISTED) lines.push(lineNo);
  }
  return { count, lines };
}

function reasonOf(err: unknown): string {
  if (err instanceof StoreError) return err.message;
  return `unreadable (${describe(err)})`;
}

function generationOf(cp: Record<string, unknown>): number {
  const g = Number(cp.generation);
  return Number.isSafeInteger(g) && g >= 0 ? g : 0;
}

function isSessionId(name: string): boolean {
  try {
    checkSessionId(name);
    return true;
  } catch {
    return false;
  }
}

function octal(mode: number): string {
  return mode.toString(8).padStart(3, '0');
}

function processAlive(pid: number): boolean | undefined {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'ESRCH' ? false : undefined;
  }
}

/** JSON with sorted keys: member order does not matter for equality. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function isZeroRuntime(v: unknown): boolean {
  const r = v as { apiSeq?: unknown; toolSeq?: unknown; openApi?: unknown } | null;
  return !r || (!r.apiSeq && !r.toolSeq && (!Array.isArray(r.openApi) || r.openApi.length === 0));
}

function show(v: unknown): string {
  if (v === undefined) return 'absent';
  const text = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
