import type { StoredRecord, SessionStore } from '../domain/types.js';

const PAGE = 1000;

/** The records of a session's active journal (or of an archived generation) after `afterSeq`, page by page. */
export async function* recordsOf(store: SessionStore, id: string, opts: { afterSeq?: number; generation?: number } = {}): AsyncGenerator<StoredRecord> {
  let afterSeq = opts.afterSeq ?? 0;
  for (;;) {
    const page = await store.read(id, { afterSeq, limit: PAGE, ...(opts.generation !== undefined ? { generation: opts.generation } : {}) });
    yield* page.records;
    if (page.nextAfterSeq === null || page.nextAfterSeq <= afterSeq) return;
    afterSeq = page.nextAfterSeq;
  }
}

/**
 * A session's whole history: the records of each archived generation, then the active
 * journal's, each seq once, in order. A checkpoint whose records were delivered from an
 * archive is `superseded` (it marks where a compaction happened); one whose archive is gone
 * stands for the records it summarized.
 */
export async function* fullHistory(store: SessionStore, id: string): AsyncGenerator<{ record: StoredRecord; superseded: boolean }> {
  let cursor = 0;
  const generations = await store.history(id);
  const sources = [...generations.map((g) => g.generation), undefined];
  for (const generation of sources) {
    for await (const record of recordsOf(store, id, generation === undefined ? {} : { generation })) {
      if (record.seq > cursor) {
        cursor = record.seq;
        yield { record, superseded: false };
      } else if (record.kind === 'checkpoint') {
        yield { record, superseded: true };
      }
    }
  }
}
