import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreError } from '../../../src/domain/errors.js';
import { checkBytes, checkedByGate, gateFs, ungated } from '../../../src/domain/secrets/finalGate.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { tempDir } from '../../helpers.js';
import { oracleForms } from '../../secretOracle.js';
import { journalOf } from '../../backends/file/storeHelpers.js';
import { storeOn } from './secretsHelpers.js';

/**
 * The final gate (src/domain/secrets/finalGate.ts) is the one check every byte the store writes
 * passes. These tests prove (1) it refuses what it must, tested directly; (2) no write of the
 * store bypasses it: statically (no other write call in the store's sources) and dynamically
 * (a layer under the gate sees every write of every operation and fails on one the gate did not
 * check); (3) the journal writer's own per-request check, which keeps one refused request from
 * failing the others of its group commit.
 */

const SECRET = 'gate-secret-7f3a9c2e71d0';

function setOf(...values: string[]): SecretSet {
  const set = new SecretSet();
  for (const v of values) set.add(v);
  return set;
}

describe('the gate, tested directly', () => {
  it('refuses every encoded form the oracle computes, inside surrounding bytes', () => {
    const set = setOf(SECRET);
    for (const { form, name } of oracleForms(SECRET).filter((f) => !f.name.startsWith('utf16') && !f.name.startsWith('html'))) {
      const bytes = Buffer.from(`{"seq":1,"x":"abc${form}def"}\n`);
      expect(() => checkBytes(set, bytes), name).toThrow(StoreError);
    }
  });

  it('passes bytes without the secret, and anything when no secret is registered', () => {
    expect(() => checkBytes(setOf(SECRET), Buffer.from('{"seq":1,"x":"gate-secret-7f3a9c2e71d"}\n'))).not.toThrow();
    expect(() => checkBytes(new SecretSet(), Buffer.from(SECRET))).not.toThrow();
  });

  it('a gated layer writes nothing when it refuses; ungated() is the layer below', () => {
    const dir = tempDir();
    const file = path.join(dir, 'f');
    const fd = fs.openSync(file, 'wx', 0o600);
    const gated = gateFs(nodeFs, setOf(SECRET));
    const bad = Buffer.from(`x${SECRET}x`);
    expect(() => gated.writeSync(fd, bad, 0, bad.length, 0)).toThrow(/registered secret/);
    expect(fs.readFileSync(file).length).toBe(0);
    expect(ungated(gated)).toBe(nodeFs);
    fs.closeSync(fd);
  });
});

describe('no write of the store bypasses the gate', () => {
  it('statically: only the FsLayer seam calls node:fs write functions in the store (src/backends, src/domain, src/scratch, src/durable)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.endsWith(path.join('durable', 'fsLayer.ts'))) {
          const text = fs.readFileSync(p, 'utf8');
          const bad = /\bfs\.(?:write|writeSync|writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|copyFile|copyFileSync|cp|cpSync|writev|writevSync)\b|from ['"](?:write-file-atomic|fs-extra|graceful-fs)['"]|\bpromises\b.*\bwrite/.exec(text);
          if (bad) offenders.push(`${path.relative(process.cwd(), p)}: ${bad[0]}`);
        }
      }
    };
    for (const dir of ['src/backends', 'src/domain', 'src/scratch', 'src/durable']) walk(path.resolve(dir));
    expect(offenders).toEqual([]);
  });

  it('dynamically: every write of every operation was checked by the gate (recovery evidence aside)', async () => {
    const root = tempDir();
    const paths = new Map<number, string>();
    const unchecked: string[] = [];
    const written = new Set<string>();
    const recorder: FsLayer = {
      ...nodeFs,
      openSync(p, flags, mode) {
        const fd = nodeFs.openSync(p, flags, mode);
        paths.set(fd, path.relative(root, p));
        return fd;
      },
      writeSync(fd, buf, offset, length, position) {
        const file = paths.get(fd) ?? '?';
        written.add(file.split(path.sep)[0] as string);
        if (!checkedByGate.has(buf) && !file.startsWith('recovery')) unchecked.push(file);
        return nodeFs.writeSync(fd, buf, offset, length, position);
      },
    };
    const s = storeOn(root, { fs: recorder, leases: true });
    const { sessionId } = await s.create({ title: 'all write paths', blobThreshold: 1024 }, { values: [SECRET] });
    await s.append(sessionId, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: 'x'.repeat(2000) }] } }]);
    await s.append(sessionId, [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c2', name: 'edit', arguments: { $attach: 'attached bytes' } as never }] } }]);
    await s.setState(sessionId, 'k', { v: 1 });
    await s.allocateScratch(sessionId, 'r1');
    await s.compact(sessionId, { throughSeq: 1, summary: 'first message' });
    const { sessionId: forked } = await s.fork(sessionId);
    await s.close(forked);
    await s.delete(forked);
    await s.restore(forked);
    await s.close(sessionId);
    // A torn tail: its repair writes recovery evidence (ungated by design) and truncates.
    fs.appendFileSync(journalOf(root, sessionId), '{"seq":9,"torn');
    await s.open(sessionId, 'write');
    await s.list();
    await s.closeAll();
    expect(unchecked).toEqual([]);
    for (const top of ['sessions', 'index', 'blobs', 'history', 'recovery']) expect([...written], top).toContain(top);
  });
});

describe('the check of each request of a batch', () => {
  it('refuses the one request whose bytes hold a secret and commits the others of the batch', async () => {
    const root = tempDir();
    const s = storeOn(root, { leases: false });
    const { sessionId } = await s.create({}, { values: [SECRET] });
    const results = await Promise.allSettled([
      s.append(sessionId, [{ kind: 'note', i: 1 }]),
      s.append(sessionId, [{ kind: 'note', i: 2 }]),
      s.append(sessionId, [{ kind: 'note', x: Buffer.from(SECRET).toString('base64') }]),
      s.append(sessionId, [{ kind: 'note', i: 3 }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((results[2] as PromiseRejectedResult).reason as StoreError).kind).toBe('SecretRejected');
    await s.closeAll();
    const text = fs.readFileSync(journalOf(root, sessionId), 'utf8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(4); // the header and three records
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64').slice(4, 20));
  });
});
