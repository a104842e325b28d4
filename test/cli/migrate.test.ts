import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreLayout } from '../../src/backends/file/layout.js';
import { nodeFs } from '../../src/durable/fsLayer.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { encodeRecordLine } from '../../src/backends/file/journal/format.js';
import { exportFileSession, fileSessionIds } from '../../src/backends/file/transfer/exportFile.js';
import { sameBundle } from '../../src/migrate/migrate.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { tempDir } from '../helpers.js';
import { explain, journalPath, makeStore, msg, runCli, startCli, until } from './helpers.js';
import { dumpSchema, PASSWORD, pgStore, withPassword } from './pgCliKit.js';

/** A file store like makeStore's plus a trashed session, state values, a blob and runtime records. */
async function richStore(): Promise<{ root: string; ids: Record<string, string> }> {
  const f = await makeStore();
  const store = new FileSessionStore(f.root, { leases: false });
  const { sessionId: trashed } = await store.create({ title: 'Thrown away' });
  await store.append(trashed, [msg('user', 'forget me')]);
  await store.delete(trashed);
  const { sessionId: runtime } = await store.create({ title: 'Runtime', blobThreshold: 1024 });
  await store.setState(runtime, 'plan', { steps: ['a', 'b'] });
  const { toolSeq } = await store.allocateScratch(runtime, 'r1');
  await store.append(runtime, [
    { kind: 'toolStart', requestId: 'r1', tool: 'bash', toolSeq },
    { kind: 'toolStream', toolSeq, stream: 'stdout', text: `${'big output line\n'.repeat(300)}end` },
    { kind: 'api', direction: 'request', payload: { n: 1 } },
  ]);
  await store.closeAll();
  return { root: f.root, ids: { chat: f.chat, compacted: f.compacted, fork: f.fork, trashed, runtime } };
}

const layoutOf = (root: string) => new StoreLayout(root);
const bundles = (root: string) => fileSessionIds(nodeFs, layoutOf(root)).map((id) => exportFileSession(nodeFs, layoutOf(root), id));

function expectSameStores(a: string, b: string): void {
  const x = bundles(a);
  const y = bundles(b);
  expect(y.map((s) => s.header.sessionId)).toEqual(x.map((s) => s.header.sessionId));
  x.forEach((s, i) => expect(sameBundle(s, y[i]!), s.header.sessionId).toBe(true));
}

describe.skipIf(pgSkip)('session-sidecar migrate', () => {
  it('file -> postgres -> file keeps every session byte for byte (compacted, trashed, state, blobs, runtime records); both ends work after', async () => {
    const url = await pgUrl();
    const schema = freshSchema('mig');
    const { root, ids } = await richStore();
    const there = await runCli(['migrate', '--yes', '--from', root, '--to', withPassword(url), '--pg-schema', schema]);
    expect(there.code, explain(there)).toBe(0);
    expect(there.stdout).toContain('5 sessions copied');
    expect(there.stdout).toContain('1 blob');
    expect(there.stdout + there.stderr).not.toContain(PASSWORD);
    const verified = await runCli(['verify', '--store', url, '--pg-schema', schema]);
    expect(verified.code, explain(verified)).toBe(0);

    const back = path.join(tempDir('sidecar-mig-'), 'store');
    const home = await runCli(['migrate', '--yes', '--from', url, '--pg-schema', schema, '--to', back]);
    expect(home.code, explain(home)).toBe(0);
    expectSameStores(root, back);
    // A journal written in single-record batches comes back as the very same bytes.
    expect(fs.readFileSync(journalPath(back, ids.chat!))).toEqual(fs.readFileSync(journalPath(root, ids.chat!)));
    const archive = (r: string) => fs.readFileSync(path.join(r, 'history', ids.compacted!, '0.jsonl'), 'utf8').replace(/,"batchEnd":\d+/g, '').split('\n').map((l) => l.slice(0, l.lastIndexOf(',"crc"')));
    expect(archive(back)).toEqual(archive(root));
    expect(fs.readFileSync(path.join(back, 'sessions', ids.runtime!, 'state', 'plan.json'))).toEqual(fs.readFileSync(path.join(root, 'sessions', ids.runtime!, 'state', 'plan.json')));
    const blobs = (r: string) => fs.readdirSync(path.join(r, 'blobs', 'sha256'), { recursive: true }).map(String).sort();
    expect(blobs(back)).toEqual(blobs(root));
    expect(fs.existsSync(path.join(back, 'trash', ids.trashed!, 'session', 'journal.jsonl'))).toBe(true);
    expect(fs.existsSync(path.join(back, 'migrate'))).toBe(false);
    // PostgreSQL keeps no batch boundaries, so the archive of a compaction comes back without its
    // batchEnd members (shorter than the size its checkpoint recorded, which is informational):
    // file verify finds nothing wrong with the copy.
    const fileVerify = await runCli(['verify', '--json', '--store', back]);
    const report = JSON.parse(fileVerify.stdout) as { sessions: Array<{ sessionId: string; findings: Array<{ severity: string; message: string }> }> };
    const errors = report.sessions.flatMap((x) => x.findings.filter((f) => f.severity === 'error').map((f) => `${x.sessionId}: ${f.message}`));
    expect(errors).toEqual([]);

    // Conformance of the copies: sessions open for writing and take appends on both ends.
    const pg = await pgStore(url, schema);
    try {
      await pg.open(ids.compacted!, 'write');
      const r = await pg.append(ids.compacted!, [msg('user', 'after migrate')]);
      expect(r.firstSeq).toBe(4);
      expect((await pg.history(ids.compacted!)).map((h) => h.throughSeq)).toEqual([2]);
      await pg.open(ids.runtime!, 'write');
      expect(await pg.getState(ids.runtime!, 'plan')).toEqual({ steps: ['a', 'b'] });
      const page = await pg.read(ids.runtime!, { inline: true });
      expect(String(page.records[1]?.text)).toMatch(/^big output line/);
      await pg.restore(ids.trashed!);
      expect((await pg.read(ids.trashed!)).records).toHaveLength(1);
    } finally {
      await pg.closeAll();
    }
    const file = new FileSessionStore(back);
    try {
      await file.open(ids.chat!, 'write');
      const r = await file.append(ids.chat!, [msg('user', 'after migrate back')]);
      expect(r.firstSeq).toBe(9);
      expect((await file.context(ids.chat!)).messages.at(-1)).toMatchObject({ role: 'user' });
      await file.restore(ids.trashed!);
      expect((await file.read(ids.trashed!)).records).toHaveLength(1);
    } finally {
      await file.closeAll();
    }

    // A rerun finds every session already there (identical) and succeeds without writing.
    const dump = await dumpSchema(url, schema);
    const again = await runCli(['migrate', '--yes', '--from', root, '--to', url, '--pg-schema', schema]);
    expect(again.code, explain(again)).toBe(1); // compacted and runtime now differ (appended above): refused
    expect(again.stderr).toContain(`session ${ids.compacted} not copied: a different session with this id exists`);
    expect(again.stdout).toContain(`already there ${ids.chat}`);
    expect(await dumpSchema(url, schema)).toBe(dump);
  });

  it('a credential planted in a source journal (a valid line) is refused by the secret gate: that session is not copied, the others are', async () => {
    const url = await pgUrl();
    const schema = freshSchema('migsec');
    const f = await makeStore();
    const token = `ghp_${'A1b2C3d4E5f6G7h8I9j0'.repeat(2).slice(0, 36)}`;
    const journal = journalPath(f.root, f.compacted);
    const lastSeq = fs.readFileSync(journal, 'utf8').trim().split('\n').length - 1 + 1; // header + checkpoint + 1 record -> next seq 4
    const line = encodeRecordLine(lastSeq + 1, new Date().toISOString(), undefined, JSON.stringify({ kind: 'message', message: { role: 'user', content: `my token is ${token}` } }));
    fs.appendFileSync(journal, line);
    expect(exportFileSession(nodeFs, layoutOf(f.root), f.compacted).generations.at(-1)!.records.at(-1)!.text).toContain(token); // a valid line
    const r = await runCli(['migrate', '--yes', '--from', f.root, '--to', url, '--pg-schema', schema]);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`session ${f.compacted} not copied`);
    expect(r.stderr).toMatch(/credential \(rule: /);
    expect(r.stdout).toContain('2 sessions copied');
    expect(r.stdout + r.stderr).not.toContain(token);
    const dump = await dumpSchema(url, schema);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(f.compacted);
  });

  it('SIGKILL mid-migrate leaves no half session (each is absent or whole) and a rerun completes, in both directions', async () => {
    const url = await pgUrl();
    const schema = freshSchema('migkill');
    const root = path.join(tempDir('sidecar-migkill-'), 'store');
    const store = new FileSessionStore(root, { leases: false });
    for (let i = 0; i < 24; i++) {
      const { sessionId } = await store.create({ title: `s${i}` });
      for (let b = 0; b < 20; b++) await store.append(sessionId, Array.from({ length: 10 }, (_, k) => msg('user', `session ${i} batch ${b} record ${k} ${'x'.repeat(200)}`)));
    }
    await store.closeAll();

    const pgSide = ['--to', url, '--pg-schema', schema];
    const killed = startCli(['migrate', '--yes', '--from', root, ...pgSide]);
    await until(() => killed.output().includes('copied '), 'a first session copied');
    killed.child.kill('SIGKILL');
    await killed.exited;
    // Every session in the destination is whole: read back, it equals the source.
    const back1 = path.join(tempDir('sidecar-migkill-'), 'store');
    const partial = await runCli(['migrate', '--yes', '--from', url, '--pg-schema', schema, '--to', back1]);
    expect(partial.code, explain(partial)).toBe(0);
    const copied = fileSessionIds(nodeFs, layoutOf(back1));
    expect(copied.length).toBeGreaterThan(0);
    for (const id of copied) expect(sameBundle(exportFileSession(nodeFs, layoutOf(back1), id), exportFileSession(nodeFs, layoutOf(root), id))).toBe(true);
    const rerun = await runCli(['migrate', '--yes', '--from', root, ...pgSide]);
    expect(rerun.code, explain(rerun)).toBe(0);

    // postgres -> file, killed mid-way: the file destination holds whole sessions only; a rerun completes.
    const back2 = path.join(tempDir('sidecar-migkill-'), 'store');
    const killed2 = startCli(['migrate', '--yes', '--from', url, '--pg-schema', schema, '--to', back2]);
    await until(() => killed2.output().includes('copied '), 'a first session copied back');
    killed2.child.kill('SIGKILL');
    await killed2.exited;
    for (const id of fileSessionIds(nodeFs, layoutOf(back2))) {
      expect(sameBundle(exportFileSession(nodeFs, layoutOf(back2), id), exportFileSession(nodeFs, layoutOf(root), id))).toBe(true);
    }
    const rerun2 = await runCli(['migrate', '--yes', '--from', url, '--pg-schema', schema, '--to', back2]);
    expect(rerun2.code, explain(rerun2)).toBe(0);
    expectSameStores(root, back2);
    expect(fs.existsSync(path.join(back2, 'migrate'))).toBe(false);
  });

  it('refuses a session a live writer holds in the source; usage errors exit 2; --help documents it', async () => {
    const url = await pgUrl();
    const schema = freshSchema('miglease');
    const f = await makeStore();
    const writer = new FileSessionStore(f.root);
    try {
      await writer.open(f.chat, 'write');
      const r = await runCli(['migrate', '--yes', '--from', f.root, '--to', url, '--pg-schema', schema]);
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toContain(`session ${f.chat} not copied: it is open for writing (pid ${process.pid}`);
      expect(r.stdout).toContain('2 sessions copied');
    } finally {
      await writer.closeAll();
    }
    expect((await runCli(['migrate', '--yes', '--from', f.root])).code).toBe(2);
    expect((await runCli(['migrate', '--yes', '--from', f.root, '--to', f.root])).code).toBe(2);
    const help = await runCli(['migrate', '--yes', '--help']);
    expect(help.stdout).toContain('--from DIR|URL');
    expect(help.stdout).toContain('byte for byte');
  });
});
