import { out, type Style } from './output.js';

/**
 * What `session-sidecar doctor` reports: one finding per check, each `ok`, a `problem` (the
 * exit code is then 1) or `info`; every problem says what to do (`advice`: the exact command
 * where there is one). Findings never quote a secret: no key, no password, no record content.
 */
export type DoctorStatus = 'ok' | 'problem' | 'info';

export interface DoctorFinding {
  status: DoctorStatus;
  /** config, store, permissions, lease, index, journal, blobs, disk, encryption, postgres, privileges, schema... */
  check: string;
  message: string;
  /** The file concerned (absolute path), when there is one. */
  file?: string;
  /** What to do about a problem. */
  advice?: string;
}

export interface DoctorReport {
  /** The store as it may be printed (a directory, or a URL without its password). */
  store: string;
  kind: 'file' | 'postgres';
  healthy: boolean;
  findings: DoctorFinding[];
}

export function doctorReport(store: string, kind: DoctorReport['kind'], findings: DoctorFinding[]): DoctorReport {
  return { store, kind, healthy: !findings.some((f) => f.status === 'problem'), findings };
}

/** A shell word: quoted when it holds anything but safe characters. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

export function printDoctor(r: DoctorReport, s: Style, json: boolean): void {
  if (json) return out(`${JSON.stringify(r, null, 2)}\n`);
  const lines = [s.bold(`doctor: ${r.kind === 'file' ? 'store' : 'PostgreSQL store'} ${r.store}`)];
  const mark = { ok: s.green('ok     '), problem: s.red(s.bold('PROBLEM')), info: s.dim('info   ') };
  for (const f of r.findings) {
    lines.push(`${mark[f.status]} ${f.check}: ${f.message}${f.file ? s.dim(` (${f.file})`) : ''}`);
    if (f.advice) lines.push(`        ${s.cyan('->')} ${f.advice}`);
  }
  const problems = r.findings.filter((f) => f.status === 'problem').length;
  lines.push('');
  lines.push(r.healthy ? s.green('healthy: no problem found') : s.red(s.bold(`${problems} problem${problems === 1 ? '' : 's'} found`)));
  out(`${lines.join('\n')}\n`);
}
