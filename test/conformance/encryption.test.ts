import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { filesUnder } from '../domain/secrets/secretsHelpers.js';
import { tempDir } from '../helpers.js';
import { FRAMINGS, rejection, type SidecarClient, spawnSidecar, startSidecar } from './harness.js';
import pgLib from 'pg';
import { freshSchema, pgAvailability, releaseSharedCluster, sharedCluster } from '../pg/pgServer.js';

/**
 * Encryption at rest (protocol/README.md §20, STORAGE.md "Encryption at rest") over the built
 * binary: every kind of data written with a key leaves no plaintext anywhere under the store
 * (each field carries its own marker, searched raw, JSON-escaped, base64 at three alignments and
 * hex), and all of it reads back byte for byte with the key; the key itself is in no output and
 * no file; a wrong or missing key is KeyMismatch, never Corrupt.
 */

const KEY = randomBytes(32).toString('base64');
const OTHER_KEY = randomBytes(32).toString('base64');
const keyArgs = ['--encryption-key-env', 'SIDECAR_TEST_KEY'];
const keyEnv = (key = KEY) => ({ ...process.env, SIDECAR_TEST_KEY: key });
const KEY_MISMATCH = -31017;

function alignedBase64(bytes: Buffer, shift: number): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
  return encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
}

/** The forms of a marker that must not be found: raw, JSON-escaped, base64/base64url at 3 alignments, hex. */
function formsOf(marker: string): string[] {
  const bytes = Buffer.from(marker, 'utf8');
  const out = [marker, JSON.stringify(marker).slice(1, -1), bytes.toString('hex')];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = alignedBase64(bytes, shift);
    out.push(b64, b64.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(out)];
}


/** Every (marker form, place) found in the store's files and the given channels. */
function plaintextFound(store: string, markers: string[], channels: Array<{ name: string; bytes: Buffer }> = []): string[] {
  const found: string[] = [];
  for (const f of [...filesUnder(store).map((x) => ({ name: x.file, bytes: x.bytes })), ...channels]) {
    for (const m of markers) for (const form of formsOf(m)) if (f.bytes.includes(form)) found.push(`${m} (${form}) in ${f.name}`);
  }
  return found;
}

const tag = () => randomBytes(6).toString('hex');

/** Writes every kind of data the store keeps, each field with a unique marker; returns the markers and the ids. */
async function writeEverything(c: SidecarClient) {
  const t = tag();
  const m = (field: string) => `MK${t}-${field}-x`;
  const markers: string[] = [];
  const mk = (field: string) => {
    const v = m(field);
    markers.push(v);
    return v;
  };
  const { sessionId } = await c.create({
    title: mk('title'), cwd: `/w/${mk('cwd')}`, systemPrompt: mk('systemPrompt'), metadata: { note: mk('metadata') },
    tags: [mk('tag')], blobThreshold: 1024,
  });
  const blobText = `${mk('blob')} `.repeat(200);
  const attach = Buffer.from(`${mk('attach')}!`.repeat(100)).toString('base64');
  markers.push(blobText.slice(0, 40)); // the blob's text, at least this long
  await c.append({ sessionId, records: [
    { kind: 'message', message: { role: 'user', content: `${mk('user')}\nwith a newline` } },
    { kind: 'message', message: { role: 'assistant', content: mk('assistant') } },
    { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: blobText }] } }, // a blob (tool-call arguments are a BlobRef position, §15.4)
    { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: attach }] } },
    { kind: 'api', direction: 'request', payload: { prompt: mk('apiRequest') } },
    { kind: 'api', direction: 'response', payload: { text: mk('apiResponse') } },
    { kind: 'event', type: mk('eventType'), payload: { e: mk('eventPayload') } },
    { kind: 'interruption', reason: mk('reason'), phase: mk('phase'), assistantText: mk('assistantText') },
  ] });
  const scratch = await c.allocateScratch({ sessionId, requestId: mk('requestId') });
  mk('tool');
  const toolSeq = (scratch as { toolSeq: number }).toolSeq;
  await c.append({ sessionId, records: [
    { kind: 'toolStart', toolSeq, requestId: m('requestId'), tool: m('tool'), agent: mk('agent') },
    { kind: 'toolStream', toolSeq, stream: 'stdout', text: mk('toolStream') },
    { kind: 'toolFinish', toolSeq, requestId: m('requestId'), success: false, error: mk('toolError'), status: mk('status') },
  ] });
  await c.setState(sessionId, m('stateKey').replace(/-/g, '_'), { v: mk('stateValue') }); // a state key is a file name (STORAGE.md): not sealed
  await c.update({ sessionId, title: mk('newTitle'), metadata: { more: mk('newMetadata') }, tags: [mk('newTag')] });
  await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: mk('beforeCompaction') } }] });
  const compacted = await c.request<{ generation: number }>('session/compact', { sessionId, summary: mk('summary'), throughSeq: 5 });
  expect(compacted.generation).toBe(1);
  await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', content: mk('lastMessage') } }] });
  const fork = await c.request<{ sessionId: string }>('session/fork', { sessionId });
  await c.append({ sessionId: fork.sessionId, records: [{ kind: 'message', message: { role: 'user', content: mk('forked') } }] });
  await c.list(); // the list cache and index entries are written with their summaries
  return { markers, sessionId, forkId: fork.sessionId, stateKey: m('stateKey').replace(/-/g, '_') };
}

/** Everything a client can read back of the sessions (records of every generation, header, state, blobs, list, history). */
async function readEverything(c: SidecarClient, ids: { sessionId: string; forkId: string; stateKey: string }) {
  const out: Record<string, unknown> = {};
  for (const id of [ids.sessionId, ids.forkId]) {
    const { mode: _mode, ...opened } = await c.open({ sessionId: id, mode: 'read' });
    out[`open ${id}`] = opened;
    out[`read ${id}`] = (await c.read({ sessionId: id })).records;
    out[`inline ${id}`] = (await c.read({ sessionId: id, inline: true })).records;
    out[`history ${id}`] = await c.request('session/history', { sessionId: id });
    out[`context ${id}`] = await c.request('session/context', { sessionId: id });
  }
  out.generation0 = (await c.read({ sessionId: ids.sessionId, generation: 0 })).records;
  out.state = await c.getState(ids.sessionId, ids.stateKey);
  const refs = JSON.stringify(out).match(/sha256:[0-9a-f]{64}/g) ?? [];
  expect(refs.length).toBeGreaterThanOrEqual(2);
  for (const ref of [...new Set(refs)].sort()) out[ref] = (await c.readBlob(ids.sessionId, ref, 777)).toString('base64');
  out.list = (await c.list()).sessions;
  out.search = await c.search({ query: 'MK' });
  return out;
}

describe.each(FRAMINGS)('encryption at rest over %s', (framing) => {
  it('advertises it; every field of every kind of data is sealed on disk; all of it reads back after a restart; the key is nowhere', async () => {
    const store = tempDir('sidecar-enc-');
    const c = spawnSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    const init = await c.initialize();
    expect(init.capabilities.encryptionAtRest).toEqual({ algorithm: 'AES-256-GCM', active: true });
    const ids = await writeEverything(c);
    const before = await readEverything(c, ids);
    const json = JSON.stringify(before);
    // Every marker did go in (the first title and tags were replaced by session/update; blobs are base64 here).
    for (const m of ids.markers.filter((x) => !/-(title|tag)-x$|-(blob|attach)-x/.test(x))) expect(json, m).toContain(m);
    await c.shutdown();
    expect(fs.existsSync(path.join(store, 'history', ids.sessionId, '0.jsonl'))).toBe(true); // the archive exists, sealed
    expect(fs.readdirSync(path.join(store, 'blobs', 'sha256')).length).toBeGreaterThan(0);
    const channels = [{ name: 'stdout', bytes: Buffer.concat(c.stdout) }, { name: 'stderr', bytes: Buffer.from(c.stderr) }];
    expect(plaintextFound(store, ids.markers)).toEqual([]);
    // The key: in no file, and not in what the sidecar printed.
    expect(plaintextFound(store, [KEY, Buffer.from(KEY, 'base64').toString('hex')], channels)).toEqual([]);

    const d = spawnSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    await d.initialize();
    const after = await readEverything(d, ids);
    expect(after).toEqual(before);
    // The key is a registered secret: it can never be stored as content.
    await d.open({ sessionId: ids.forkId, mode: 'write' });
    const refused = await rejection(d.append({ sessionId: ids.forkId, records: [{ kind: 'message', message: { role: 'user', content: `key ${KEY}` } }] }));
    expect(refused.data).toMatchObject({ kind: 'SecretRejected' });
    await d.shutdown();
    expect(plaintextFound(store, [KEY], [{ name: 'stdout', bytes: Buffer.concat(d.stdout) }, { name: 'stderr', bytes: Buffer.from(d.stderr) }])).toEqual([]);
  });

  it('a wrong or missing key, or a key for a plaintext store, is refused at startup without printing the key; a session sealed with another key is KeyMismatch', async () => {
    const store = tempDir('sidecar-enc-');
    const c = await startSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    const { sessionId } = await c.create({ title: 'sealed' });
    await c.shutdown();
    for (const [env, args, what] of [
      [keyEnv(OTHER_KEY), keyArgs, /not the store's key/],
      [process.env, [], /the store is encrypted: give its key/],
    ] as const) {
      const bad = spawnSidecar({ framing, store, env, args: [...args] });
      const exit = await bad.exited;
      expect(exit.code).toBe(1);
      expect(bad.stderr).toMatch(what);
      expect(bad.stderr).not.toMatch(/Corrupt|damaged/);
      expect(bad.stderr).not.toContain(KEY);
      expect(bad.stderr).not.toContain(OTHER_KEY);
    }
    const plain = tempDir('sidecar-plain-');
    const p = await startSidecar({ framing, store: plain });
    expect((p as SidecarClient).child.pid).toBeGreaterThan(0);
    await p.create({ title: 'plain' });
    await p.shutdown();
    const withKey = spawnSidecar({ framing, store: plain, env: keyEnv(), args: keyArgs });
    expect((await withKey.exited).code).toBe(1);
    expect(withKey.stderr).toMatch(/not encrypted.*rekey/);

    // A journal sealed with another key, copied into the store: KeyMismatch for that session, not Corrupt.
    const other = tempDir('sidecar-enc-');
    const o = await startSidecar({ framing, store: other, env: keyEnv(OTHER_KEY), args: keyArgs });
    const foreign = (await o.create({ title: 'foreign' })).sessionId;
    await o.shutdown();
    fs.cpSync(path.join(other, 'sessions', foreign), path.join(store, 'sessions', foreign), { recursive: true });
    const d = await startSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    const err = await rejection(d.open({ sessionId: foreign, mode: 'read' }));
    expect(err.code).toBe(KEY_MISMATCH);
    expect(err.data).toMatchObject({ kind: 'KeyMismatch', reason: 'wrongKey' });
    expect((await d.open({ sessionId, mode: 'read' })).title).toBe('sealed');
    await d.shutdown();
  });

  it('malformed keys and unsafe key files are clear startup errors that never show the key', async () => {
    const store = tempDir('sidecar-enc-');
    const dir = tempDir('sidecar-key-');
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, `${KEY}\n`, { mode: 0o644 });
    fs.chmodSync(keyFile, 0o644);
    const cases: Array<[NodeJS.ProcessEnv, string[], RegExp]> = [
      [keyEnv('not base64!!'), keyArgs, /not base64/],
      [keyEnv(randomBytes(16).toString('base64')), keyArgs, /16 bytes; it must be 32/],
      [process.env, keyArgs, /SIDECAR_TEST_KEY: the variable is not set/],
      [process.env, ['--encryption-key-file', keyFile], /readable by others \(mode 644\)/],
      [keyEnv(), [...keyArgs, '--encryption-key-file', keyFile], /exclude each other/],
    ];
    const link = path.join(dir, 'link');
    fs.symlinkSync(keyFile, link);
    cases.push([process.env, ['--encryption-key-file', link], /symbolic link/]);
    if (process.getuid?.() === 0) {
      // Only root can give a file away: a key file owned by another user is refused.
      const foreign = path.join(dir, 'foreign');
      fs.writeFileSync(foreign, KEY, { mode: 0o600 });
      fs.chownSync(foreign, 65534, 65534);
      cases.push([process.env, ['--encryption-key-file', foreign], /not owned by this user/]);
    }
    for (const [env, args, what] of cases) {
      const c = spawnSidecar({ framing, store, env, args });
      expect((await c.exited).code, String(what)).not.toBe(0);
      expect(c.stderr).toMatch(what);
      expect(c.stderr).not.toContain(KEY);
    }
    expect(fs.existsSync(path.join(store, 'sessions'))).toBe(false); // nothing was created
    // A PostgreSQL store takes the key (test/cli/pgEncryption.test.ts): here its database is unreachable, and the key is never shown.
    const pg = spawnSidecar({ framing, store: 'postgres://nobody@127.0.0.1:1/none', env: { ...keyEnv(), SESSION_SIDECAR_PG_START_WAIT_MS: '0' }, args: keyArgs });
    expect((await pg.exited).code).toBe(1);
    expect(pg.stderr).toMatch(/cannot start/);
    expect(pg.stderr).not.toContain(KEY);
    fs.chmodSync(keyFile, 0o600);
    const ok = await startSidecar({ framing, store, args: ['--encryption-key-file', keyFile] });
    const { sessionId } = await ok.create({ title: 'from a key file' });
    await ok.shutdown();
    const again = await startSidecar({ framing, store, env: keyEnv(), args: keyArgs }); // the same key, from the environment
    expect((await again.open({ sessionId, mode: 'read' })).title).toBe('from a key file');
    await again.shutdown();
  });

  it('a subscriber in another process reads an encrypted journal live, across a compaction', async () => {
    const store = tempDir('sidecar-enc-');
    const writer = await startSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    const { sessionId } = await writer.create({ title: 'watched' });
    await writer.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'm1' } }] });
    const watcher = await startSidecar({ framing, store, env: keyEnv(), args: keyArgs });
    await watcher.request('session/subscribe', { sessionId, afterSeq: 0 });
    for (let i = 2; i <= 6; i++) await writer.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: `m${i}` } }] });
    await writer.request('session/compact', { sessionId, summary: 'so far', throughSeq: 4 });
    await writer.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'm7' } }] });
    const seen = () => watcher.notifications
      .filter((n) => n.method === 'session/didAppend')
      .flatMap((n) => (n.params as { records: Array<{ seq: number; message?: { content?: string } }> }).records);
    for (const end = Date.now() + 10_000; !seen().some((r) => r.message?.content === 'm7');) {
      if (Date.now() > end) throw new Error('the watcher never saw m7');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(seen().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(seen().map((r) => r.message?.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    await watcher.shutdown();
    await writer.shutdown();
  });
});

const pgSkip = pgAvailability();
afterAll(() => releaseSharedCluster());

/** Every row of every table of a schema as PostgreSQL prints it (bytea as hex), plus every bytea as raw bytes. */
async function schemaBytes(url: string, schema: string): Promise<Array<{ name: string; bytes: Buffer }>> {
  const c = new pgLib.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Array<{ name: string; bytes: Buffer }> = [];
    const tables = await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [schema]);
    for (const { table_name: t } of tables.rows as Array<{ table_name: string }>) {
      const rows = await c.query(`SELECT t::text AS row FROM "${schema}"."${t}" t`);
      out.push({ name: t, bytes: Buffer.from((rows.rows as Array<{ row: string }>).map((r) => r.row).join('\n'), 'utf8') });
    }
    const blobs = await c.query(`SELECT bytes FROM "${schema}".blobs`);
    out.push({ name: 'blobs (raw)', bytes: Buffer.concat((blobs.rows as Array<{ bytes: Buffer }>).map((r) => r.bytes)) });
    return out;
  } finally {
    await c.end();
  }
}

describe.skipIf(pgSkip !== null)(`encryption at rest on a PostgreSQL store (the built binary)${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('serve --encryption-key-env on a postgres:// store: advertised; every field sealed in every table; read back after a restart; refusals as on the file store', async () => {
    const { url } = await sharedCluster();
    const schema = freshSchema('confenc');
    const args = (...more: string[]) => ['--pg-schema', schema, '--workspace', tempDir('sidecar-pgenc-ws-'), ...more];
    const c = spawnSidecar({ store: url, env: keyEnv(), args: args(...keyArgs) });
    const init = await c.initialize();
    expect(init.capabilities.encryptionAtRest).toEqual({ algorithm: 'AES-256-GCM', active: true });
    expect(init.store.backend).toBe('postgres');
    const ids = await writeEverything(c);
    const before = await readEverything(c, ids);
    const json = JSON.stringify(before);
    for (const m of ids.markers.filter((x) => !/-(title|tag)-x$|-(blob|attach)-x/.test(x))) expect(json, m).toContain(m);
    await c.shutdown();
    const rows = await schemaBytes(url, schema);
    expect(rows.find((r) => r.name === 'records')!.bytes.toString()).toContain('ss-sealed:');
    const found = (markers: string[], extra: Array<{ name: string; bytes: Buffer }> = []) => {
      const out: string[] = [];
      for (const f of [...rows, ...extra]) for (const m of markers) for (const form of formsOf(m)) if (f.bytes.includes(form)) out.push(`${m} (${form}) in ${f.name}`);
      return out;
    };
    expect(found(ids.markers)).toEqual([]);
    expect(found([KEY, Buffer.from(KEY, 'base64').toString('hex')], [{ name: 'stdout', bytes: Buffer.concat(c.stdout) }, { name: 'stderr', bytes: Buffer.from(c.stderr) }])).toEqual([]);

    const d = spawnSidecar({ store: url, env: keyEnv(), args: args(...keyArgs) });
    await d.initialize();
    expect(await readEverything(d, ids)).toEqual(before);
    await d.open({ sessionId: ids.forkId, mode: 'write' });
    const refused = await rejection(d.append({ sessionId: ids.forkId, records: [{ kind: 'message', message: { role: 'user', content: `key ${KEY}` } }] }));
    expect(refused.data).toMatchObject({ kind: 'SecretRejected' });
    await d.shutdown();

    for (const [env, extra, what] of [
      [keyEnv(OTHER_KEY), keyArgs, /not the store's key/],
      [process.env, [], /the store is encrypted: give its key/],
    ] as const) {
      const bad = spawnSidecar({ store: url, env, args: args(...extra) });
      expect((await bad.exited).code).toBe(1);
      expect(bad.stderr).toMatch(what);
      expect(bad.stderr).not.toContain(KEY);
      expect(bad.stderr).not.toContain(OTHER_KEY);
    }
    // A key for a plaintext PostgreSQL store holding sessions: refused, pointing to rekey.
    const plainSchema = freshSchema('confenc');
    const p = await startSidecar({ store: url, args: ['--pg-schema', plainSchema, '--workspace', tempDir('sidecar-pgenc-ws-')] });
    await p.create({ title: 'plain' });
    await p.shutdown();
    const notEnc = spawnSidecar({ store: url, env: keyEnv(), args: ['--pg-schema', plainSchema, '--workspace', tempDir('sidecar-pgenc-ws-'), ...keyArgs] });
    expect((await notEnc.exited).code).toBe(1);
    expect(notEnc.stderr).toMatch(/not encrypted but an encryption key was given.*rekey/);
  });
});
