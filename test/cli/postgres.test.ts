import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { explain, runCli, startCli, until } from './helpers.js';
import { dumpSchema, makePgStore, PASSWORD, pgStore, type PgFixture, schemaExists, withPassword } from './pgCliKit.js';
import { msg } from './helpers.js';
import { FinalGate } from '../../src/core/gate.js';
import { SecretSet } from '../../src/domain/secrets/knownSecrets.js';

/**
 * The inspection commands over a PostgreSQL store, through the built binary: what they show,
 * that they change nothing (every table dumped before and after), that a missing schema is a
 * one-line error and is not created, and that the URL's password is never printed.
 */
describe.skipIf(pgSkip)('inspection commands on a PostgreSQL store', () => {
  let url: string;
  let schema: string;
  let fx: PgFixture;
  let store: string[];
  let before: string;

  beforeAll(async () => {
    url = await pgUrl();
    schema = freshSchema('cli');
    fx = await makePgStore(url, schema);
    store = ['--store', withPassword(url), '--pg-schema', schema];
    before = await dumpSchema(url, schema);
  });

  afterAll(async () => {
    // Every command of this file ran against the schema: not one row may have changed.
    if (before !== undefined) expect(await dumpSchema(url, schema)).toBe(before);
  });

  const noPassword = (r: { stdout: string; stderr: string }) => {
    expect(r.stdout).not.toContain(PASSWORD);
    expect(r.stderr).not.toContain(PASSWORD);
  };

  it('list shows the live sessions (not the trashed one), as a table and as JSON; SESSION_SIDECAR_STORE works too', async () => {
    const r = await runCli(['list', ...store]);
    expect(r.code, explain(r)).toBe(0);
    for (const id of [fx.chat, fx.compacted, fx.runtime]) expect(r.stdout).toContain(id);
    expect(r.stdout).not.toContain(fx.trashed);
    expect(r.stdout).toContain('Fix the build');
    noPassword(r);
    const j = await runCli(['list', '--json', '--pg-schema', schema], { env: { SESSION_SIDECAR_STORE: withPassword(url) } });
    expect(j.code, explain(j)).toBe(0);
    const sessions = JSON.parse(j.stdout) as Array<{ sessionId: string; lastSeq: number }>;
    expect(sessions.map((s) => s.sessionId).sort()).toEqual([fx.chat, fx.compacted, fx.runtime].sort());
    expect(sessions.find((s) => s.sessionId === fx.compacted)?.lastSeq).toBe(3);
  });

  it('show prints the transcript, --all the archived records, --json the stored records; a prefix is enough', async () => {
    const r = await runCli(['show', fx.chat.slice(0, 20), ...store]);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('Why does CI fail?');
    expect(r.stdout).toContain('bash');
    const all = await runCli(['show', fx.compacted, '--all', ...store]);
    expect(all.code, explain(all)).toBe(0);
    expect(all.stdout).toContain('hello'); // archived generation 0
    expect(all.stdout).toContain('again?');
    const j = await runCli(['show', fx.compacted, '--json', ...store]);
    const recs = JSON.parse(j.stdout) as Array<{ seq: number; kind: string }>;
    expect(recs.map((x) => [x.seq, x.kind])).toEqual([[2, 'checkpoint'], [3, 'message']]);
    noPassword(all);
  });

  it('export writes the whole history (jsonl and markdown); stats counts sessions, records and archives', async () => {
    const e = await runCli(['export', fx.compacted, '--format', 'jsonl', ...store]);
    expect(e.code, explain(e)).toBe(0);
    const lines = e.stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number });
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3]);
    const md = await runCli(['export', fx.chat, '--format', 'markdown', ...store]);
    expect(md.stdout).toContain('# Fix the build');
    const s = await runCli(['stats', '--json', ...store]);
    expect(s.code, explain(s)).toBe(0);
    const stats = JSON.parse(s.stdout) as { sessions: number; records: number; archivedGenerations: number; root: string };
    expect(stats).toMatchObject({ sessions: 3, archivedGenerations: 1 });
    expect(stats.root).toContain(`schema ${schema}`);
    noPassword(s);
  });

  it('verify checks every session, blob and lease: OK on a healthy store, live holders named with -v', async () => {
    const r = await runCli(['verify', '-v', ...store]);
    expect(r.code, explain(r)).toBe(0);
    for (const id of [fx.chat, fx.compacted, fx.runtime, fx.trashed]) expect(r.stdout).toMatch(new RegExp(`OK\\s+${id}`));
    expect(r.stdout).toContain('(deleted, in trash)');
    const j = JSON.parse((await runCli(['verify', '--json', ...store])).stdout) as { ok: boolean; totals: { sessions: number; archives: number } };
    expect(j).toMatchObject({ ok: true, totals: { sessions: 4, archives: 1 } });
    // A writer holding a session: verify names it (host and pid), and changes nothing.
    const writer = await pgStore(url, schema);
    try {
      await writer.open(fx.chat, 'write');
      const held = await runCli(['verify', fx.chat, '-v', ...store]);
      expect(held.code, explain(held)).toBe(0);
      expect(held.stdout).toContain(`open for writing by pid ${process.pid}`);
    } finally {
      await writer.closeAll();
    }
    // closeAll released the lease, which is a row change: the dump is taken again after it.
    before = await dumpSchema(url, schema);
    noPassword(r);
  });

  it('tail prints the last records and -f follows appends made by another process live (LISTEN/NOTIFY)', async () => {
    const last = await runCli(['tail', fx.chat, '-n', '2', '--raw', ...store]);
    expect(last.code, explain(last)).toBe(0);
    expect(last.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([4, 5]);
    const tail = startCli(['tail', fx.chat, '-n', '1', '-f', '--raw', ...store]);
    try {
      // Once the last record is printed the follower reads from seq 5: a record appended from
      // then on is delivered (by the first read of the watch or by the notification).
      await until(() => tail.output().includes('"seq":5'), 'the last record');
      const writer = await pgStore(url, schema);
      try {
        await writer.open(fx.chat, 'write');
        await writer.append(fx.chat, [msg('user', 'followed live')]);
        await until(() => tail.output().includes('followed live'), 'the appended record in tail -f');
      } finally {
        await writer.closeAll();
      }
      expect(tail.output()).not.toContain('Why does CI fail?');
      expect(tail.output().trim().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([5, 6]);
    } finally {
      tail.child.kill('SIGINT');
    }
    expect((await tail.exited).code).toBe(0);
    before = await dumpSchema(url, schema);
  });

  it('a missing schema is a one-line error (exit 1) and is not created; a bad schema name is a usage error', async () => {
    const missing = freshSchema('nope');
    for (const cmd of [['list'], ['stats'], ['verify'], ['show', '01ARZ3NDEKTSV4RRFFQ69G5FAV']]) {
      const r = await runCli([...cmd, '--store', withPassword(url), '--pg-schema', missing]);
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`no session store in schema ${missing}`);
      noPassword(r);
    }
    expect(await schemaExists(url, missing)).toBe(false);
    const bad = await runCli(['list', '--store', withPassword(url), '--pg-schema', 'Bad-Name']);
    expect(bad.code, explain(bad)).toBe(2);
    const fileSchema = await runCli(['list', '--store', '/tmp', '--pg-schema', 'x']);
    expect(fileSchema.code, explain(fileSchema)).toBe(2);
  });

  it('an unreachable database is a one-line error without the password', async () => {
    const r = await runCli(['list', '--store', `postgres://someone:${PASSWORD}@127.0.0.1:1/db`]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    noPassword(r);
  });

  it('--help of each command documents the URL form', async () => {
    for (const cmd of ['list', 'show', 'tail', 'verify', 'export', 'stats']) {
      const r = await runCli([cmd, '--help']);
      expect(r.stdout, cmd).toContain('postgres://user:pass@host:port/db');
      expect(r.stdout, cmd).toContain('--pg-schema NAME');
    }
  });
});

describe.skipIf(pgSkip)('verify on a damaged PostgreSQL store', () => {
  it('reports a damaged record, a missing blob and an unreferenced one; exit 1', async () => {
    const url = await pgUrl();
    const schema = freshSchema('cliv');
    const fx = await makePgStore(url, schema);
    const { PgConnections } = await import('../../src/backends/postgres/pool.js');
    const { parsePostgresUrl } = await import('../../src/backends/postgres/url.js');
    const raw = await PgConnections.open({ target: parsePostgresUrl(url), schema });
    try {
      await raw.query(`UPDATE records SET text = replace(text, 'hi', 'HI') WHERE session_id = $1 AND seq = 1`, [fx.compacted]);
      await raw.query('DELETE FROM blobs');
      await raw.query(`INSERT INTO blobs (sha256, size, bytes) VALUES ($1, 3, 'abc'::bytea)`, ['ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad']);
    } finally {
      await raw.close();
    }
    const r = await runCli(['verify', '-v', '--store', url, '--pg-schema', schema]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`FAIL ${fx.compacted}`));
    expect(r.stdout).toContain('record 1 of generation 0 fails its checksum');
    expect(r.stdout).toMatch(new RegExp(`FAIL ${fx.runtime}`));
    expect(r.stdout).toMatch(/blob sha256:[0-9a-f]{64} is referenced but missing/);
    expect(r.stdout).toContain('blob sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad (3 bytes) is referenced by no session');
    expect(r.stdout).toMatch(new RegExp(`OK\\s+${fx.chat}`));
  });
});

describe.skipIf(pgSkip)('the read-only PostgreSQL backend of the inspection commands', () => {
  it('the server refuses its writes (default_transaction_read_only), it takes no lease, and it never creates a schema', async () => {
    const url = await pgUrl();
    const schema = freshSchema('ro');
    await makePgStore(url, schema);
    const before = await dumpSchema(url, schema);
    const { openPostgresBackend } = await import('../../src/backends/postgres/backend.js');
    const ro = await openPostgresBackend({ url, schema, readOnly: true });
    try {
      await expect(ro.blobs.put(new FinalGate(new SecretSet()).blob(Buffer.from('not to be written')))).rejects.toMatchObject({ name: 'StoreError' });
      await expect(ro.leases.acquire('01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({ kind: 'UnsafeStore', details: { reason: 'readOnlyStore' } });
    } finally {
      await ro.close();
    }
    expect(await dumpSchema(url, schema)).toBe(before);
    const missing = freshSchema('romiss');
    await expect(openPostgresBackend({ url, schema: missing, readOnly: true })).rejects.toMatchObject({ kind: 'UnsafeStore', details: { reason: 'noSchema' } });
    expect(await schemaExists(url, missing)).toBe(false);
  });
});
