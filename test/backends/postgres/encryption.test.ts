/**
 * Encryption at rest on PostgreSQL (sealing.ts, sealedValues.ts, encryptionRow.ts), against a
 * real server: a round trip through the core, no plaintext anywhere in the schema, values
 * bound to where they belong, and the marker's refusals (the file store's words and reasons).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { Sessions } from '../../../src/core/sessions/sessions.js';
import { scratchAt } from '../../../src/scratch/localScratch.js';
import { StoreError } from '../../../src/domain/errors.js';
import { tempDir } from '../../helpers.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, kindOf, newId, pass, pgSkip, pgUrl, recs, snap } from './pgTestKit.js';
import { sql } from './pgTestKit.js';

const MARK = 'ZQXJ-plaintext-marker';
const key = new StoreKey(randomBytes(32));
const key2 = new StoreKey(randomBytes(32));

/** Every row of every table of the schema as PostgreSQL prints it (bytea as hex), and bytea also as text. */
async function dump(schema: string): Promise<string> {
  const tables = await sql<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [schema]);
  const out: string[] = [];
  for (const { table_name: t } of tables) {
    for (const r of await sql<{ row: string }>(`SELECT t::text AS row FROM ${schema}.${t} t`)) out.push(`${t}: ${r.row}`);
  }
  for (const r of await sql<{ bytes: Buffer }>(`SELECT bytes FROM ${schema}.blobs`)) out.push(r.bytes.toString('latin1'));
  return out.join('\n');
}

async function core(schema: string, k: StoreKey | null = key): Promise<Sessions> {
  const db = await backend({ schema, ...(k ? { encryptionKey: k } : {}) });
  return new Sessions(db, { scratch: scratchAt(tempDir('pgcrypt-')) });
}

async function refusal(p: Promise<unknown>): Promise<{ kind: string; reason: unknown; message: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as StoreError;
    return { kind: err.kind, reason: err.details?.reason, message: err.message };
  }
  return { kind: 'resolved', reason: undefined, message: '' };
}

describe.skipIf(pgSkip !== null)(`PostgreSQL encryption at rest${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('round trip through the core: create, append, read, update, state, blobs, compaction, fork, trash and restore', async () => {
    const schema = freshSchema('crypt');
    const s = await core(schema);
    expect(s.encrypted).toBe(true);
    const { sessionId: id } = await s.create({ title: `title ${MARK}`, metadata: { m: MARK }, tags: [`tag${MARK}`], blobThreshold: 1024 });
    await s.append(id, [{ kind: 'message', message: { role: 'user', content: `hello ${MARK}` } }]);
    await s.append(id, [{ kind: 'message', message: { role: 'assistant', content: `answer ${MARK}` } }, { kind: 'note', n: MARK }]);
    const big = `${MARK} `.repeat(200);
    await s.append(id, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: big }] } }]); // a blob: a BlobRef position
    await s.update(id, { title: `new ${MARK}` });
    await s.setState(id, 'k', { v: MARK });
    await s.compact(id, { summary: `summary ${MARK}`, throughSeq: 2 });
    const { sessionId: fork } = await s.fork(id);
    await s.delete(fork);
    await s.restore(fork);
    await s.closeAll();

    // Another sidecar with the key sees it all, in plaintext.
    const t = await core(schema);
    const page = await t.read(id, { inline: true });
    const texts = page.records.map((r) => JSON.stringify(r));
    expect(texts[0]).toContain(`summary ${MARK}`);
    expect(texts.some((t) => t.includes(big.trim()))).toBe(true);
    expect(texts.some((t) => t.includes(`"n":"${MARK}"`))).toBe(true);
    expect((await t.read(id, { generation: 0 })).records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]); // the update is record 5
    expect(await t.getState(id, 'k')).toEqual({ v: MARK });
    const listed = (await t.list({})).sessions;
    expect(listed.map((x) => x.title).sort()).toEqual([`new ${MARK}`, `new ${MARK}`]);
    const forked = (await t.read(fork, { inline: true })).records;
    expect(forked.map((r) => r.seq)).toEqual(page.records.map((r) => r.seq));
    expect(JSON.stringify(forked)).toContain(big.trim());
    const blobRef = (await t.read(id, {})).records.map((r) => (r as { message?: { toolCalls?: Array<{ arguments?: { $blob?: string } }> } }).message?.toolCalls?.[0]?.arguments?.$blob).find((x) => x);
    expect((await t.getBlob(id, blobRef!)).bytes.toString('utf8')).toBe(big);
    await t.closeAll();

    // Nothing of it in plaintext anywhere in the schema; the marker holds the key id only.
    const all = await dump(schema);
    expect(all).toContain('ss-sealed:');
    expect(all).not.toContain(MARK);
    expect(all).not.toContain('ZQXJ');
    expect(await sql(`SELECT key_id FROM ${schema}.store_encryption`)).toEqual([{ key_id: key.id }]);
  });

  it('a value moved to another row, seq or column fails to open: Corrupt naming where, never returned', async () => {
    const schema = freshSchema('crypt');
    const s = await core(schema);
    const { sessionId: a } = await s.create({ title: 'a' });
    const { sessionId: b } = await s.create({ title: 'b' });
    await s.append(a, [{ kind: 'note', n: 1 }, { kind: 'note', n: 2 }]);
    await s.append(b, [{ kind: 'note', n: 3 }]);
    await s.setState(a, 'x', 1);
    await s.setState(a, 'y', 2);
    await s.closeAll();
    const fix = async (q: string) => sql(q.replaceAll('S.', `${schema}.`));
    // records: seq 2's text copied over seq 1 of the same session, its crc recomputed (the crc
    // covers the stored text: only the AEAD can tell the value is not seq 1's).
    const { recordCrc, textCrc } = await import('../../../src/backends/postgres/types.js');
    const two = (await fix(`SELECT ts, kind, text FROM S.records WHERE session_id = '${a}' AND seq = 2`) as Array<{ ts: string; kind: string; text: string }>)[0]!;
    const one = (await fix(`SELECT ts, kind FROM S.records WHERE session_id = '${a}' AND seq = 1`) as Array<{ ts: string; kind: string }>)[0]!;
    await sql(`UPDATE ${schema}.records SET text = $1, crc = $2 WHERE session_id = $3 AND seq = 1`, [two.text, recordCrc(a, { seq: 1, ts: one.ts, kind: one.kind, text: two.text }), a]);
    const t = await core(schema);
    const e1 = await refusal(t.read(a, {}));
    expect(e1.kind).toBe('Corrupt');
    expect(e1.message).not.toContain('note');
    // Header text swapped between sessions (crc recomputed over the moved text: the AEAD alone must catch it).
    const rows = await fix(`SELECT session_id, header_text FROM S.sessions WHERE session_id IN ('${a}', '${b}')`) as Array<{ session_id: string; header_text: string }>;
    const other = rows.find((r) => r.session_id === a)!.header_text;
    await sql(`UPDATE ${schema}.sessions SET header_text = $1, header_crc = $2 WHERE session_id = $3`, [other, textCrc(b, other), b]);
    expect((await refusal(t.open(b, 'read'))).kind).toBe('Corrupt');
    // State values swapped between keys.
    const st = await fix(`SELECT key, text FROM S.state_values WHERE session_id = '${a}' ORDER BY key`) as Array<{ key: string; text: string }>;
    await sql(`UPDATE ${schema}.state_values SET text = $1, crc = $2 WHERE session_id = $3 AND key = 'y'`, [st[0]!.text, textCrc(`${a}\ny`, st[0]!.text), a]);
    expect((await refusal(t.getState(a, 'y'))).kind).toBe('Corrupt');
    // A plaintext value in an encrypted store is damage too.
    await sql(`UPDATE ${schema}.state_values SET text = $1, crc = $2 WHERE session_id = $3 AND key = 'x'`, ['{"value":1}\n', textCrc(`${a}\nx`, '{"value":1}\n'), a]);
    expect((await refusal(t.getState(a, 'x'))).kind).toBe('Corrupt');
    await t.closeAll();
  });

  it('a row text moved to another column of its row fails to open: Corrupt naming the column', async () => {
    const schema = freshSchema('crypt');
    const db = await backend({ schema, encryptionKey: key });
    const id = newId();
    const fence = await db.leases.acquire(id);
    await db.create(header(id), recs(1, 1), snap('label'), fence);
    expect((await db.load(id)).snapshot).toMatchObject({ turn: 'label', firstMessage: 'label', lastMessage: 'label' });
    await sql(`UPDATE ${schema}.sessions SET first_message = last_message WHERE session_id = $1`, [id]);
    try {
      await db.load(id);
      expect.unreachable('a moved column opened');
    } catch (e) {
      expect((e as StoreError).kind).toBe('Corrupt');
      expect((e as StoreError).details).toMatchObject({ sessionId: id, column: 'first_message' });
    }
  });

  it('a blob moved under another address fails to open (Corrupt)', async () => {
    const schema = freshSchema('crypt');
    const db = await backend({ schema, encryptionKey: key });
    const { FinalGate } = await import('../../../src/core/gate.js');
    const { SecretSet } = await import('../../../src/domain/secrets/knownSecrets.js');
    const gate = new FinalGate(new SecretSet());
    const one = await db.blobs.put(gate.blob(Buffer.from(`one ${MARK}`)));
    const two = await db.blobs.put(gate.blob(Buffer.from(`two ${MARK}`)));
    expect((await db.blobs.read(one.sha256))!.toString()).toBe(`one ${MARK}`);
    expect(await db.blobs.size(two.sha256)).toBe(two.size);
    await sql(`UPDATE ${schema}.blobs SET bytes = (SELECT bytes FROM ${schema}.blobs WHERE sha256 = $1) WHERE sha256 = $2`, [one.sha256, two.sha256]);
    expect((await refusal(db.blobs.read(two.sha256))).kind).toBe('Corrupt');
    expect(await dump(schema)).not.toContain(MARK);
  });

  it('refusals: no key for an encrypted store, a wrong key, a key for a plaintext store holding sessions; an empty store takes the key', async () => {
    const schema = freshSchema('crypt');
    await (await core(schema)).closeAll();
    expect(await refusal(backend({ schema }))).toMatchObject({ kind: 'KeyMismatch', reason: 'keyRequired' });
    expect(await refusal(backend({ schema, encryptionKey: key2 }))).toMatchObject({ kind: 'KeyMismatch', reason: 'wrongKey' });
    expect(await refusal(backend({ schema, readOnly: true }))).toMatchObject({ kind: 'KeyMismatch', reason: 'keyRequired' });
    expect((await backend({ schema, encryptionKey: key, readOnly: true })).encrypted).toBe(true);

    const plain = freshSchema('crypt');
    const p = await core(plain, null);
    expect(p.encrypted).toBe(false);
    await p.create({ title: 'plain' });
    await p.closeAll();
    const e = await refusal(backend({ schema: plain, encryptionKey: key }));
    expect(e).toMatchObject({ kind: 'KeyMismatch', reason: 'notEncrypted' });
    expect(e.message).toContain('session-sidecar rekey');
    expect(await sql(`SELECT * FROM ${plain}.store_encryption`)).toEqual([]);

    // A rekey left unfinished refuses every open, with and without a key.
    await sql(`UPDATE ${schema}.store_encryption SET rekeying = true, key_id = NULL, rekey_from = $1, rekey_to = $2`, [key.id, key2.id]);
    for (const k of [undefined, key, key2]) {
      expect(await refusal(backend({ schema, ...(k ? { encryptionKey: k } : {}) }))).toMatchObject({ kind: 'KeyMismatch', reason: 'rekeyUnfinished' });
    }
  });

  it('every write open re-reads the marker: a keyless sidecar that found the store empty is refused once a keyed one encrypted it', async () => {
    const schema = freshSchema('crypt');
    const plain = await backend({ schema });
    expect(plain.encrypted).toBe(false);
    const keyed = await backend({ schema, encryptionKey: key });
    const id = newId();
    expect(await kindOf(plain.leases.acquire(id))).toBe('KeyMismatch');
    const fence = await keyed.leases.acquire(id);
    await keyed.create(header(id), recs(1, 1), snap(), fence);
    expect(await kindOf(plain.leases.acquire(newId()))).toBe('KeyMismatch');
    expect(await sql(`SELECT count(*)::int AS n FROM ${schema}.sessions`)).toEqual([{ n: 1 }]);
  });

  it('the second net runs over the plaintext right before sealing (the parameters only see ciphertext): a secret is refused, nothing stored', async () => {
    const schema = freshSchema('crypt');
    const db = await backend({ schema, encryptionKey: key });
    const secret = `sk-${randomBytes(12).toString('hex')}`;
    // The core's gate had no such secret (pass): only the backend's net stands between it and the database.
    db.secondNet((text) => (text.includes(secret) ? 'test' : undefined));
    const id = newId();
    const fence = await db.leases.acquire(id);
    await db.create(header(id), recs(1, 1), snap(), fence);
    expect(await kindOf(db.persist(fence, recs(2, 1, 'message', `x ${secret} y`), snap(), { lastSeq: 1, generation: 0 }))).toBe('SecretRejected');
    expect(await kindOf(db.state.set(fence, pass.stateEntry({ key: 'k', text: `{"value":"${secret}"}\n` })))).toBe('SecretRejected');
    expect(await kindOf(db.blobs.put(pass.blob(Buffer.from(`blob ${secret}`))))).toBe('SecretRejected');
    expect((await db.readRange(id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1]);
    expect(await dump(schema)).not.toContain(secret);
  });
});
