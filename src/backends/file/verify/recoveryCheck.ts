import os from 'node:os';
import { readPrivateSmall } from '../../../durable/durableFile.js';
import type { FileChecks } from './permissions.js';
import type { Finding } from './report.js';

/** recovery/<id>/: torn tails cut by recovery, and journals replaced by `repair` (backends/file/repair.ts), kept as evidence. Their presence is reported. */
export function verifyRecovery(fc: FileChecks, dir: string, out: Finding[]): void {
  if (!fc.directory(dir, out)) return;
  for (const { name, path: p, st } of fc.entries(dir)) {
    const repaired = /^(\d+)-damaged-journal\.jsonl$/.exec(name);
    if (repaired && st.isFile()) {
      fc.fileMode(st, p, out);
      out.push({ severity: 'note', check: 'recovery', file: fc.rel(p), message: `recovery evidence: the damaged journal (${st.size} bytes) replaced by repair on ${new Date(Number(repaired[1])).toISOString()}` });
      continue;
    }
    const m = /^(\d+)-(\d+)\.torn$/.exec(name);
    if (!m || !st.isFile()) {
      out.push({ severity: 'warning', check: 'recovery', message: 'unexpected entry among the recovery evidence', file: fc.rel(p) });
      continue;
    }
    fc.fileMode(st, p, out);
    const when = new Date(Number(m[1])).toISOString();
    out.push({ severity: 'note', check: 'recovery', file: fc.rel(p), message: `recovery evidence: ${st.size} bytes of a torn tail cut at offset ${m[2]} on ${when}` });
  }
}

type Holder = { pid?: unknown; hostname?: unknown; startedAt?: unknown };

function holderOf(fc: FileChecks, lock: string): Holder | undefined {
  try {
    const text = readPrivateSmall(fc.fsl, `${lock}.holder.json`, 4096);
    return text === undefined ? undefined : (JSON.parse(text) as Holder);
  } catch {
    return undefined;
  }
}

/**
 * Whether a writer may be at work on the session now: its lease is held and its holder is not
 * known dead (alive on this host, or on another host, where we cannot tell). Every write of a
 * session — appends, compaction, state values, its index entry, blobs — happens under that
 * lease, so what such a writer leaves for an instant (a temp file, an index entry not yet
 * rewritten) is its normal operation, not damage (verify reports it as a note then).
 */
export function writerLive(fc: FileChecks, id: string): boolean {
  const lock = fc.layout.lockDir(id);
  if (!fc.fsl.lstatSync(lock)) return false;
  const holder = holderOf(fc, lock);
  if (!holder || typeof holder.pid !== 'number') return true; // being taken right now
  return holder.hostname !== os.hostname() || processAlive(holder.pid) !== false;
}

/** Whether any session of the store has a live writer (blob writes belong to no one session). */
export function anyWriterLive(fc: FileChecks): boolean {
  return fc.list(fc.layout.locksDir).some((name) => name.endsWith('.lock') && writerLive(fc, name.slice(0, -'.lock'.length)));
}

/**
 * A warning that a live writer's normal operation explains (a temp file, an index entry not yet
 * rewritten): a note while the session's writer is at work (`busy`), the warning otherwise.
 */
export function unlessWriting(f: Finding, busy: boolean): Finding {
  return busy ? { ...f, severity: 'note', message: `${f.message} — its writer is at work now, so this is most likely a write in progress` } : f;
}

/** locks/<id>.lock: a writer lease, held now or left by a process that died. */
export function verifyLease(fc: FileChecks, id: string, out: Finding[]): void {
  const lock = fc.layout.lockDir(id);
  if (!fc.fsl.lstatSync(lock)) return;
  const holder = holderOf(fc, lock);
  if (!holder || typeof holder.pid !== 'number') {
    out.push({ severity: 'note', check: 'lease', message: 'a writer lease is held (holder unknown)', file: fc.rel(lock) });
    return;
  }
  const here = holder.hostname === os.hostname();
  const alive = here ? processAlive(holder.pid) : undefined;
  const who = `pid ${holder.pid} on ${String(holder.hostname)} since ${String(holder.startedAt)}`;
  out.push(alive === false
    ? { severity: 'note', check: 'lease', file: fc.rel(lock), message: `a writer lease left by a process that is gone (${who}); the next writer takes it over` }
    : { severity: 'note', check: 'lease', file: fc.rel(lock), message: `open for writing by ${who}` });
}

function processAlive(pid: number): boolean | undefined {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'ESRCH' ? false : undefined;
  }
}
