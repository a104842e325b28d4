import type { Work } from '../../../domain/work.js';
import type { StoreKey } from '../../../durable/storeKey.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import type { StoreLayout } from '../layout.js';

/**
 * What `verifyStore` reports. Findings have a severity:
 *   error    the store is damaged or unsafe (corruption, lost acknowledged records, wrong modes);
 *   warning  something to look at that the store handles itself (a torn tail the next writable
 *            open repairs, a stale temp file, an orphan or unusable index entry);
 *   note     information (recovery evidence kept, an index entry behind its journal, a lease held).
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

export type Location = 'live' | 'trash';

export interface SessionReport {
  sessionId: string;
  /** live: under sessions/; trash: a deleted session under trash/. */
  location: Location;
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
 * A finding an extension returns from `finish`. With `sessionId` it is about that session's
 * records: it is reported with that session (live, unless `location` says trash), which then
 * fails on an error; without, it is about the store.
 */
export interface ExtensionFinding extends Finding {
  sessionId?: string;
  location?: Location;
}

/** The hooks of one verification (see VerifyExtension). */
export interface VerifyExtensionRun {
  onRecord?(sessionId: string, record: Readonly<Record<string, unknown>>, file: string): void;
  finish?(ctx: VerifyContext): ExtensionFinding[] | Promise<ExtensionFinding[]>;
}

/**
 * A pluggable check. `onRecord` sees every committed record of every verified journal and
 * archive (in seq order per file; file is relative to the store root), so a check can collect
 * what records reference without a second pass; `finish` runs once after all sessions and
 * returns its findings. A check that collects state implements `start`, called once per
 * verification: the hooks of the object it returns are used for that verification only.
 */
export interface VerifyExtension extends VerifyExtensionRun {
  name: string;
  start?(): VerifyExtensionRun;
}

export interface VerifyOptions {
  /** Verify this session only (and no store-wide checks). */
  sessionId?: string;
  /** The file-system seam (default: node's fs). Only read calls are made. */
  fs?: FsLayer;
  /** Progress, and a stop asked between sessions (domain/work.ts): verify then throws WorkInterrupted (it writes nothing, so any point is safe). */
  work?: Work;
  /** Extensions to run instead of VERIFY_EXTENSIONS. */
  extensions?: readonly VerifyExtension[];
  /** Also verify deleted sessions in trash/ (default true; ignored with sessionId). */
  includeTrash?: boolean;
  /** The key of an encrypted store (encryption at rest): checked against encryption.json first. */
  encryptionKey?: StoreKey;
}

/** A session's report from its findings and what was verified. */
export function sessionReport(
  sessionId: string, location: Location, findings: Finding[], journal: SessionReport['journal'], archives: number, bytes: number,
): SessionReport {
  return {
    sessionId, location, findings, archives, bytes,
    ...(journal ? { journal } : {}),
    ok: !findings.some((f) => f.severity === 'error'),
  };
}

/** The report of a whole verification. */
export function verifyReport(root: string, store: Finding[], sessions: SessionReport[], indexEntries: number): VerifyReport {
  const all = [...store, ...sessions.flatMap((s) => s.findings)];
  const count = (s: Severity) => all.filter((f) => f.severity === s).length;
  return {
    root,
    ok: count('error') === 0,
    store,
    sessions,
    totals: {
      sessions: sessions.length,
      journals: sessions.filter((s) => s.journal).length,
      archives: sessions.reduce((a, s) => a + s.archives, 0),
      indexEntries,
      bytes: sessions.reduce((a, s) => a + s.bytes, 0),
      errors: count('error'),
      warnings: count('warning'),
      notes: count('note'),
    },
  };
}
