import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexOf, indexSettled, journalOf, lines, message, modeOf, note, store, storeError } from './storeHelpers.js';

describe('create', () => {
  it('lays out a private store: folders 0700, files 0600, a .gitignore of "*"', async () => {
    const root = path.join(tempDir(), 'new', 'store');
    fs.mkdirSync(path.dirname(root), { mode: 0o700 });
    const s = store(root);
    for (const dir of ['', 'sessions', 'index', 'recovery']) expect(modeOf(path.join(root, dir))).toBe(0o700);
    expect(fs.readFileSync(path.join(root, '.gitignore'), 'utf8')).toBe('*\n');
    expect(modeOf(path.join(root, '.gitignore'))).toBe(0o600);

    const { sessionId, createdAt } = await s.create({ title: 'layout' });
    expect(sessionId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/); // a ULID
    expect(createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(modeOf(journalOf(root, sessionId))).toBe(0o600);
    expect(modeOf(path.dirname(journalOf(root, sessionId)))).toBe(0o700);
    expect(fs.readdirSync(path.dirname(journalOf(root, sessionId)))).toEqual(['journal.jsonl']); // no temp file left
    await s.append(sessionId, [note(1)]);
    await s.closeAll();
    expect(modeOf(indexOf(root, sessionId))).toBe(0o600);

    // the journal is exactly one header line, then the record
    const ls = lines(fs.readFileSync(journalOf(root, sessionId)));
    expect(ls).toHaveLength(2);
    expect(JSON.parse((ls[0] as Buffer).toString())).toMatchObject({
      format: 'session-sidecar/journal', version: 1, sessionId, createdAt, title: 'layout', crc: expect.stringMatching(/^[0-9a-f]{8}$/),
    });

    // an existing .gitignore is the user's: left alone
    fs.writeFileSync(path.join(root, '.gitignore'), 'mine\n');
    store(root);
    expect(fs.readFileSync(path.join(root, '.gitignore'), 'utf8')).toBe('mine\n');
  });

  it('keeps a restrictive umask from making the store unusable', async () => {
    const old = process.umask(0o077);
    try {
      const root = path.join(tempDir(), 'store');
      const s = store(root);
      const { sessionId } = await s.create({});
      expect(modeOf(journalOf(root, sessionId))).toBe(0o600);
      await s.closeAll();
      expect((await store(root).open(sessionId, 'write')).lastSeq).toBe(0);
    } finally {
      process.umask(old);
    }
  });

  it('stores the header as given, with only the name of the API key variable', async () => {
    const root = tempDir();
    const secret = `sk-test-${Math.random().toString(36).slice(2)}-do-not-store`;
    process.env.SIDECAR_TEST_API_KEY = secret;
    try {
      let now = Date.parse('2032-02-03T04:05:06.789Z');
      const s = store(root, { clock: () => now++ });
      const header = {
        cwd: '/work/project', title: 'header ☃', systemPrompt: 'be brief',
        llm: { provider: 'openai', model: 'gpt-x', baseUrl: 'https://api.example/v1', apiKeyEnv: 'SIDECAR_TEST_API_KEY' },
        metadata: { tags: ['a', 'b'], nested: { n: 1 } },
      };
      const { sessionId, createdAt } = await s.create(header);
      expect(createdAt).toBe('2032-02-03T04:05:06.789Z');
      await s.append(sessionId, [message('user', 'hi')]);
      await s.closeAll();

      const line = JSON.parse((lines(fs.readFileSync(journalOf(root, sessionId)))[0] as Buffer).toString());
      expect(line.llm).toEqual(header.llm);
      expect(line).toMatchObject({ ...header, sessionId, createdAt });
      for (const [file, b64] of Object.entries(snapshotTree(root))) {
        expect(Buffer.from(b64, 'base64').toString('utf8'), file).not.toContain(secret);
      }
      const opened = await store(root).open(sessionId, 'read');
      expect(opened).toEqual({ ...header, sessionId, createdAt, mode: 'read', lastSeq: 1, secrets: { registered: 1 }, turn: null });
      expect(opened.llm?.apiKeyEnv).toBe('SIDECAR_TEST_API_KEY');
    } finally {
      delete process.env.SIDECAR_TEST_API_KEY;
    }
  });

  it('refuses a header larger than maxRecordBytes without writing anything', async () => {
    const root = tempDir();
    const s = store(root, { maxRecordBytes: 300 });
    const before = snapshotTree(root);
    await storeError(s.create({ systemPrompt: 'x'.repeat(400) }), 'PayloadTooLarge');
    expect(snapshotTree(root)).toEqual(before);
    expect(fs.readdirSync(path.join(root, 'sessions'))).toEqual([]);
  });
});

describe('bad input changes nothing on disk', () => {
  async function openSession(maxRecordBytes?: number) {
    const root = tempDir();
    const s = store(root, maxRecordBytes ? { maxRecordBytes } : {});
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    await s.append(sessionId, [note(2), note(3)]);
    await indexSettled(s);
    return { root, s, sessionId };
  }

  it('PayloadTooLarge: a record over maxRecordBytes, alone or in a batch', async () => {
    const max = 200;
    const { root, s, sessionId } = await openSession(max);
    const before = snapshotTree(root);
    const sized = (bytes: number, ch = 'x') => {
      const base = JSON.stringify({ kind: 'note', text: '' }).length;
      return { kind: 'note', text: ch.repeat(bytes - base) };
    };
    expect(JSON.stringify(sized(max)).length).toBe(max);
    let err = await storeError(s.append(sessionId, [sized(max + 1)]), 'PayloadTooLarge');
    expect(err.details).toMatchObject({ index: 0, maxBytes: max });
    err = await storeError(s.append(sessionId, [note(4), note(5), sized(max + 1), note(6)]), 'PayloadTooLarge');
    expect(err.details.index).toBe(2);
    // counted in UTF-8 bytes, not characters
    const wide = { kind: 'note', text: 'é'.repeat(100) };
    expect(JSON.stringify(wide).length).toBeLessThanOrEqual(max);
    await storeError(s.append(sessionId, [wide]), 'PayloadTooLarge');
    expect(err.message).not.toContain('xxxx');
    await indexSettled(s);
    expect(snapshotTree(root)).toEqual(before);

    // the limit itself is allowed, and the session continues where it was
    expect(await s.append(sessionId, [sized(max)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    await s.closeAll();
  });

  it('Conflict: expectedLastSeq that does not match', async () => {
    const { root, s, sessionId } = await openSession();
    const before = snapshotTree(root);
    for (const expectedLastSeq of [0, 2, 4, 100]) {
      const err = await storeError(s.append(sessionId, [note(9)], { expectedLastSeq }), 'Conflict');
      expect(err.details).toEqual({ expectedLastSeq, lastSeq: 3 });
    }
    // two writers racing on the same expectation: exactly one wins
    const results = await Promise.allSettled([
      s.append(sessionId, [note(4)], { expectedLastSeq: 3 }),
      s.append(sessionId, [note(4)], { expectedLastSeq: 3 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'Conflict', details: { lastSeq: 4 } });
    expect(snapshotTree(root)).not.toEqual(before);
    const mid = fs.readFileSync(journalOf(root, sessionId));
    await storeError(s.append(sessionId, [note(5)], { expectedLastSeq: 3 }), 'Conflict');
    expect(fs.readFileSync(journalOf(root, sessionId)).equals(mid)).toBe(true);
    expect((await s.read(sessionId)).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await s.closeAll();
  });

  it('a record using a reserved member name is refused before anything is written', async () => {
    const { root, s, sessionId } = await openSession();
    const before = snapshotTree(root);
    for (const key of ['seq', 'ts', 'batchEnd', 'crc']) {
      await expect(s.append(sessionId, [note(4), { kind: 'note', [key]: 1 }])).rejects.toThrow(key);
    }
    await indexSettled(s);
    expect(snapshotTree(root)).toEqual(before);
    expect(await s.append(sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    await s.closeAll();
  });
});

describe('create on a failing disk', () => {
  it('a failed create is NotWritten and leaves no session behind', async () => {
    const { nodeFs } = await import('../../../src/durable/fsLayer.js');
    const root = tempDir();
    let fail = false;
    const s = store(root, {
      fs: { ...nodeFs, fsyncSync: (fd) => { if (fail) throw Object.assign(new Error('x'), { code: 'ENOSPC' }); nodeFs.fsyncSync(fd); } },
    });
    fail = true;
    const err = await storeError(s.create({ title: 'x' }), 'NotWritten');
    expect(err.details.errno).toBe('ENOSPC');
    expect((await s.list()).sessions).toEqual([]);
    fail = false;
    const { sessionId } = await s.create({ title: 'y' });
    expect((await s.list()).sessions.map((x) => x.sessionId)).toEqual([sessionId]);
    await s.closeAll();
  });
});

describe('create: a failed sync after the rename (hole 3 of issue 14)', () => {
  it('EIO on the fsync of the session directory is Uncertain: the journal is kept, the session fail-stops in this process, a new process opens it', async () => {
    const { nodeFs } = await import('../../../src/durable/fsLayer.js');
    const root = tempDir();
    let renamed = false;
    let failed = false;
    const s = store(root, {
      fs: {
        ...nodeFs,
        renameSync: (from, to) => { nodeFs.renameSync(from, to); if (to.endsWith('journal.jsonl')) renamed = true; },
        fsyncSync: (fd) => {
          if (renamed && !failed && fs.fstatSync(fd).isDirectory()) { failed = true; throw Object.assign(new Error('x'), { code: 'EIO' }); }
          nodeFs.fsyncSync(fd);
        },
      },
    });
    const err = await storeError(s.create({ title: 'x' }), 'Uncertain');
    expect(failed).toBe(true);
    expect(err.details.errno).toBe('EIO');
    const sessionId = err.details.sessionId as string;
    // the rename may already be durable: the journal is not unlinked behind the client's back
    expect(fs.existsSync(journalOf(root, sessionId))).toBe(true);
    await storeError(s.open(sessionId, 'write'), 'ReadOnly');
    await s.closeAll();
    const next = store(root);
    expect((await next.open(sessionId, 'write')).title).toBe('x');
    await next.closeAll();
  });
});
