import tty from 'node:tty';
import stringWidth from 'string-width';
import { printOut } from '../cliOutput.js';

/**
 * Output of the inspection commands. stdout goes through printOut (synchronous writes, so
 * nothing is lost at exit); when the reader went away (`session-sidecar show X | head`) the
 * process ends quietly with code 0 instead of a stack trace.
 */
export function out(text: string): void {
  if (text === '') return;
  const fd = route ? route.fd() : 1;
  for (;;) {
    try {
      printOut(text, fd);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EPIPE') process.exit(0);
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // a non-blocking pipe is full: wait, then retry
        continue;
      }
      throw err;
    }
  }
}

/** Where out() writes instead of stdout (a pager, pager.ts): its descriptor, opened at the first write, and how to end it. */
export interface OutRoute {
  fd(): number;
  end(): Promise<void>;
}

let route: OutRoute | undefined;

export function routeOut(r: OutRoute): void {
  route = r;
}

/** Ends the route of out() (the pager: EOF, then waits for it to exit); never throws. Stdout needs nothing. */
export async function endOut(): Promise<void> {
  const r = route;
  route = undefined;
  try {
    await r?.end();
  } catch {
    // the pager is gone: nothing to wait for
  }
}

/** A one-line message on stderr. */
export function err(text: string): void {
  try {
    process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  } catch {
    // stderr is gone: nothing left to tell
  }
}

export interface Style {
  readonly enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  magenta(s: string): string;
  cyan(s: string): string;
}

/** ANSI colors only when stdout is a terminal and NO_COLOR is not set (https://no-color.org). */
export function stdoutStyle(env: NodeJS.ProcessEnv = process.env): Style {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return makeStyle(!noColor && tty.isatty(1));
}

export function makeStyle(enabled: boolean): Style {
  const sgr = (open: number, close: number) => (s: string) => (enabled && s !== '' ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return {
    enabled,
    bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39),
    blue: sgr(34, 39), magenta: sgr(35, 39), cyan: sgr(36, 39),
  };
}

/**
 * Text from a record made safe for a terminal: control characters (an escape sequence in a
 * tool's output could rewrite the screen) become visible symbols; newlines and tabs stay.
 */
export function safeText(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return '\ufffd';
  });
}

/** At most `max` characters (by code point) on one line, with an ellipsis when cut. */
export function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat.length > max * 2 ? flat.slice(0, max * 2) : flat);
  return chars.length <= max ? chars.join('') : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/**
 * A stored instant (ISO 8601, UTC) as the reader's local time: "2026-11-29 18:24:41", with
 * `zone` its offset too ("2026-11-29 18:24:41 +09:00"). The stored text is never changed
 * (--json, --raw and jsonl print it as it is); an unparseable one is shown as it is.
 */
export function localTime(iso: string, zone = false): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  const text = `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
  return zone ? `${text} ${offsetOf(t)}` : text;
}

/** The local zone's offset at `t`: "+09:00", "-05:00", "+00:00". */
export function offsetOf(t: Date): string {
  const minutes = -t.getTimezoneOffset();
  const a = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** "3m ago", "2h ago", "5d ago"; older than 60 days (or in the future): the (local) date. */
export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '?';
  const s = Math.floor((now - t) / 1000);
  if (s < -60) return localTime(iso).slice(0, 10);
  if (s < 10) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 60 * 86_400) return `${Math.floor(s / 86_400)}d ago`;
  return localTime(iso).slice(0, 10);
}

/** 512 B, 1.5 KiB, 12 MiB, 3.2 GiB. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** Columns padded to their widest cell (by code point); `right` columns are right-aligned. */
/** Terminal columns a text takes: East Asian wide characters and emoji count two (string-width). */
export const columnsOf = (s: string): number => stringWidth(s);

/** Cuts column `col` of every row (with …) so the table fits `columns` terminal columns, if it can. */
export function fitColumn(rows: string[][], col: number, columns: number): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, columnsOf(cell))));
  const others = widths.reduce((a, w, i) => (i === col ? a : a + w), 0) + 2 * (widths.length - 1);
  const room = Math.max(8, columns - others);
  for (const row of rows) if (row[col] !== undefined && columnsOf(row[col]) > room) row[col] = cutTo(row[col], room);
}

function cutTo(text: string, room: number): string {
  let outText = '';
  for (const ch of new Intl.Segmenter().segment(text)) {
    if (columnsOf(outText + ch.segment) > room - 1) break;
    outText += ch.segment;
  }
  return `${outText}…`;
}

export function table(rows: string[][], right: ReadonlySet<number> = new Set(), style?: (row: number, col: number, cell: string) => string): string {
  const width = columnsOf;
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, width(cell))));
  return rows.map((row, r) => row.map((cell, c) => {
    const pad = ' '.repeat((widths[c] ?? 0) - width(cell));
    const shown = style ? style(r, c, cell) : cell;
    if (c === row.length - 1 && !right.has(c)) return shown;
    return right.has(c) ? pad + shown : shown + pad;
  }).join('  ').trimEnd()).join('\n') + '\n';
}
