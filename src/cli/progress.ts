import type { Work } from '../domain/work.js';

/**
 * The progress line of a long command, on stderr: "N of M <unit> (P%), R/s, ETA T", redrawn in
 * place (\r, the line erased) at most 10 times a second. Invariants:
 * - Drawn only when stderr is a terminal; anywhere else (a pipe, a file, a cron job) nothing is
 *   drawn, and only the final summary line is written. stdout is never touched.
 * - Before any line of the command's own output (`above`), the drawn line is erased, so the
 *   output never mixes with it; it is drawn again at the next step.
 * - The rate and ETA are over the current phase (items done since it began, by wall time).
 */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Whether to draw (default: the stream is a terminal). */
  tty?: boolean;
  now?: () => number;
  /** Least time between two draws (ms; default 100: at most 10 a second). */
  intervalMs?: number;
}

export class ProgressLine {
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly interval: number;
  private readonly started: number;
  label = '';
  unit = 'sessions';
  private phaseStart = 0;
  private drawnAt = -Infinity;
  private drawn = false;
  total = 0;
  done = 0;

  constructor(readonly command: string, o: ProgressOptions = {}) {
    this.stream = o.stream ?? process.stderr;
    this.tty = o.tty ?? this.stream.isTTY === true;
    this.now = o.now ?? Date.now;
    this.interval = o.intervalMs ?? 100;
    this.started = this.now();
  }

  /** A phase begins ("rewriting", 3000, "sessions"): drawn at once. */
  phase(label: string, total: number, unit = 'sessions'): void {
    this.label = label;
    this.unit = unit;
    this.total = total;
    this.done = 0;
    this.phaseStart = this.now();
    this.draw(true);
  }

  step(n = 1): void {
    this.done += n;
    this.draw(false);
  }

  /** The hooks to hand to the work (src/domain/work.ts); `shouldStop` is the caller's (a latch's). */
  work(shouldStop?: () => Promise<boolean>): Work {
    return {
      phase: (label, total, unit) => this.phase(label, total, unit),
      step: (n) => this.step(n),
      ...(shouldStop ? { shouldStop } : {}),
    };
  }

  /** Runs `print` (a line of the command's output) with the progress line erased first. */
  above(print: () => void): void {
    this.clear();
    print();
  }

  /** Erases the drawn line (nothing when none is drawn). */
  clear(): void {
    if (!this.drawn) return;
    this.write('\r\u001b[2K');
    this.drawn = false;
    this.drawnAt = -Infinity;
  }

  /** Seconds since the command began, for its summary: "4.2s", "3m 12s". */
  elapsed(): string {
    return duration((this.now() - this.started) / 1000);
  }

  /** The summary line, on any stderr: `session-sidecar <command>: <text> (<elapsed>)[; <then>]`. */
  finish(text: string, then?: string): void {
    this.clear();
    this.write(`session-sidecar ${this.command}: ${text} (${this.elapsed()})${then ? `; ${then}` : ''}\n`);
  }

  /** The line as drawn now (also for tests of the format). */
  line(): string {
    const pct = this.total > 0 ? ` (${Math.floor((100 * Math.min(this.done, this.total)) / this.total)}%)` : '';
    const secs = (this.now() - this.phaseStart) / 1000;
    const rate = secs > 0 && this.done > 0 ? this.done / secs : 0;
    const left = Math.max(0, this.total - this.done);
    const eta = rate > 0 ? duration(left / rate) : '--';
    const rateText = rate > 0 ? `${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s` : '-/s';
    if (this.total === 0) return `${this.command}: ${this.label} ${this.done} ${this.unit}, ${rateText}`; // a total not known yet
    return `${this.command}: ${this.label} ${this.done} of ${this.total} ${this.unit}${pct}, ${rateText}, ETA ${eta}`;
  }

  private draw(force: boolean): void {
    if (!this.tty) return;
    const t = this.now();
    if (!force && t - this.drawnAt < this.interval && (this.done < this.total || this.total === 0)) return;
    this.drawnAt = t;
    const columns = this.stream.columns || 80;
    const text = this.line();
    this.write(`\r\u001b[2K${text.length >= columns ? `${text.slice(0, columns - 2)}…` : text}`);
    this.drawn = true;
  }

  private write(text: string): void {
    try {
      this.stream.write(text);
    } catch {
      // stderr is gone: nothing left to tell
    }
  }
}

/** 42s, 3m 12s, 2h 5m. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--';
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
