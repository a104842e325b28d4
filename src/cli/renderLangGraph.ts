import type { StoredRecord } from '../domain/types.js';
import { type LangGraphView, type MessageLedger, stepText } from './langgraphView.js';
import { safeText } from './output.js';
import type { TranscriptRenderer } from './render.js';

/**
 * A LangGraph record in the transcript of `show` and `tail`: one line for the checkpoint (step,
 * source, id, parent) or the task's writes (the node, the checkpoint they are for), then the
 * messages no earlier record showed, as chat, and the other channels' values in short JSON.
 */

const short = (id: string) => (id.length > 13 ? `${id.slice(0, 13)}…` : id);

export function langGraphBlock(r: TranscriptRenderer, rec: StoredRecord, v: LangGraphView, ledger: MessageLedger): string {
  const s = r.style;
  const where = `${v.ns !== '' ? ` ns ${safeText(v.ns)}` : ''}`;
  let out = v.kind === 'checkpoint'
    ? r.head(rec, s.magenta('graph checkpoint'), `${safeText(stepText(v))}  ${s.dim(`${safeText(v.checkpointId)}${v.parentId ? ` ← ${safeText(short(v.parentId))}` : ''} · thread ${safeText(v.threadId)}${where}`)}`)
    : r.head(rec, s.blue('graph task'), `${safeText(v.node ?? '?')}  ${s.dim(`writes for ${safeText(short(v.checkpointId))} · thread ${safeText(v.threadId)}${where}`)}`);
  let unchanged = 0;
  for (const c of v.values) {
    if (c.messages) {
      const fresh = ledger.fresh(c.messages, v.kind === 'writes');
      unchanged += c.messages.length - fresh.length;
      for (const m of fresh) out += r.nestedMessage(m);
    } else {
      out += `    ${s.dim(`${safeText(c.channel)} =`)} ${r.payload(c.value)}\n`;
    }
  }
  if (unchanged > 0) out += `    ${s.dim(`(${unchanged} earlier message${unchanged === 1 ? '' : 's'})`)}\n`;
  return out;
}
