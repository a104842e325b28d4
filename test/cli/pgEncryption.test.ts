/**
 * The command line on an encrypted PostgreSQL store, over the built binary: migrate an
 * encrypted directory store into an encrypted PostgreSQL schema (another key) and back; the
 * inspection commands read it with the key and refuse it without, or with another one; rekey
 * changes its key. No key is ever printed; no marker text is in the schema.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { StoreKey } from '../../src/durable/storeKey.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { tempDir } from '../helpers.js';
import { explain, msg, runCli, startCli, toolCall } from './helpers.js';
import fs from 'node:fs';
import pgLib from 'pg';
import { backend, header, recs, snap } from '../backends/postgres/pgTestKit.js';
import { newId } from '../backends/postgres/pgTestKit.js';
import { dumpSchema } from './pgCliKit.js';

const KEY = randomBytes(32).toString('base64');
const PGKEY = randomBytes(32).toString('base64');
const NEXT = randomBytes(32).toString('base64');
const env = { ...process.env, K: KEY, P: PGKEY, N: NEXT };
const MARK = 'JVQZ-cli-marker';
const keyOf = (b64: string) => new StoreKey(Buffer.from(b64, 'base64'));

function noKeyIn(r: { stdout: string; stderr: string }): void {
  for (const k of [KEY, PGKEY, NEXT]) {
    expect(r.stdout).not.toContain(k);
    expect(r.stderr).not.toContain(k);
  }
}

/** What a reader sees of every session of a store. */
async function observe(s: FileSessionStore): Promise<unknown[]> {
  const out: unknown[] = [];
  const ids = (await s.list({ includeTrashed: true } as never)).sessions.map((x) => x.sessionId).sort();
  for (const id of ids) {
    out.push({ id, records: (await s.read(id, { inline: true })).records, hist: (await s.history(id)).length, state: await s.getState(id, 'plan').catch(() => null) });
  }
  return out;
}

describe.skipIf(pgSkip !== null)(`the command line on an encrypted PostgreSQL store${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('migrate encrypted file -> encrypted PostgreSQL -> encrypted file; list/show/verify with the key; refusals; rekey', async () => {
    const url = await pgUrl();
    const schema = freshSchema('pgenc');
    const root = path.join(tempDir('sidecar-pgenc-'), 'store');
    const src = new FileSessionStore(root, { leases: false, encryptionKey: keyOf(KEY) });
    const { sessionId: id } = await src.create({ title: `Sealed ${MARK}`, blobThreshold: 1024 });
    await src.append(id, [msg('user', `question ${MARK}`), msg('assistant', `answer ${MARK}`), toolCall(`${MARK} `.repeat(100))]); // the last a blob: a BlobRef position
    await src.setState(id, 'plan', { step: MARK });
    await src.compact(id, { summary: `summary ${MARK}`, throughSeq: 2 });
    const before = await observe(src);
    await src.closeAll();

    // Without the source's key: refused, nothing copied.
    const noKey = await runCli(['migrate', '--yes', '--from', root, '--to', url, '--pg-schema', schema, '--to-key-env', 'P'], { env });
    expect(noKey.code, explain(noKey)).toBe(1);
    expect(noKey.stderr).toMatch(/encrypted: give its key/);

    const there = await runCli(['migrate', '--yes', '--from', root, '--from-key-env', 'K', '--to', url, '--pg-schema', schema, '--to-key-env', 'P'], { env });
    expect(there.code, explain(there)).toBe(0);
    expect(there.stdout).toContain('1 session copied');
    noKeyIn(there);
    const dump = await dumpSchema(url, schema);
    expect(dump).toContain('ss-sealed:');
    expect(dump).not.toContain('JVQZ');

    const listed = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'P'], { env });
    expect(listed.code, explain(listed)).toBe(0);
    expect(listed.stdout).toContain(`Sealed ${MARK}`);
    const shown = await runCli(['show', id, '--store', url, '--pg-schema', schema, '--encryption-key-env', 'P'], { env });
    expect(shown.code, explain(shown)).toBe(0);
    expect(shown.stdout).toContain(`summary ${MARK}`);
    const verified = await runCli(['verify', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'P'], { env });
    expect(verified.code, explain(verified)).toBe(0);
    for (const [args, what] of [[[], /encrypted: give its key/], [['--encryption-key-env', 'K'], /not the store's key/]] as const) {
      const r = await runCli(['list', '--store', url, '--pg-schema', schema, ...args], { env });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toMatch(what);
      noKeyIn(r);
    }

    // Back into a new directory store under a third key.
    const back = path.join(tempDir('sidecar-pgenc-'), 'store');
    const home = await runCli(['migrate', '--yes', '--from', url, '--pg-schema', schema, '--from-key-env', 'P', '--to', back, '--to-key-env', 'N'], { env });
    expect(home.code, explain(home)).toBe(0);
    const dst = new FileSessionStore(back, { leases: false, encryptionKey: keyOf(NEXT) });
    expect(await observe(dst)).toEqual(before);
    await dst.closeAll();
    expect(() => new FileSessionStore(back, { leases: false })).toThrow(/encrypted: give its key/);

    // rekey of the PostgreSQL store: P -> N; then only N opens it.
    const rk = await runCli(['rekey', '--yes', '--store', url, '--pg-schema', schema, '--from-env', 'P', '--to-env', 'N'], { env });
    expect(rk.code, explain(rk)).toBe(0);
    expect(rk.stdout).toMatch(/^rekeyed .*: 1 session\(s\), \d+ value\(s\) rewritten, 0 already done/m);
    noKeyIn(rk);
    const again = await runCli(['rekey', '--yes', '--store', url, '--pg-schema', schema, '--from-env', 'P', '--to-env', 'N'], { env });
    expect(again.stdout).toContain('already under the new key');
    const old = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'P'], { env });
    expect(old.stderr).toMatch(/not the store's key/);
    const now = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'N'], { env });
    expect(now.code, explain(now)).toBe(0);
    expect(now.stdout).toContain(`Sealed ${MARK}`);
    const help = await runCli(['rekey', '--yes', '--help']);
    expect(help.stdout).toContain('--store DIR|URL');
    const mhelp = await runCli(['migrate', '--yes', '--help']);
    expect(mhelp.stdout).toContain('--to-key-env NAME');
  });

  it('rekey SIGKILLed mid-way (some pages committed): the store is refused, every value is under one of the keys, the same command finishes it', async () => {
    const url = await pgUrl();
    const schema = freshSchema('pgkill');
    const N = 6000;
    const db = await backend({ schema });
    const id = newId();
    const fence = await db.leases.acquire(id);
    const initial = recs(1, N, 'message', `${MARK} body`);
    await db.create(header(id, `t ${MARK}`), initial, snap('s'), fence);
    await db.leases.release(fence);
    await db.close();
    const keyFile = path.join(tempDir('sidecar-pgkill-'), 'key');
    fs.writeFileSync(keyFile, PGKEY, { mode: 0o600 });
    const c = new pgLib.Client({ connectionString: url });
    await c.connect();
    const sealed = async () => Number((await c.query(`SELECT count(*) AS n FROM "${schema}".records WHERE text LIKE 'ss-sealed:%'`)).rows[0].n);
    try {
      const run = startCli(['rekey', '--yes', '--store', url, '--pg-schema', schema, '--to-file', keyFile]);
      let seen = 0;
      for (let i = 0; i < 2000 && seen === 0; i++) {
        seen = await sealed();
        if (seen === 0) await new Promise((r) => setTimeout(r, 5));
      }
      run.child.kill('SIGKILL');
      const exit = await run.exited;
      expect(exit.signal).toBe('SIGKILL');
      const mid = await sealed();
      expect(mid, 'the kill landed mid-way').toBeGreaterThan(0);
      expect(mid, 'the kill landed mid-way').toBeLessThan(N);
      expect(mid % 500, 'whole pages only (one transaction each)').toBe(0);
      const refused = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'P'], { env });
      expect(refused.code, explain(refused)).toBe(1);
      expect(refused.stderr).toMatch(/rekey of this store was interrupted/);
      const again = await runCli(['rekey', '--yes', '--store', url, '--pg-schema', schema, '--to-env', 'P'], { env });
      expect(again.code, explain(again)).toBe(0);
      expect(again.stdout).toMatch(new RegExp(`${N - mid} value\\(s\\) rewritten`));
      expect(await sealed()).toBe(N);
    } finally {
      await c.end();
    }
    const after = await backend({ schema, encryptionKey: keyOf(PGKEY) });
    const texts: string[] = [];
    for (let afterSeq = 0; ;) {
      const page = await after.readRange(id, { afterSeq, limit: 5000 });
      texts.push(...page.records.map((r) => r.text));
      if (page.records.length < 5000) break;
      afterSeq = page.records[page.records.length - 1]!.seq;
    }
    expect(texts).toEqual(initial.map((r) => r.text));
    expect((await after.verify()).issues).toEqual([]);
  });
});
