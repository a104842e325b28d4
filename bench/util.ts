/**
 * What the bench scenarios share: the row shape, timing, percentiles, realistic record
 * content, peak RSS of a sidecar child, and a sidecar started and stopped the way every
 * scenario does it (its VmHWM read just before shutdown).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SidecarClient } from '../dist/src/client/index.js';

export const benchDir = path.dirname(fileURLToPath(import.meta.url));

export interface Row {
  scenario: string;
  /** The measured number, in `unit`. */
  value: number;
  unit: 'appends/s' | 'inserts/s' | 'requests/s' | 'MB/s' | 'MiB' | 'ms' | 's' | 'count';
  /** value / the reference named by `ratioTo` (throughputs: higher is better; times: lower). */
  ratio?: number;
  ratioTo?: string;
  p50Us?: number;
  p99Us?: number;
  /** VmHWM of the sidecar process, read just before it was shut down. */
  peakRssMB?: number;
  /** Anything needed to read the number (sizes, record counts, per-size detail). */
  note?: string;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 0.5);
}

export const MB = 1 << 20;

const prose = 'The build failed because the linker could not find libssl; install it and re-run make. ';

/** Ordinary English text of about `bytes` characters (what a message or tool output holds). */
export function text(bytes: number): string {
  return prose.repeat(Math.ceil(bytes / prose.length)).slice(0, bytes);
}

/** A message record whose serialized journal line is about `bytes` long. */
export function messageRecord(bytes: number, role = 'assistant') {
  return { kind: 'message' as const, message: { role, content: text(Math.max(16, bytes - 120)) } };
}

/** Peak resident set (VmHWM) of a live process, in MB; undefined where /proc is not there. */
export function peakRssMB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export type Framing = 'ndjson' | 'lsp';

export async function startSidecar(store: string, framing: Framing = 'ndjson'): Promise<SidecarClient> {
  return SidecarClient.start({ store, framing });
}

/** CPU time (user + system, ms) a process has used so far, from /proc (10 ms resolution); undefined off Linux. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after "pid (comm) "
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

/** Reads the child's peak RSS, then shuts it down cleanly; returns the peak in MB. */
export async function stopSidecar(c: SidecarClient): Promise<number | undefined> {
  const rss = peakRssMB(c.child.pid);
  const { code } = await c.shutdown();
  if (code !== 0) throw new Error(`sidecar exited with code ${code}: ${c.stderr.slice(-2000)}`);
  return rss;
}

/** Bytes of a file or of every file under a directory. */
export function sizeOf(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, name) => n + sizeOf(path.join(p, name)), 0);
}
