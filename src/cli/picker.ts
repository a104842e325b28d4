import readline from 'node:readline';
import type { SessionSummary } from '../domain/types.js';
import { columnsOf, oneLine, relativeTime, safeText } from './output.js';

/**
 * The interactive session picker of `pick`: drawn on stderr (stdout stays free for the chosen
 * id, so `$(session-sidecar pick)` works), keys read from stdin in raw mode (node:readline's
 * keypress events). Typing filters (case-insensitive substring of the title, the first and last
 * message and the cwd); Up/Down and Ctrl-P/Ctrl-N move; Backspace edits; Enter chooses; Esc and
 * Ctrl-C cancel. The terminal is restored (raw mode off, the drawing erased) on every way out.
 */
export type Picked = { sessionId: string } | 'cancelled';

/** The sessions whose title, first/last message or cwd holds `query` (case-insensitive), in the given order. */
export function matching(sessions: SessionSummary[], query: string): SessionSummary[] {
  const q = query.toLowerCase();
  if (q === '') return sessions;
  return sessions.filter((s) => [s.title, s.firstMessage, s.lastMessage, s.cwd].some((t) => t !== undefined && t.toLowerCase().includes(q)));
}

const PROMPT = 'pick a session (type to filter, Up/Down move, Enter choose, Esc quit)';

/** One row: title (or the first message), last update, cwd; cut to `columns`. */
function row(s: SessionSummary, now: number, columns: number): string {
  const title = s.title ? oneLine(safeText(s.title), 50) : s.firstMessage ? oneLine(safeText(s.firstMessage), 50) : s.sessionId;
  const line = `${title.padEnd(Math.max(0, 50 - Math.max(0, columnsOf(title) - title.length)))}  ${relativeTime(s.updatedAt, now).padEnd(10)}  ${s.cwd ? safeText(s.cwd) : '-'}`;
  let cut = '';
  for (const ch of new Intl.Segmenter().segment(line)) {
    if (columnsOf(cut + ch.segment) > columns) break;
    cut += ch.segment;
  }
  return cut;
}

export function pickSession(sessions: SessionSummary[], input: NodeJS.ReadStream, screen: NodeJS.WriteStream): Promise<Picked> {
  return new Promise((resolve) => {
    let query = '';
    let selected = 0;
    let drawn = 0; // lines drawn below the prompt line, to erase before the next drawing
    const now = Date.now();
    const draw = () => {
      const shown = matching(sessions, query);
      selected = Math.min(selected, Math.max(0, shown.length - 1));
      const columns = Math.max(20, (screen.columns || 80) - 1);
      const height = Math.max(3, Math.min(15, (screen.rows || 24) - 2));
      const start = Math.max(0, Math.min(selected - height + 1, shown.length - height));
      const lines = shown.slice(start, start + height).map((s, i) => `${start + i === selected ? '> ' : '  '}${row(s, now, columns - 2)}`);
      if (shown.length === 0) lines.push('  (no session matches)');
      else lines.push(`  ${shown.length} of ${sessions.length}`);
      const up = drawn > 0 ? `\u001b[${drawn}A` : '';
      screen.write(`${up}\r\u001b[J${PROMPT}\n${lines.join('\n')}\n> ${query}`);
      drawn = lines.length + 1;
    };
    const finish = (result: Picked) => {
      input.removeListener('keypress', onKey);
      if (input.isTTY) input.setRawMode(false);
      input.pause();
      screen.write(`\u001b[${drawn}A\r\u001b[J`); // erase the picker
      resolve(result);
    };
    const onKey = (str: string | undefined, key: { name?: string; ctrl?: boolean; meta?: boolean } = {}) => {
      const shown = matching(sessions, query);
      if ((key.ctrl && key.name === 'c') || key.name === 'escape') return finish('cancelled');
      if (key.name === 'return' || key.name === 'enter') {
        const chosen = shown[selected];
        return chosen ? finish({ sessionId: chosen.sessionId }) : undefined;
      }
      if (key.name === 'up' || (key.ctrl && key.name === 'p')) selected = Math.max(0, selected - 1);
      else if (key.name === 'down' || (key.ctrl && key.name === 'n')) selected = Math.min(shown.length - 1, selected + 1);
      else if (key.name === 'backspace') query = Array.from(query).slice(0, -1).join('');
      else if (key.ctrl && key.name === 'u') query = '';
      else if (str !== undefined && !key.ctrl && !key.meta && /^[^\u0000-\u001f\u007f]+$/u.test(str)) {
        query += str;
        selected = 0;
      } else return;
      draw();
    };
    readline.emitKeypressEvents(input);
    if (input.isTTY) input.setRawMode(true);
    input.on('keypress', onKey);
    input.resume();
    draw();
  });
}
