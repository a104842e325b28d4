import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyFormatError, parseKey, StoreKey } from '../../../src/durable/storeKey.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { attachKey } from '../../../src/backends/file/journal/cipher.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { readIndexEntry } from '../../../src/backends/file/sessionIndex.js';
import { verifyStore } from '../../../src/backends/file/verify/index.js';
import { tempDir } from '../../helpers.js';
import { indexOf, journalOf, lines, message, note, sealed, store, storeError, toolCall, unsealed } from './storeHelpers.js';

/**
 * Encryption at rest of the file store against real files: damage is still told apart from a
 * wrong key (a flipped byte fails the CRC: Corrupt or a torn tail; a line with a good CRC that
 * does not authenticate — moved between seqs or sessions — is Corrupt and never returned; a
 * key that is not the store's is KeyMismatch), and a torn tail is still repaired as one.
 */

const key = () => new StoreKey(randomBytes(32));

async function fixture(k = key()) {
  const root = tempDir('sidecar-enc-');
  const s = store(root, { encryptionKey: k });
  const a = (await s.create({ title: 'a' })).sessionId;
  const b = (await s.create({ title: 'b' })).sessionId;
  await s.append(a, [message('user', 'one')]);
  await s.append(a, [note(2)]);
  await s.append(a, [note(3)]);
  await s.append(a, [note(4)]);
  await s.append(b, [message('user', 'other one')]);
  await s.append(b, [note(2)]);
  await s.closeAll();
  return { root, k, a, b, journal: journalOf(root, a), original: fs.readFileSync(journalOf(root, a)) };
}

/** A line re-sealed with a correct CRC after `edit` changed its text (an attacker who knows the format). */
function withCrc(line: Buffer, edit: (text: string) => string): Buffer {
  return sealed(edit(unsealed(line)));
}

const encOf = (line: Buffer) => /"enc":"([^"]+)"/.exec(line.toString())?.[1] as string;

async function expectCorrupt(root: string, id: string, k: StoreKey, reason: RegExp) {
  fs.rmSync(indexOf(root, id), { force: true });
  const s = store(root, { encryptionKey: k });
  for (const attempt of [() => s.open(id, 'read'), () => s.read(id), () => s.open(id, 'write')]) {
    const err = await storeError(attempt, 'Corrupt');
    expect(err.message).toMatch(reason);
  }
  await s.closeAll();
}

describe('file store encryption at rest', () => {
  it('verify with the key reports a sealed blob whose bytes were changed as damaged (its record naming it)', async () => {
    const root = tempDir('sidecar-enc-');
    const k = key();
    const s = store(root, { encryptionKey: k });
    const { sessionId } = await s.create({ title: 'blob' });
    await s.append(sessionId, [toolCall({ $attach: 'x'.repeat(5000) })]);
    await s.closeAll();
    const fan = path.join(root, 'blobs', 'sha256');
    const blob = path.join(fan, fs.readdirSync(fan)[0] as string);
    const file = path.join(blob, fs.readdirSync(blob)[0] as string);
    expect((await verifyStore(root, { encryptionKey: k })).sessions.flatMap((x) => x.findings).filter((f) => f.severity === 'error')).toEqual([]);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 20] = (bytes[bytes.length - 20] as number) ^ 1; // inside the sealed text: it no longer authenticates
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, bytes);
    const report = await verifyStore(root, { encryptionKey: k });
    const messages = report.sessions.flatMap((x) => x.findings).map((f) => f.message);
    expect(messages.some((m) => /is damaged: its sha256 does not match its name/.test(m)), JSON.stringify(report.sessions)).toBe(true);
  });

  it('round trip; the store opened with another key, or without one, is KeyMismatch (never Corrupt)', async () => {
    const f = await fixture();
    const s = store(f.root, { encryptionKey: f.k });
    expect((await s.read(f.a)).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(s.encrypted).toBe(true);
    await s.closeAll();
    for (const make of [() => store(f.root, { encryptionKey: key() }), () => store(f.root), () => store(f.root, { readOnly: true })]) {
      const err = await storeError(async () => make(), 'KeyMismatch');
      expect(err.message).not.toMatch(/damaged|Corrupt/);
    }
  });

  it('a flipped byte in a sealed line fails its CRC: Corrupt in the middle, a torn tail at the end', async () => {
    const f = await fixture();
    const ls = lines(f.original);
    const flipped = (lineNo: number) => {
      const out = Buffer.from(f.original);
      const at = ls.slice(0, lineNo - 1).reduce((n, l) => n + l.length, 0) + (ls[lineNo - 1] as Buffer).indexOf('"enc":"') + 12;
      out[at] = (out[at] as number) ^ 0x01;
      return out;
    };
    fs.writeFileSync(f.journal, flipped(3));
    await expectCorrupt(f.root, f.a, f.k, /line 3 is damaged: checksum mismatch, followed by valid line 4/);
    // The last line: a torn tail — cut to recovery/ by a write open, never returned.
    fs.writeFileSync(f.journal, flipped(5));
    fs.rmSync(indexOf(f.root, f.a), { force: true });
    const s = store(f.root, { encryptionKey: f.k });
    const opened = await s.open(f.a, 'write');
    expect(opened.lastSeq).toBe(3);
    expect(opened.recovered).toMatchObject({ bytes: (ls[4] as Buffer).length });
    await s.append(f.a, [note(40)]);
    expect((await s.read(f.a)).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await s.closeAll();
  });

  it('a torn tail of a sealed journal (a cut last line) is repaired as a torn tail', async () => {
    const f = await fixture();
    fs.writeFileSync(f.journal, f.original.subarray(0, f.original.length - 20));
    fs.rmSync(indexOf(f.root, f.a), { force: true });
    const s = store(f.root, { encryptionKey: f.k });
    const opened = await s.open(f.a, 'write');
    expect(opened.lastSeq).toBe(3);
    expect(opened.recovered?.evidence).toMatch(/^recovery\//);
    expect((await s.read(f.a)).records.map((r) => r.seq)).toEqual([1, 2, 3]);
    await s.closeAll();
  });

  it('lines swapped between seqs, moved from another session, or edited with their CRC fixed do not authenticate: Corrupt, never returned', async () => {
    const f = await fixture();
    const ls = lines(f.original);
    // seq 2 and seq 3 swap their sealed bytes (each line keeps its own seq and a correct CRC)
    const two = ls[2] as Buffer;
    const three = ls[3] as Buffer;
    const swapped = [...ls];
    swapped[2] = withCrc(two, (t) => t.replace(encOf(two), encOf(three)));
    swapped[3] = withCrc(three, (t) => t.replace(encOf(three), encOf(two)));
    fs.writeFileSync(f.journal, Buffer.concat(swapped));
    await expectCorrupt(f.root, f.a, f.k, /line 3 is damaged: line does not authenticate/);

    // seq 1 of session b in place of seq 1 of session a
    const other = lines(fs.readFileSync(journalOf(f.root, f.b)));
    const moved = [...ls];
    moved[1] = withCrc(ls[1] as Buffer, (t) => t.replace(encOf(ls[1] as Buffer), encOf(other[1] as Buffer)));
    fs.writeFileSync(f.journal, Buffer.concat(moved));
    await expectCorrupt(f.root, f.a, f.k, /line 2 is damaged: line does not authenticate/);

    // the last line's seq envelope edited (a record moved to another seq), CRC fixed: not a torn tail
    const renumbered = [...ls];
    renumbered[4] = withCrc(ls[4] as Buffer, (t) => t.replace('"ts":', '"ts":').replace(/"ts":"[^"]+"/, '"ts":"2000-01-01T00:00:00.000Z"'));
    fs.writeFileSync(f.journal, Buffer.concat(renumbered));
    await expectCorrupt(f.root, f.a, f.k, /line 5 is damaged: line does not authenticate/);

    // a plaintext line slipped into a sealed journal
    const plain = [...ls];
    plain[4] = sealed('{"seq":4,"ts":"2026-01-01T00:00:00.000Z","kind":"note","i":4}');
    fs.writeFileSync(f.journal, Buffer.concat(plain));
    await expectCorrupt(f.root, f.a, f.k, /line 5 is damaged: a plaintext line in an encrypted journal/);

    // the header of session b (its own session id) over session a's: names another session;
    // session a's sealed header bytes under session b's id: does not authenticate
    const header = [...ls];
    header[0] = withCrc(ls[0] as Buffer, (t) => t.replace(encOf(ls[0] as Buffer), encOf(other[0] as Buffer)));
    fs.writeFileSync(f.journal, Buffer.concat(header));
    await expectCorrupt(f.root, f.a, f.k, /line 1 is damaged: header does not authenticate \(altered, or moved from another session\)/);
  });

  it('index entries and state values are sealed and bound to their identity', async () => {
    const f = await fixture();
    const s = store(f.root, { encryptionKey: f.k });
    await s.open(f.a, 'write');
    await s.open(f.b, 'write');
    await s.setState(f.a, 'k', { v: 'state of a' });
    await s.setState(f.b, 'k', { v: 'state of b' });
    await s.closeAll();
    for (const file of [indexOf(f.root, f.a), path.join(f.root, 'sessions', f.a, 'state', 'k.json')]) {
      expect(fs.readFileSync(file, 'utf8')).toMatch(/^\{"sealed":"session-sidecar\/sealed","key":"[0-9a-f]{32}","enc":"[A-Za-z0-9+/=]+"\}\n$/);
    }
    // b's state value copied over a's: it does not authenticate as a's
    fs.copyFileSync(path.join(f.root, 'sessions', f.b, 'state', 'k.json'), path.join(f.root, 'sessions', f.a, 'state', 'k.json'));
    const t = store(f.root, { encryptionKey: f.k });
    await t.open(f.a, 'read');
    await storeError(t.getState(f.a, 'k'), 'Corrupt');
    await t.closeAll();
  });

  it('the final gate runs over the plaintext before sealing: an index summary that rebuilds a registered secret is sealed without it', async () => {
    const k = key();
    const root = tempDir('sidecar-enc-');
    const spaced = 'correct horse battery staple';
    const s = store(root, { encryptionKey: k });
    const { sessionId } = await s.create({}, { values: [spaced] });
    // Two text parts: each is stored as sent; the summary joins them with a blank (a whitespace
    // variant of the secret would be refused outright: a lossless form of it).
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'correct horse' }, { type: 'text', text: 'battery staple' }] } }]);
    await s.list();
    await s.closeAll();
    const fsl = { ...nodeFs };
    attachKey(fsl, { key: k, gate: () => {} });
    const entry = readIndexEntry(fsl, new StoreLayout(root), sessionId);
    expect(entry?.lastSeq).toBe(1); // written, sealed, opened
    expect(entry?.firstMessage).toBeUndefined();
    expect(JSON.stringify(entry)).not.toContain(spaced);
  });

  it('a plaintext store keeps records with a member named enc (only a line without kind is a sealed one)', async () => {
    const root = tempDir('sidecar-plain-');
    const s = store(root);
    const { sessionId } = await s.create({ title: 'plain' });
    await s.append(sessionId, [note(1, { enc: 'not a seal' })]);
    await s.closeAll();
    fs.rmSync(indexOf(root, sessionId));
    const t = store(root);
    expect((await t.read(sessionId)).records).toMatchObject([{ seq: 1, kind: 'note', enc: 'not a seal' }]);
    await t.closeAll();
  });

  it('a key is canonical base64 of 32 bytes; its id is a check value, not the key; it never shows in JSON or inspection', async () => {
    const bytes = randomBytes(32);
    const text = bytes.toString('base64');
    const k = parseKey(`  ${text}\n`);
    expect(k.id).toMatch(/^[0-9a-f]{32}$/);
    expect(k.id).not.toContain(bytes.toString('hex').slice(0, 8));
    const last = text.at(-2) as string; // the last data character: 4 of its 6 bits are the key's, 2 must be zero
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const stray = text.slice(0, -2) + alphabet[(alphabet.indexOf(last) ^ 1)] + '=';
    expect(Buffer.from(stray, 'base64')).toEqual(bytes); // the same bytes, another text
    expect(() => parseKey(stray)).toThrow(KeyFormatError);
    expect(() => parseKey(randomBytes(31).toString('base64'))).toThrow(/31 bytes/);
    const { inspect } = await import('node:util');
    for (const shown of [JSON.stringify({ k }), inspect(k, { showHidden: true, depth: 5 })]) {
      expect(shown).not.toContain(text);
      expect(shown).not.toContain(bytes.toString('hex'));
    }
  });
});
