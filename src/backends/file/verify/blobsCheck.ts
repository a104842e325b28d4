import { digestOf } from '../../../domain/blobRefs.js';
import { blobPath } from '../blobs/blobFiles.js';
import { type BlobRefValue, isBlobRef } from '../../../domain/blobRefs.js';
import { type BlobState, blobTemps, inspectBlob, listBlobFiles } from './blobStore.js';
import { plural } from './common.js';
import { FileChecks } from './permissions.js';
import type { ExtensionFinding, Finding, Location, VerifyContext, VerifyExtension, VerifyExtensionRun } from './report.js';

/**
 * The blobs check (protocol/STORAGE.md, "Blobs"): every {"$blob":"sha256:<hex>","bytes":N}
 * reference in the records of every journal and archive verified must name a blob that is
 * there, whole (its sha256 is its name) and of the size the reference says; these findings go
 * to the session whose records hold the reference. Over the whole store (not when one session
 * is verified) it also checks the modes under blobs/, lists blobs nothing references (notes:
 * harmless) and temp files of unfinished blob writes (warnings).
 */
export const blobsCheck: VerifyExtension = {
  name: 'blobs',
  start: () => new BlobsRun(),
};

/** The references of one session's file to one blob. */
interface Uses {
  sessionId: string;
  location: Location;
  file: string;
  firstSeq: number;
  count: number;
  /** Sizes the references declare -> the first seq declaring it. */
  sizes: Map<number, number>;
}

class BlobsRun implements VerifyExtensionRun {
  /** Digest -> (session and file -> their references). */
  private readonly refs = new Map<string, Map<string, Uses>>();
  /** References that name no valid blob, per session and file. */
  private readonly malformed = new Map<string, Uses>();

  onRecord(sessionId: string, record: Readonly<Record<string, unknown>>, file: string): void {
    const seq = Number(record.seq);
    forEachRef(record, (ref) => {
      const hex = digestOf(ref.$blob);
      if (hex === undefined) {
        use(this.malformed, sessionId, file, seq);
        return;
      }
      let bySource = this.refs.get(hex);
      if (!bySource) this.refs.set(hex, (bySource = new Map()));
      const u = use(bySource, sessionId, file, seq);
      if (!u.sizes.has(ref.bytes)) u.sizes.set(ref.bytes, seq);
    });
  }

  async finish(ctx: VerifyContext): Promise<ExtensionFinding[]> {
    const fc = new FileChecks(ctx.fsl, ctx.layout);
    const out: ExtensionFinding[] = [];
    for (const u of this.malformed.values()) {
      out.push(sessionFinding(u, `a blob reference ${where(u)} does not name a blob (not sha256:<64 hex digits>)`));
    }
    const files = ctx.single ? new Map([...this.refs.keys()].map((hex) => [hex, blobPath(ctx.layout, hex)])) : listBlobFiles(fc, out);
    const states = new Map<string, BlobState>();
    for (const [hex, file] of files) states.set(hex, await inspectBlob(fc, file, hex, out));
    for (const [hex, bySource] of this.refs) {
      const state = states.get(hex) ?? { state: 'missing' };
      for (const u of bySource.values()) out.push(...referenceFindings(hex, state, u));
    }
    if (!ctx.single) {
      for (const [hex, state] of states) if (!this.refs.has(hex)) out.push(...unreferenced(fc, files.get(hex) as string, state));
      blobTemps(fc, out);
    }
    return out;
  }
}

/** Calls `found` with every blob reference in a value (a reference is not looked into). */
function forEachRef(value: unknown, found: (ref: BlobRefValue) => void): void {
  if (value === null || typeof value !== 'object') return;
  if (isBlobRef(value)) {
    found(value);
    return;
  }
  for (const v of Array.isArray(value) ? value : Object.values(value)) forEachRef(v, found);
}

function use(map: Map<string, Uses>, sessionId: string, file: string, seq: number): Uses {
  const key = `${sessionId}\u0000${file}`;
  let u = map.get(key);
  if (!u) {
    u = { sessionId, location: file.startsWith('trash/') ? 'trash' : 'live', file, firstSeq: seq, count: 0, sizes: new Map() };
    map.set(key, u);
  }
  u.count += 1;
  return u;
}

/** "at seq 7" or "at seq 7 (and 2 more records)". */
function where(u: Uses): string {
  return `at seq ${u.firstSeq}${u.count > 1 ? ` (and ${plural(u.count - 1, 'more reference')})` : ''}`;
}

function sessionFinding(u: Uses, message: string): ExtensionFinding {
  return { severity: 'error', check: 'blobs', message, file: u.file, sessionId: u.sessionId, location: u.location };
}

/** What is wrong with the blob a session's records reference. */
function referenceFindings(hex: string, blob: BlobState, u: Uses): ExtensionFinding[] {
  const ref = `blob sha256:${hex}`;
  switch (blob.state) {
    case 'missing':
      return [sessionFinding(u, `${ref} referenced ${where(u)} is missing`)];
    case 'damaged':
      return [sessionFinding(u, `${ref} referenced ${where(u)} is damaged: its sha256 does not match its name`)];
    case 'unreadable':
      return [sessionFinding(u, `${ref} referenced ${where(u)} cannot be read (${blob.reason})`)];
    case 'ok':
      return [...u.sizes].filter(([bytes]) => bytes !== blob.size)
        .map(([bytes, seq]) => sessionFinding(u, `${ref} has ${blob.size} bytes but the reference at seq ${seq} says ${bytes}`));
  }
}

/** A blob nothing references: harmless (a note), but a damaged one is still an error. */
function unreferenced(fc: FileChecks, file: string, blob: BlobState): Finding[] {
  const out: Finding[] = [];
  const rel = fc.rel(file);
  if (blob.state === 'damaged') out.push({ severity: 'error', check: 'blobs', message: 'a damaged blob: its sha256 does not match its name', file: rel });
  if (blob.state === 'unreadable' && !blob.reported) out.push({ severity: 'error', check: 'blobs', message: `a blob that cannot be read (${blob.reason})`, file: rel });
  out.push({ severity: 'note', check: 'blobs', message: 'a blob no record references (harmless: left by a crash between the blob write and the record write, or by a deleted session)', file: rel });
  return out;
}
