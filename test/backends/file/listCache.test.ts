import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { journalOf, lines, message, store } from './storeHelpers.js';

/**
 * session/list's summary table (src/backends/file/listCache.ts): kept in memory by a store instance and
 * saved as index/list.cache at closeAll. Two store instances on one root stand for two
 * processes: what one writes must show in the other's next list, and no row is trusted once
 * its journal says otherwise.
 */
const cacheFile = (root: string) => path.join(root, 'index', 'list.cache');
const byId = (page: { sessions: SessionSummary[] }) => new Map(page.sessions.map((s) => [s.sessionId, s]));

/** Sessions last updated an hour ago (a page after a cursor that old skips the journals it does not return). */
async function seeded(root: string, n: number): Promise<string[]> {
  const w = store(root, { clock: () => Date.now() - 3_600_000 });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { sessionId } = await w.create({ title: `s${i}` });
    await w.append(sessionId, [message('user', `hello ${i}`)]);
    ids.push(sessionId);
  }
  await w.closeAll();
  return ids;
}

describe('the list cache', () => {
  it('a session created, appended to, deleted or restored by another store instance shows in the next list', async () => {
    const root = tempDir();
    const [a, b, c] = await seeded(root, 3);
    const lister = store(root);
    expect((await lister.list()).sessions).toHaveLength(3); // the table is warm from here on
    const other = store(root);
    const { sessionId: d } = await other.create({ title: 'new' });
    await other.open(a as string, 'write');
    await other.append(a as string, [message('assistant', 'appended elsewhere')]);
    await other.delete(b as string);
    let seen = byId(await lister.list());
    expect([...seen.keys()].sort()).toEqual([a, c, d].sort());
    expect(seen.get(a as string)).toMatchObject({ lastSeq: 2, lastMessage: 'assistant: appended elsewhere' });
    await other.restore(b as string);
    await other.closeAll(); // saves its own list.cache: the lister's table is not replaced by it
    seen = byId(await lister.list());
    expect([...seen.keys()].sort()).toEqual([a, b, c, d].sort());
    expect(seen.get(b as string)).toMatchObject({ lastSeq: 1, firstMessage: 'user: hello 1' });
    const purger = store(root);
    await purger.delete(c as string, true);
    await purger.closeAll();
    expect((await lister.list()).sessions.map((s) => s.sessionId).sort()).toEqual([a, b, d].sort());
    await lister.closeAll();
  });

  it('a page after a cursor checks every session it returns against its journal', async () => {
    const root = tempDir();
    const ids = await seeded(root, 3);
    const lister = store(root);
    const first = await lister.list({ limit: 1 }); // the table is checked against every journal here
    const victim = ids.find((id) => id !== first.sessions[0]?.sessionId) as string;
    // another program cuts the session's only record (same inode, shorter): it is on a later page still
    const journal = fs.readFileSync(journalOf(root, victim));
    fs.writeFileSync(journalOf(root, victim), Buffer.concat(lines(journal).slice(0, -1)));
    const size = fs.statSync(journalOf(root, victim)).size;
    let cursor = first.nextCursor;
    const returned: SessionSummary[] = [];
    while (cursor !== undefined) {
      const page = await lister.list({ limit: 1, cursor });
      returned.push(...page.sessions);
      cursor = page.nextCursor;
    }
    expect(returned.map((s) => s.sessionId).sort()).toEqual(ids.filter((id) => id !== first.sessions[0]?.sessionId).sort());
    expect(returned.find((s) => s.sessionId === victim)).toMatchObject({ lastSeq: 0, bytes: size });
    await lister.closeAll();
  });

  it('a fresh store lists from the saved file, and a saved row that disagrees with its journal is not trusted', async () => {
    const root = tempDir();
    const [a, b] = await seeded(root, 2);
    const warm = store(root);
    const truth = (await warm.list()).sessions;
    await warm.closeAll();
    const saved = fs.readFileSync(cacheFile(root), 'utf8');
    expect(saved.split('\n').filter((l) => l.startsWith(a as string) || l.startsWith(b as string))).toHaveLength(2);
    expect((await store(root).list()).sessions).toEqual(truth);

    const rowOf = (id: string) => saved.split('\n').find((l) => l.startsWith(`${id}\t`)) as string;
    const [, ino, bytes, ctime, updatedAt, json] = rowOf(a as string).split('\t') as string[];
    const lie = (fields: string[]) => saved.replace(rowOf(a as string), fields.join('\t'));
    const liar = JSON.stringify({ ...JSON.parse(json as string), lastSeq: 99 });
    const row = (over: { ino?: string; bytes?: string; ctime?: string; updatedAt?: string; json?: string }) =>
      lie([a as string, over.ino ?? (ino as string), over.bytes ?? (bytes as string), over.ctime ?? (ctime as string), over.updatedAt ?? (updatedAt as string), over.json ?? liar]);
    const variants = [
      row({ bytes: String(Number(bytes) + 1) }), // another length
      row({ ino: String(Number(ino) + 1) }), // another file
      row({ ctime: String(Number(ctime) - 1) }), // the same file and length, written since (damaged in place)
      row({ json: '{"damaged' }), // damaged text
      row({ json: JSON.stringify({ ...JSON.parse(json as string), sessionId: b }) }), // foreign
      row({ updatedAt: '2001-01-01T00:00:00.000Z', json: json as string }), // a key its text does not hold
      saved.replace('session-sidecar list cache v3', 'session-sidecar list cache v9'),
    ];
    expect(variants.at(-1)).not.toBe(saved);
    for (const v of variants) {
      fs.writeFileSync(cacheFile(root), v, { mode: 0o600 });
      expect((await store(root).list()).sessions, v.slice(0, 300)).toEqual(truth);
    }
    // a file that is not private is not read
    fs.writeFileSync(cacheFile(root), row({}));
    fs.chmodSync(cacheFile(root), 0o644);
    expect((await store(root).list()).sessions).toEqual(truth);
  });

  it('is rebuilt when removed, and a read-only store never writes it', async () => {
    const root = tempDir();
    await seeded(root, 2);
    fs.rmSync(cacheFile(root));
    const ro = store(root, { readOnly: true });
    const truth = (await ro.list()).sessions;
    await ro.closeAll();
    expect(fs.existsSync(cacheFile(root))).toBe(false);
    const s = store(root);
    expect((await s.list()).sessions).toEqual(truth);
    await s.closeAll();
    expect(fs.existsSync(cacheFile(root))).toBe(true);
    expect((await store(root).list()).sessions).toEqual(truth);
  });
});
