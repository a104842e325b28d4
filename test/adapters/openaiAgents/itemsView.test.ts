import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ITEM_TYPE, latestItems, VIEW_KINDS, type ViewRecord } from '../../../src/adapters/openaiAgents/itemsView.js';

/**
 * The tail walk of the items view (pure) against a reference that replays the journal forward:
 * an item appends, a rewind makes the view what it was as of its toSeq, a checkpoint (only the
 * first record of an active journal) starts an empty view, anything else changes nothing.
 */

type Step = { kind: 'item' } | { kind: 'other' } | { kind: 'otherEvent' } | { kind: 'rewind'; back: number };

function journal(steps: Step[], checkpointAt: number | undefined): { records: Array<ViewRecord & { kind: string }>; views: unknown[][] } {
  const records: Array<ViewRecord & { kind: string }> = [];
  const views: unknown[][] = [[]];
  let seq = 0;
  if (checkpointAt !== undefined) {
    seq = checkpointAt;
    for (let i = 0; i <= seq; i++) views[i] = [];
    records.push({ seq, kind: 'checkpoint' });
  }
  const first = seq;
  for (const step of steps) {
    seq++;
    const prev = views[seq - 1]!;
    if (step.kind === 'item') {
      records.push({ seq, kind: 'event', type: ITEM_TYPE, payload: { n: seq } });
      views[seq] = [...prev, { n: seq }];
    } else if (step.kind === 'rewind') {
      const toSeq = Math.max(first, seq - 1 - step.back); // a rewind reaches 0 or the checkpoint, up to lastSeq
      records.push({ seq, kind: 'rewind', toSeq });
      views[seq] = views[toSeq]!;
    } else {
      records.push(step.kind === 'other' ? { seq, kind: 'message' } : { seq, kind: 'event', type: 'tool.started', payload: null });
      views[seq] = prev;
    }
  }
  return { records, views };
}

const step = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Step>({ kind: 'item' }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'other' }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'otherEvent' }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 40 }).map<Step>((back) => ({ kind: 'rewind', back })) },
);

describe('latestItems', () => {
  it('equals the forward replay for any journal, limit and checkpoint', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(step, { maxLength: 150 }),
      fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
      fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
      async (steps, checkpointAt, limit) => {
        const { records, views } = journal(steps, checkpointAt);
        const lastSeq = records.length ? records[records.length - 1]!.seq : 0;
        const asked: Array<[number, number]> = [];
        // What the server returns for the view kinds: records with lo < seq <= hi.
        const read = async (lo: number, hi: number) => {
          asked.push([lo, hi]);
          return records.filter((r) => r.seq > lo && r.seq <= hi && (VIEW_KINDS as readonly string[]).includes(r.kind));
        };
        const got = await latestItems(read, lastSeq, limit);
        const want = views[lastSeq]!;
        expect(got.map((g) => g.item)).toEqual(limit === undefined ? want : want.slice(Math.max(0, want.length - limit)));
        for (const g of got) expect(g.seq).toBe((g.item as { n: number }).n);
        // Nothing below a checkpoint is asked for: it ends the walk.
        if (checkpointAt !== undefined) for (const [, hi] of asked) expect(hi).toBeGreaterThanOrEqual(checkpointAt);
        // No range is read twice.
        const seen = new Set<number>();
        for (const [lo, hi] of asked) for (let s = lo + 1; s <= hi; s++) {
          expect(seen.has(s)).toBe(false);
          seen.add(s);
        }
      },
    ), { numRuns: 400, seed: 19 });
  });

  it('with a limit, reads a window of twice the limit (at least 16) first and stops when it has enough', async () => {
    const records: ViewRecord[] = Array.from({ length: 1000 }, (_, i) => ({ seq: i + 1, kind: 'event', type: ITEM_TYPE, payload: i + 1 }));
    const asked: Array<[number, number]> = [];
    const read = async (lo: number, hi: number) => (asked.push([lo, hi]), records.filter((r) => r.seq > lo && r.seq <= hi));
    expect((await latestItems(read, 1000, 3)).map((v) => v.item)).toEqual([998, 999, 1000]);
    expect(asked).toEqual([[984, 1000]]);
    asked.length = 0;
    expect(await latestItems(read, 1000, 20)).toHaveLength(20);
    expect(asked).toEqual([[960, 1000]]);
    asked.length = 0;
    expect(await latestItems(read, 1000)).toHaveLength(1000);
    expect(asked.length).toBeLessThanOrEqual(5); // windows of 64, 128, 256, 512, ... down to 0
    expect(await latestItems(read, 0, 5)).toEqual([]);
  });
});
