import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { oracleLeaks } from '../../secretOracle.js';
import { filesUnder, rejects, sharedDir, storeOn } from './secretsHelpers.js';

/**
 * The leaks an independent review found on write paths other than journal appends (issue 13 §1):
 * each reproduced here through the store's public operations, with the tests' own oracle
 * (secretOracle.ts) deciding whether any byte of the store holds the secret.
 */

const NUMERIC = '564629869386547'; // 15 digits: JSON.parse("5.64629869386547e14") gives it back
const EXPONENT_JSON = '{"n":5.64629869386547e14,"api_key":"zzzzzzzzzzzz"}'; // redaction re-serializes it
const SPACED = 'correct horse battery staple';

const dirs: Array<() => void> = [];
afterEach(() => {
  while (dirs.length > 0) dirs.pop()?.();
});

function fresh(): { root: string; s: FileSessionStore } {
  const { dir, remove } = sharedDir();
  dirs.push(remove);
  return { root: dir, s: storeOn(dir) };
}

/** Every file of the store that holds `secret` in a form the oracle knows, with the form. */
function leaks(root: string, secret: string): string[] {
  return filesUnder(root).flatMap(({ file, bytes }) => oracleLeaks(bytes, secret).map((form) => `${file}: ${form}`));
}

describe('a registered secret rebuilt by redaction never reaches a file', () => {
  it('the oracle sees the digits a re-serialization rebuilds (so the tests below can fail)', () => {
    expect(JSON.stringify(JSON.parse(EXPONENT_JSON))).toContain(NUMERIC);
    expect(oracleLeaks(Buffer.from(JSON.stringify(JSON.parse(EXPONENT_JSON))), NUMERIC)).toContain('raw');
  });

  it('state/set: the value is refused, no state file holds the digits', async () => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [NUMERIC] });
    await rejects(s.setState(sessionId, 'k', { data: EXPONENT_JSON }), 'SecretRejected');
    await s.closeAll();
    expect(leaks(root, NUMERIC)).toEqual([]);
  });

  it('an $attach payload: refused, no blob holds the digits', async () => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [NUMERIC] });
    await rejects(s.append(sessionId, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: { $attach: EXPONENT_JSON } as never }] } }]), 'SecretRejected');
    await s.closeAll();
    expect(leaks(root, NUMERIC)).toEqual([]);
  });

  it('a session/compact summary: refused before the checkpoint line, nothing archived', async () => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [NUMERIC] });
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'hello' } }]);
    await rejects(s.compact(sessionId, { throughSeq: 1, summary: EXPONENT_JSON }), 'SecretRejected');
    expect(await s.history(sessionId)).toEqual([]);
    // The journal is still the one before the compaction: appends go on.
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'still here' } }]);
    await s.closeAll();
    expect(leaks(root, NUMERIC)).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'sessions', sessionId))).toEqual(['journal.jsonl']);
  });

  it('a batch with one request refused at the final check still commits the others (the writer checks each request)', async () => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [NUMERIC] });
    const bad = { kind: 'event', name: 'x', data: EXPONENT_JSON };
    const results = await Promise.allSettled([
      s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'a' } }]),
      s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'b' } }]),
      s.append(sessionId, [bad]),
      s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'c' } }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((results[2] as PromiseRejectedResult).reason as { kind: string }).kind).toBe('SecretRejected');
    expect((await s.read(sessionId)).records.map((r) => (r.message as { content: string }).content)).toEqual(['a', 'b', 'c']);
    await s.closeAll();
    expect(leaks(root, NUMERIC)).toEqual([]);
  });
});

describe('index summaries are derived text: checked like every other write', () => {
  it.each([
    ['a newline where the secret has a space', 'correct\nhorse battery staple'],
    ['a tab where the secret has a space', 'correct horse\tbattery staple'],
    ['several blanks', 'correct  horse battery   staple'],
  ])('%s: a lossless form of the secret, refused whole, nothing stored', async (_name, content) => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [SPACED] });
    await rejects(s.append(sessionId, [{ kind: 'message', message: { role: 'user', content } }]), 'SecretRejected');
    const page = await s.list();
    await s.closeAll();
    expect(leaks(root, SPACED)).toEqual([]);
    expect(JSON.stringify(page)).not.toContain(SPACED);
    expect(fs.readFileSync(path.join(root, 'sessions', sessionId, 'journal.jsonl'), 'utf8')).not.toContain('horse');
  });

  it('text parts joined with a space do not rebuild a secret split across two parts', async () => {
    const { root, s } = fresh();
    const { sessionId } = await s.create({}, { values: [SPACED] });
    const content = [{ type: 'text', text: 'correct horse' }, { type: 'text', text: 'battery staple' }];
    await s.append(sessionId, [{ kind: 'message', message: { role: 'assistant', content } }]);
    await s.list();
    await s.closeAll();
    // A reader in a new instance rebuilds the entry from the journal: checked there too.
    fs.rmSync(path.join(root, 'index', `${sessionId}.json`));
    const again = storeOn(root);
    await again.create({}, { values: [SPACED] }); // the secret is registered in this process again
    expect(JSON.stringify(await again.list())).not.toContain(SPACED);
    await again.closeAll();
    expect(leaks(root, SPACED)).toEqual([]);
  });
});

describe('bytes written before a secret was registered are not copied after', () => {
  const SECRET = 'tk-8f3a9c2e71d04b5a';

  async function sessionWithTitle(): Promise<{ root: string; s: FileSessionStore; sessionId: string }> {
    const { root, s } = fresh();
    const { sessionId } = await s.create({ title: `deploy with ${SECRET}` });
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'hello' } }]);
    await s.create({}, { values: [SECRET] }); // registered now: it guards every session of the process
    return { root, s, sessionId };
  }

  it('session/compact is refused like session/fork: no archive, no new journal', async () => {
    const { root, s, sessionId } = await sessionWithTitle();
    const before = leaks(root, SECRET);
    await rejects(s.fork(sessionId), 'SecretRejected');
    await rejects(s.compact(sessionId, { throughSeq: 1, summary: 'greeting' }), 'SecretRejected');
    expect(await s.history(sessionId)).toEqual([]);
    await s.closeAll();
    expect(leaks(root, SECRET).filter((l) => !l.startsWith('index/'))).toEqual(before.filter((l) => !l.startsWith('index/')));
    expect(filesUnder(root).filter((f) => f.file.startsWith('history/'))).toEqual([]);
  });

  it('the index entry rewritten after registration leaves the title out', async () => {
    const { root, s, sessionId } = await sessionWithTitle();
    await s.append(sessionId, [{ kind: 'message', message: { role: 'user', content: 'more' } }]);
    await s.closeAll();
    expect(oracleLeaks(fs.readFileSync(path.join(root, 'index', `${sessionId}.json`)), SECRET)).toEqual([]);
  });
});
