/**
 * session/list's filters in SQL on PostgreSQL (core/commit/listFilter.ts narrowingOf, applied by
 * sessions.ts listByUpdate): the same pages as the core's filter over every row — the same store
 * read through a backend that drops the narrowing — for every filter alone and combined, with
 * includeDeleted, over titles and messages with JSON escapes, non-ASCII (U+0130 and U+212A,
 * which toLowerCase makes i and k), tags set at create and by session/update, cwd and parents;
 * and the narrowed query reads fewer rows (counted), so a narrowing that silently does nothing
 * fails.
 */
import { describe, expect, it } from 'vitest';
import { Sessions } from '../../src/core/sessions/sessions.js';
import type { Backend } from '../../src/core/port.js';
import type { ListFilter, ListPage, SessionHeaderInput, SessionStore } from '../../src/domain/types.js';
import { scratchAt } from '../../src/scratch/localScratch.js';
import { freshSchema, pgAvailability } from '../pg/pgServer.js';
import { tempDir } from '../helpers.js';
import { sharedPgStores } from './pgStoreKit.js';

const pgSkip = pgAvailability();
const { store } = sharedPgStores();

/** The same backend; listByUpdate counting the rows it returns, and (plain) without the narrowing. */
function over(port: Backend, plain: boolean): { s: Sessions; rows: () => number } {
  let n = 0;
  const wrapped = new Proxy(port, {
    get(target, key, recv) {
      if (key === 'listByUpdate') {
        return async (o: Parameters<Backend['listByUpdate']>[0]) => {
          const { narrow, ...rest } = o;
          const out = await target.listByUpdate(plain ? rest : { ...rest, ...(narrow ? { narrow } : {}) });
          n += out.length;
          return out;
        };
      }
      const v = Reflect.get(target, key, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { s: new Sessions(wrapped, { scratch: scratchAt(tempDir()) }), rows: () => n };
}

async function allPages(s: SessionStore, f: ListFilter, limit: number): Promise<ListPage[]> {
  const out: ListPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await s.list({ ...f, limit, ...(cursor ? { cursor } : {}) });
    out.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < 100);
  return out;
}

const TITLES = ['Plain title', 'say "quoted"', 'back\\slash', 'İSTANBUL', 'the \u212Aelvin scale', 'kilo and india', 'café', '100% done', 'under_score', 'multi\nline'];

describe.skipIf(pgSkip !== null)('session/list filters in SQL on PostgreSQL', () => {
  it('the same pages as filtering every row, for every filter, and fewer rows read', { timeout: 120_000 }, async () => {
    const s = await store(freshSchema());
    const ids: string[] = [];
    let mid = '';
    for (let i = 0; i < 30; i++) {
      const parent = i > 3 && i % 4 === 0 ? { sessionId: ids[1]!, atSeq: 1 } : undefined;
      const h = { title: TITLES[i % TITLES.length]!, cwd: i % 3 === 0 ? '/w' : i % 3 === 1 ? '/w/sub' : '/wx', ...(i % 2 ? { tags: ['ci', `n${i % 5}`] } : {}), ...(parent ? { parent } : {}) } as SessionHeaderInput;
      const { sessionId } = await s.create(h);
      await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: i % 5 === 0 ? 'first İ message' : `hello ${TITLES[(i + 3) % TITLES.length]}` } }]);
      if (i % 7 === 0) await s.update(sessionId, { title: `renamed ${i} KELVIN`, tags: ['late', 'ci'] });
      await s.close(sessionId);
      if (i % 9 === 0) await s.delete(sessionId);
      ids.push(sessionId);
      if (i === 15) mid = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 2));
    }
    const port = (s as unknown as { port: Backend }).port;
    const narrowed = over(port, false);
    const plain = over(port, true);
    const filters: ListFilter[] = [
      {}, { cwd: '/w' }, { cwdPrefix: '/w' }, { cwdPrefix: '/w/' }, { tags: ['ci'] }, { tags: ['ci', 'n1'] }, { tags: ['late'] }, { parentId: ids[1]! },
      { updatedAfter: mid }, { updatedBefore: mid }, { query: 'title' }, { query: 'TITLE' }, { query: 'i' }, { query: 'k' }, { query: 'kelvin' }, { query: '"quoted"' },
      { query: 'back\\' }, { query: 'café' }, { query: '%' }, { query: '_' }, { query: 'late' }, { query: 'hello' }, { query: 'renamed' }, { query: 'İ' },
      { includeDeleted: true }, { includeDeleted: true, query: 'i' }, { cwdPrefix: '/w', tags: ['ci'], query: 'e', updatedAfter: mid },
    ];
    for (const f of filters) {
      for (const limit of [2, 100]) {
        expect(await allPages(narrowed.s, f, limit), `${JSON.stringify(f)} limit ${limit}`).toEqual(await allPages(plain.s, f, limit));
      }
    }
    // Narrow filters read only what may match.
    const before = [narrowed.rows(), plain.rows()];
    await narrowed.s.list({ tags: ['late'], limit: 100 });
    await plain.s.list({ tags: ['late'], limit: 100 });
    expect(narrowed.rows() - before[0]!).toBeLessThan(plain.rows() - before[1]!);
    expect(narrowed.rows() - before[0]!).toBe((await plain.s.list({ tags: ['late'], limit: 100 })).sessions.length);
  });
});
