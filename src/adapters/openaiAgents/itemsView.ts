/**
 * The items view of an Agents SDK session stored in a sidecar session, computed from its
 * records exactly as the server computes `session/context` (protocol/README.md §5.8, §19.2) and
 * exactly as clients/python's SidecarSession does (the two share one store):
 *
 * - each item is one record `{kind: "event", type: "agents.item", payload: <the item>}`;
 * - the view as of a position P is, when the last `rewind` record R at or before P exists, the
 *   view as of `R.toSeq` plus the items after R up to P; else every item up to P;
 * - a `checkpoint` (compaction) ends the walk: what it summarized is not an item any more.
 *
 * `latestItems` walks back from `lastSeq` in growing windows, following rewinds, and stops once
 * it has `limit` items: it reads a tail of the journal, never the whole session when a limit is
 * given. No fs, no JSON-RPC: the caller supplies the range reader.
 */

/** The `type` of the `event` records that hold Agents SDK items (shared with clients/python). */
export const ITEM_TYPE = 'agents.item';

/** The record kinds the items view is computed from (others are filtered out by the server). */
export const VIEW_KINDS = ['event', 'rewind', 'checkpoint'] as const;

/** What the walk needs of a stored record. */
export interface ViewRecord {
  seq: number;
  kind: string;
  type?: unknown;
  payload?: unknown;
  toSeq?: unknown;
}

/** The view-relevant records with `lo < seq <= hi`, oldest first. */
export type RangeReader = (lo: number, hi: number) => Promise<ViewRecord[]>;

export interface ViewItem {
  seq: number;
  item: unknown;
}

/** First window size: with a limit, twice the limit (at least 16); without, 64. Doubles after each read. */
function firstWindow(limit: number | undefined): number {
  return limit === undefined ? 64 : Math.max(2 * limit, 16);
}

/** The index of the last record with `seq <= pos` (records sorted by seq), or -1. */
function lastAtOrBefore(records: ViewRecord[], pos: number): number {
  let lo = 0;
  let hi = records.length; // invariant: records[< lo].seq <= pos < records[>= hi].seq
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((records[mid] as ViewRecord).seq <= pos) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The latest `limit` items of the view as of `lastSeq` (all of them when `limit` is undefined),
 * oldest first, each with the seq of its record.
 */
export async function latestItems(read: RangeReader, lastSeq: number, limit?: number): Promise<ViewItem[]> {
  const found: ViewItem[] = []; // newest first
  const full = () => limit !== undefined && found.length >= limit;
  let window = firstWindow(limit);
  let pos = lastSeq;
  let chunk: ViewRecord[] = [];
  let chunkLo = -1;
  let chunkHi = -1;
  while (pos > 0 && !full()) {
    if (!(chunkLo < pos && pos <= chunkHi)) {
      chunkLo = Math.max(0, pos - window);
      chunkHi = pos;
      chunk = await read(chunkLo, chunkHi);
      window *= 2;
    }
    let next = chunkLo; // nothing above chunkLo is left to examine: go on below it
    for (let i = lastAtOrBefore(chunk, pos); i >= 0; i--) {
      const r = chunk[i] as ViewRecord;
      if (r.kind === 'rewind') {
        next = Number(r.toSeq); // the view as of toSeq, before this rewind
        break;
      }
      if (r.kind === 'checkpoint') {
        next = 0; // what a checkpoint summarized holds no items
        break;
      }
      if (r.kind === 'event' && r.type === ITEM_TYPE) {
        found.push({ seq: r.seq, item: r.payload });
        if (full()) break;
      }
    }
    pos = next;
  }
  return found.reverse();
}
