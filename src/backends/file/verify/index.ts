import path from 'node:path';
import { nodeFs } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import { checkSessionId } from '../../../domain/ids.js';
import { StoreLayout } from '../layout.js';
import { attachKey } from '../journal/cipher.js';
import { checkMarker } from '../encryptionMarker.js';
import { breathe } from './common.js';
import { finishExtensions, recordSink, startExtensions, VERIFY_EXTENSIONS } from './extensions.js';
import { checkLayout, orphans, sessionBytes, sessionDirs, trashDirs } from './layoutCheck.js';
import { FileChecks } from './permissions.js';
import { type Finding, type Location, type SessionReport, type VerifyOptions, type VerifyReport, verifyReport } from './report.js';
import { SessionChecker } from './sessionCheck.js';
import { WorkInterrupted } from '../../../domain/work.js';
import { onceEach, settledReport } from './settle.js';

/**
 * `verifyStore`: a read-only audit of a store (protocol/STORAGE.md is what it checks against).
 * Every journal, archived generation (history/<id>/<gen>.jsonl), index entry, recovery file and
 * the store's folders are checked: header, checksums, canonical lines, seq continuity and
 * batches (with the store's own journal reader, src/backends/file/journal/), compaction chains, index
 * drift, file modes (0600 files, 0700 directories) and ownership; then the extensions
 * (VERIFY_EXTENSIONS: the blobs check) run over what the records reference. Nothing is ever
 * written or repaired: files are opened O_RDONLY and a torn tail is reported, not cut.
 *
 * One concern per file: report.ts (what is reported), layoutCheck.ts, sessionCheck.ts,
 * journalCheck.ts, archiveCheck.ts, indexCheck.ts, recoveryCheck.ts (and leases),
 * permissions.ts (modes and ownership), extensions.ts, blobsCheck.ts + blobStore.ts, and
 * settle.ts (a consistent view of each session while a sidecar may be writing it).
 */
export type {
  ExtensionFinding, Finding, Location, SessionReport, Severity, VerifyContext, VerifyExtension, VerifyExtensionRun, VerifyOptions, VerifyReport,
} from './report.js';
export { VERIFY_EXTENSIONS } from './extensions.js';
export { blobsCheck } from './blobsCheck.js';

interface Work {
  id: string;
  location: Location;
  bytes: number;
}

export async function verifyStore(root: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const fsl = opts.fs ?? { ...nodeFs }; // a seam of this verification's own: the key travels with it (journal/cipher.ts)
  const layout = new StoreLayout(path.resolve(root));
  if (opts.encryptionKey) {
    attachKey(fsl, { key: opts.encryptionKey, gate: () => { throw new Error('verify never writes'); } });
  }
  if (fsl.lstatSync(layout.root)?.isDirectory()) checkMarker(fsl, layout, opts.encryptionKey, true);
  const fc = new FileChecks(fsl, layout);
  const running = startExtensions(opts.extensions ?? VERIFY_EXTENSIONS);
  const checker = new SessionChecker(fc, onceEach(recordSink(running)));
  const single = opts.sessionId !== undefined;
  const store: Finding[] = [];
  const live = liveSessions(fc, opts.sessionId, store);
  const trashed = !single && opts.includeTrash !== false ? trashDirs(fc) : [];
  const work: Work[] = [
    ...live.map((id) => ({ id, location: 'live' as const, bytes: sessionBytes(fc, id, 'live') })),
    ...trashed.map((id) => ({ id, location: 'trash' as const, bytes: sessionBytes(fc, id, 'trash') })),
  ];
  const sessions = await verifySessions(fc, checker, work, opts);
  if (!single) store.push(...orphans(fc, new Set(live)));
  await finishExtensions(running, { root: layout.root, layout, fsl, sessionIds: live, single }, store, sessions);
  return verifyReport(layout.root, store, sessions, checker.indexEntries);
}

/** The live sessions to verify: the one asked for, or all (after the store's folders are checked). */
function liveSessions(fc: FileChecks, sessionId: string | undefined, store: Finding[]): string[] {
  const { fsl, layout } = fc;
  const rootSt = fsl.lstatSync(layout.root);
  if (!rootSt || !rootSt.isDirectory()) {
    throw new StoreError('SessionNotFound', `no session store at ${layout.root}`);
  }
  if (sessionId !== undefined) {
    const id = checkSessionId(sessionId);
    if (!fsl.lstatSync(layout.sessionDir(id))) throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
    return [id];
  }
  store.push(...checkLayout(fc));
  return sessionDirs(fc, store);
}

/** Each session checked until a check saw it unchanged by any writer (settle.ts). */
async function verifySessions(fc: FileChecks, checker: SessionChecker, work: readonly Work[], { work: hooks }: VerifyOptions): Promise<SessionReport[]> {
  hooks?.phase?.('verifying', work.length, 'sessions');
  const sessions: SessionReport[] = [];
  for (const [i, w] of work.entries()) {
    if (await hooks?.shouldStop?.()) throw new WorkInterrupted(`${i} of ${work.length} sessions verified`);
    sessions.push(await settledReport(fc, w.id, w.location, () => (w.location === 'live' ? checker.verifyLive(w.id) : checker.verifyTrashed(w.id))));
    hooks?.step?.();
    if (!hooks?.shouldStop && i % 16 === 15) await breathe(); // let signals and timers run
  }
  return sessions;
}
