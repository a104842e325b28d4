/**
 * Secrets split across records. A streaming agent writes a message as many small deltas and a
 * tool's output as many chunks: a registered secret can stand in no single record and still be
 * on disk, half in one and half in the next. The carry-over keeps, per session and in memory
 * only, the checked end of each stream (SecretSet.tailOf: the longest registered form less one
 * character, padding aside) and scans it together with the head of the next piece, so that the
 * piece completing a secret is refused (its whole request, with SecretRejected) and nothing
 * acknowledged before it changes.
 *
 * The streams (protocol/README.md §10 lists what they catch and what they cannot):
 * - `message`: the text of the session's message records in seq order — a string `content`,
 *   the `text` of each text part in order (a part of another type ends the text before it), an
 *   interruption's `assistantText` — across the records of one batch and across appends.
 * - one per tool run and stream (`toolSeq`, `stdout`/`stderr`): the bytes of its `toolStream`
 *   chunks, `text` as UTF-8 and `dataBase64` decoded, in order; forgotten at its `toolFinish`.
 * A piece kept as a blob reference the client uploaded ends its stream's text (the blob's own
 * bytes were checked when it was uploaded). The state is the plan state's (commit order), so it
 * advances only with requests that commit; it starts empty when a session is opened, and again
 * after any secret is registered.
 */
import type { SecretSet } from './knownSecrets.js';

export interface CarryOver {
  /**
   * The secret set's generation the ends were checked under. A registration since then drops
   * them: text acknowledged before a secret was registered may hold it whole, and is not
   * refused again (a secret split across a registration is not caught).
   */
  readonly generation: number;
  /** The checked end of the session's message text. */
  readonly message: string;
  /** `${toolSeq}:${stream}` → the checked end of that tool stream's bytes (most recently written last). */
  readonly streams: ReadonlyMap<string, Buffer>;
}

export const NO_CARRY: CarryOver = Object.freeze({ generation: -1, message: '', streams: new Map<string, Buffer>() });

/** Tool streams followed at once at most (the least recently written is forgotten first). */
const MAX_STREAMS = 64;

type Piece =
  | { channel: 'message'; text: string; path: string }
  | { channel: string; bytes: Buffer; path: string }
  | { channel: string; ends: true };

export interface SplitRefusal {
  index: number;
  path: string;
  rule: string;
}

/**
 * The carry-over after `values` (records as they will be stored, before blob extraction), or
 * where a registered secret completes across a boundary. Pure: `before` is not changed.
 */
export function carryAcross(secrets: SecretSet, before: CarryOver | undefined, values: readonly unknown[]): { carry: CarryOver } | { refused: SplitRefusal } {
  const start = before !== undefined && before.generation === secrets.generation ? before : { ...NO_CARRY, generation: secrets.generation };
  if (secrets.size === 0) return { carry: start };
  let message = start.message;
  const streams = new Map(start.streams);
  for (let index = 0; index < values.length; index++) {
    for (const piece of piecesOf(values[index], index)) {
      if ('ends' in piece) {
        if (piece.channel === 'message') message = '';
        else streams.delete(piece.channel);
        continue;
      }
      if ('text' in piece) {
        const r = secrets.carry(message, piece.text);
        if ('rule' in r) return { refused: { index, path: piece.path, rule: r.rule } };
        message = r.tail;
        continue;
      }
      const r = secrets.carryBytes(streams.get(piece.channel) ?? Buffer.alloc(0), piece.bytes);
      if ('rule' in r) return { refused: { index, path: piece.path, rule: r.rule } };
      streams.delete(piece.channel); // re-inserted last: the map's order is the order of writes
      streams.set(piece.channel, r.tail);
      if (streams.size > MAX_STREAMS) streams.delete(streams.keys().next().value as string);
    }
  }
  return { carry: { generation: start.generation, message, streams } };
}

/** What one record adds to the streams, in order. */
function piecesOf(value: unknown, index: number): Piece[] {
  if (value === null || typeof value !== 'object') return [];
  const r = value as Record<string, unknown>;
  const at = `records[${index}]`;
  switch (r.kind) {
    case 'message': {
      const content = (r.message as Record<string, unknown> | undefined)?.content;
      if (content === undefined || content === null) return [];
      if (typeof content === 'string') return [{ channel: 'message', text: content, path: `${at}.message.content` }];
      if (!Array.isArray(content)) return [{ channel: 'message', ends: true }];
      return content.map((part: unknown, i): Piece => {
        const p = part as Record<string, unknown> | null;
        return p !== null && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string'
          ? { channel: 'message', text: p.text, path: `${at}.message.content[${i}].text` }
          : { channel: 'message', ends: true };
      });
    }
    case 'interruption':
      if (typeof r.assistantText === 'string') return [{ channel: 'message', text: r.assistantText, path: `${at}.assistantText` }];
      return r.assistantText === undefined ? [] : [{ channel: 'message', ends: true }];
    case 'toolStream': {
      const channel = `${String(r.toolSeq)}:${String(r.stream)}`;
      if (typeof r.text === 'string') return [{ channel, bytes: Buffer.from(r.text, 'utf8'), path: `${at}.text` }];
      if (typeof r.dataBase64 === 'string') return [{ channel, bytes: Buffer.from(r.dataBase64, 'base64'), path: `${at}.dataBase64<bytes>` }];
      return [{ channel, ends: true }];
    }
    case 'toolFinish':
      return [`${String(r.toolSeq)}:stdout`, `${String(r.toolSeq)}:stderr`].map((channel) => ({ channel, ends: true }));
    default:
      return [];
  }
}
