import path from 'node:path';
import type { Finding, VerifyReport } from '../backends/file/verify/index.js';
import { type DoctorFinding, shellWord } from './doctorReport.js';

/**
 * verify's findings (src/backends/file/verify/) as doctor's, each problem with what to do.
 * Errors and warnings are problems; notes are information — except a writer lease left by a
 * process that is gone, which doctor counts as a problem (something died holding a session).
 */
export function fromVerify(report: VerifyReport, root: string): DoctorFinding[] {
  const found: DoctorFinding[] = [];
  const store = `--store ${shellWord(root)}`;
  const add = (f: Finding, sessionId?: string) => {
    const file = f.file !== undefined ? path.join(root, f.file) : undefined;
    const deadLease = f.check === 'lease' && /left by a process that is gone/.test(f.message);
    const status = f.severity === 'note' && !deadLease ? 'info' : 'problem';
    const message = `${sessionId !== undefined ? `session ${sessionId}: ` : ''}${f.message}`;
    found.push({
      status, check: f.check, message, ...(file !== undefined ? { file } : {}),
      ...(status === 'problem' ? { advice: adviceFor(f, file, root, store, sessionId) } : {}),
    });
  };
  for (const f of report.store) add(f);
  for (const s of report.sessions) for (const f of s.findings) add(f, s.sessionId);
  return found;
}

function adviceFor(f: Finding, file: string | undefined, root: string, store: string, sessionId: string | undefined): string {
  const q = file !== undefined ? shellWord(file) : shellWord(root);
  const details = `session-sidecar verify${sessionId !== undefined ? ` ${sessionId}` : ''} ${store} -v`;
  switch (f.check) {
    case 'permissions':
      if (/store directory has mode|directory mode/.test(f.message)) return `chmod 700 ${q}`;
      if (/file mode/.test(f.message)) return `chmod 600 ${q}`;
      if (/owned by another user/.test(f.message)) return `give it back to the user the sidecar runs as: sudo chown "$(id -un)" ${q}`;
      return `the store allows no symbolic link or special file here: replace it by the real one; ${details} for details`;
    case 'lease':
      return `nothing is lost: the next sidecar that opens the session takes the lease over (after --lease-stale-ms). To clear it now, while no sidecar serves this store: rm -r ${q} ${shellWord(`${file ?? root}.holder.json`)}`;
    case 'index':
      if (/no index entry|not valid|replaced/.test(f.message)) return `nothing is lost (the index is a cache): session-sidecar reindex ${store} rebuilds every entry (a sidecar that opens the session for writing does too)`;
      if (/temporary file/.test(f.message)) return `remove it while no sidecar serves this store: rm ${q}`;
      if (/does not exist/.test(f.message)) return `remove the orphan entry while no sidecar serves this store: rm ${q}`;
      return `the index disagrees with the journal: ${details} for details; the entry is a cache: rm ${q} while no sidecar serves the store, and the next one rebuilds it`;
    case 'journal':
    case 'archive':
      if (f.severity === 'warning' && /torn/.test(f.message)) return `the next sidecar that opens the session cuts the torn tail and keeps it under recovery/; ${details} for details`;
      return `${details} for details; session-sidecar show --salvage ${sessionId ?? '<id>'} ${store} reads what is intact, export --salvage saves it, and session-sidecar repair ${sessionId ?? '<id>'} ${store} --yes rewrites it of its intact records (the damaged journal kept under recovery/)`;
    case 'layout':
      if (/\.gitignore/.test(f.message)) return `printf '*\\n' > ${shellWord(path.join(root, '.gitignore'))} && chmod 600 ${shellWord(path.join(root, '.gitignore'))}`;
      if (/folder missing/.test(f.message)) return `a sidecar creates it on start (session-sidecar serve ${store})`;
      return `${details} for details`;
    default:
      return `${details} for details`;
  }
}
