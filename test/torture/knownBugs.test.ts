import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { type FsLayer, nodeFs } from '../../src/durable/fsLayer.js';
import { StoreError } from '../../src/domain/errors.js';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import { tempDir } from '../helpers.js';

/**
 * Bugs the torture scenarios found in src/, each as a minimal reproduction. All eight were fixed in
 * src/ since (commits e6db2e4, 88ad910 and 92b5d84): these are regression tests now, and the
 * comments' "before the fix" / "then" notes say what each one caught. The SIGKILL and power-loss
 * workloads pipeline allocations behind client-chosen toolStarts and deletes behind sets of the
 * same key again, so they would catch bugs 7 and 8 too.
 */

const eio = (code = 'EIO') => Object.assign(new Error(`injected ${code}`), { code });

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => undefined, (e: unknown) => e);
}

describe('known bugs found by the torture scenarios', () => {
  // BUG 1 (EIO torture; fixed). A compaction queued behind an append whose fdatasync fails still runs:
  // JournalWriter.runExclusive checks the fence but not `stopped`, so after the Uncertain the
  // fail-stopped writer archives the journal, writes a new one and renames it in — a write after
  // a failed sync, which STORAGE.md forbids ("fail-stopped: read-only in this process for good").
  // When the failed sync kept its bytes the compaction is refused, but with Conflict/journalChanged
  // instead of ReadOnly/failStop. Expected: ReadOnly with reason failStop, nothing written.
  it('BUG 1: a compaction queued behind a failed fdatasync is refused ReadOnly/failStop and writes nothing', async () => {
    const root = tempDir();
    let failNext = false;
    let lastWrite = 0;
    const layer: FsLayer = {
      ...nodeFs,
      writeSync: (fd, buf, off, len, pos) => (lastWrite = nodeFs.writeSync(fd, buf, off, len, pos)),
      fdatasync: async (fd) => {
        if (!failNext) return nodeFs.fdatasync(fd);
        failNext = false;
        nodeFs.ftruncateSync(fd, fs.fstatSync(fd).size - lastWrite); // the kernel dropped the unsynced pages
        throw eio();
      },
    };
    const s = new FileSessionStore(root, { fs: layer, leases: false });
    const { sessionId } = await s.create({});
    for (let i = 0; i < 3; i++) await s.append(sessionId, [{ kind: 'event', type: 't', payload: i }]);
    failNext = true;
    const append = s.append(sessionId, [{ kind: 'event', type: 't', payload: 3 }]);
    const compact = s.compact(sessionId, { summary: 'sum', throughSeq: 2 }); // queued behind the append
    expect(((await errorOf(append)) as StoreError).kind).toBe('Uncertain');
    const err = await errorOf(compact);
    await s.closeAll();
    expect(fs.existsSync(path.join(root, 'history', sessionId))).toBe(false); // before the fix: history/<id>/0.jsonl, a new journal
    expect(err).toBeInstanceOf(StoreError); // before the fix: the compaction succeeded
    expect((err as StoreError).kind).toBe('ReadOnly');
    expect((err as StoreError).details.reason).toBe('failStop');
  });

  // BUG 2 (ENOSPC torture; fixed). On a full disk, session/create and session/open (write) answer
  // -32603 Internal instead of NotWritten: the writer lease's holder file
  // (locks/<id>.lock.holder.json, SessionLease.acquire; then fsl.writeFileSync, now a temp file + rename) fails with ENOSPC,
  // which nothing maps. Worse, the lock directory it had just taken (proper-lockfile) is never
  // released: the session then answers SessionLocked (with no holder) to every writable open —
  // in this process and in every other one — for as long as this process lives, also after space
  // is freed. (A 0-byte holder file is left behind, and the lock directory is created 0755.)
  it('BUG 2: a writable open on a full disk answers NotWritten and leaves the session openable once space is back', async () => {
    const root = tempDir();
    const { sessionId } = await (async () => {
      const s = new FileSessionStore(root, {});
      const created = await s.create({});
      await s.closeAll();
      return created;
    })();
    let full = true;
    const holderFds = new Set<number>();
    const layer: FsLayer = {
      ...nodeFs,
      openSync: (p, flags, mode) => {
        const fd = nodeFs.openSync(p, flags, mode);
        if (p.includes('.holder.json.')) holderFds.add(fd); // the holder record's temp file
        return fd;
      },
      writeSync: (fd, buf, offset, length, position) => {
        if (full && holderFds.has(fd)) throw eio('ENOSPC'); // created, then no space for its bytes
        return nodeFs.writeSync(fd, buf, offset, length, position);
      },
    };
    const s = new FileSessionStore(root, { fs: layer });
    const first = await errorOf(s.open(sessionId, 'write'));
    full = false;
    const second = await errorOf(s.open(sessionId, 'write'));
    await s.closeAll();
    expect(first).toBeInstanceOf(StoreError); // before the fix: a raw Error ENOSPC (Internal over the protocol)
    expect((first as StoreError).kind).toBe('NotWritten');
    expect(second).toBeUndefined(); // before the fix: SessionLocked, holder unknown, until this process exited
  });

  // BUG 3 (fuzz torture; fixed). A `$/cancelRequest` notification without a usable `params.id` (no
  // params, `{}`, `[]`, `{"id": null}`) crashes the sidecar: vscode-jsonrpc's cancellation
  // handler calls createRequestQueueKey(undefined) → TypeError, uncaught, exit 1, a stack trace
  // on stderr — before or after initialize, losing the answers of every request in flight.
  // protocol/README.md 3.4: cancelling an unknown id does nothing; 2.4: a malformed notification
  // is answered with an error (id null) and the connection carries on.
  it('BUG 3: a $/cancelRequest without an id neither crashes nor stops the sidecar', async () => {
    for (const params of [undefined, {}, [], { id: null }]) {
      const c = await SidecarClient.start({ store: tempDir(), keepStdout: true });
      c.notify('$/cancelRequest', params);
      const listed = await c.list().then(() => 'answered', (e: Error) => e.message);
      expect(listed, `params ${JSON.stringify(params)}: ${c.stderr.split('\n').find((l) => l.includes('Error')) ?? ''}`).toBe('answered');
      expect((await c.shutdown()).code).toBe(0);
    }
  });

  // BUG 4 (SIGKILL torture; fixed). After compactions, a stale index entry can vouch for the wrong
  // journal: a valid session then answers Corrupt to every read and compaction.
  // The index is written after a commit without sync, debounced; a kill (or power cut) can leave
  // the entry written at create time: {ino, bytes: header length, records: 0, firstSeq: 1,
  // generation: 0}. Two compactions later the active journal is a new file — and on ext4 it may
  // well get the first journal's inode number again (freed by the first compaction's rename).
  // trustHint then accepts the entry (the inode matches; a zero-record entry is checked only
  // against the header line, which compaction copies byte for byte) and the open takes
  // firstSeq 1 and generation 0 from it. The open itself succeeds (the checkpoint is accepted as
  // the first line), but every session/read and session/compact answers Corrupt ("journal line 2
  // is damaged: seq 16 where 1 was expected") for a journal that is perfectly valid. Nothing is
  // lost: with index/<id>.json deleted, a new process reads it all. Seen in
  // `npm run torture -- --runs 1000` (kept store: one inode number for the journal at create
  // and after two compactions). Here the inode reuse is simulated by giving the stale entry the
  // current journal's inode number.
  it('BUG 4: a stale index entry from before two compactions (inode number reused) misleads neither reads nor the next compaction', async () => {
    const root = tempDir();
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId } = await s.create({ title: 'reuse' });
    await s.closeAll();
    const indexFile = path.join(root, 'index', `${sessionId}.json`);
    const stale = JSON.parse(fs.readFileSync(indexFile, 'utf8')) as Record<string, unknown>;
    expect(stale.records).toBe(0);
    const t = new FileSessionStore(root, { leases: false });
    await t.open(sessionId, 'write');
    for (let i = 1; i <= 6; i++) await t.append(sessionId, [{ kind: 'event', type: 't', payload: i }]);
    await t.compact(sessionId, { summary: 'one', throughSeq: 3 });
    await t.compact(sessionId, { summary: 'two', throughSeq: 5 });
    await t.closeAll();
    const journal = path.join(root, 'sessions', sessionId, 'journal.jsonl');
    const archive0 = path.join(root, 'history', sessionId, '0.jsonl');
    const archived = fs.readFileSync(archive0);
    // the index writes after the compactions never landed; the new journal got the old inode number
    fs.writeFileSync(indexFile, `${JSON.stringify({ ...stale, ino: fs.statSync(journal).ino })}\n`, { mode: 0o600 });
    const fresh = new FileSessionStore(root, { leases: false });
    expect((await fresh.open(sessionId, 'write')).lastSeq).toBe(6);
    const read = await errorOf(fresh.read(sessionId, { afterSeq: 0 }));
    const compacted = await errorOf(fresh.compact(sessionId, { summary: 'three', throughSeq: 6 }));
    await fresh.closeAll();
    expect(fs.readFileSync(archive0).equals(archived)).toBe(true);
    expect(read).toBeUndefined(); // before the fix: Corrupt, "journal line 2 is damaged: seq 5 where 1 was expected"
    expect(compacted).toBeUndefined(); // before the fix: Corrupt too
  });

  // BUG 5 (SIGKILL torture, a kill during session/open; fixed). SessionLease.acquire takes the lock with
  // proper-lockfile's mkdir and only then writes the holder record (locks/<id>.lock.holder.json),
  // in place (open with O_TRUNC, then write). A process killed in between leaves the lock with a
  // missing or empty holder record: the next process cannot see that the holder is dead, and
  // every writable open answers SessionLocked — without the documented data.holder — until the
  // lock goes stale (10 s), where protocol/README.md 3.6 promises a takeover at once when the
  // holder's pid is gone. Seen in `npm run torture -- --runs 3000` (kept store: a 0-byte holder
  // file next to the lock directory). Here the dead acquirer's leftovers are made by hand.
  it('BUG 5: a lease whose acquirer was killed before writing its holder record is taken over at once', async () => {
    const root = tempDir();
    const s = new FileSessionStore(root, {});
    const { sessionId } = await s.create({});
    await s.closeAll();
    const lockDir = path.join(root, 'locks', `${sessionId}.lock`);
    fs.mkdirSync(lockDir);
    fs.writeFileSync(`${lockDir}.holder.json`, '', { mode: 0o600 });
    const past = new Date(Date.now() - 2000);
    fs.utimesSync(lockDir, past, past); // killed 2 s ago: nobody refreshes the lock any more
    const t = new FileSessionStore(root, {});
    const err = await errorOf(t.open(sessionId, 'write'));
    await t.closeAll();
    expect(err).toBeUndefined(); // before the fix: SessionLocked with no data.holder, until 10 s had passed
  });

  // BUG 6 (fuzz torture, after the fix of bug 3; fixed, then superseded by issue 15). A
  // $/cancelRequest without a usable id was answered -32602 with id null but without `data`.
  // Since issue 15 a notification is never answered, even a malformed one (JSON-RPC 2.0; Neovim's
  // client treats an id-null answer as a broken server): it is logged to stderr, and the server
  // goes on serving. Expected: no id-null frame at all, one stderr line, a clean shutdown.
  it('BUG 6: a $/cancelRequest without an id is never answered, only logged, and the server goes on', async () => {
    const c = await SidecarClient.start({ store: tempDir(), keepStdout: true });
    c.notify('$/cancelRequest', {});
    await c.list();
    const { code } = await c.shutdown();
    expect(code).toBe(0);
    const answers = Buffer.concat(c.stdout).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(answers.filter((a) => a.id === null)).toEqual([]);
    expect(c.stderr).toMatch(/ignored a malformed notification/);
  });

  // BUG 7 (SIGKILL torture, runtime records; fixed in 92b5d84). tool/allocateScratch does not take effect in
  // arrival order: pipelined behind a session/append whose toolStart names a client-chosen toolSeq
  // ("larger than every toolSeq so far", protocol/README.md 15.1), it hands out that same toolSeq.
  // RuntimeStore.allocateScratch runs at once and computes max(ToolRuns.issued, the COMMITTED
  // position's runtime.toolSeq) + 1; the append queued ahead of it has not committed yet, so its
  // toolSeq is not counted. The allocation then cannot be used: its toolStart is refused -32602
  // ("toolSeq 1 was not allocated by tool/allocateScratch or is already used"). Expected (3.6:
  // per session, requests take effect in arrival order; 15.2: it reserves the NEXT toolSeq):
  // toolSeq 2. Same over the binary (the torture saw "answered toolSeq 7, not above 9").
  it('BUG 7: tool/allocateScratch pipelined behind a toolStart with a client-chosen toolSeq hands out a toolSeq above it', async () => {
    const root = tempDir();
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId } = await s.create({});
    const started = s.append(sessionId, [{ kind: 'toolStart', toolSeq: 1, requestId: 'r1', tool: 'bash' }]);
    const allocated = s.allocateScratch(sessionId, 'r2');
    await started;
    const { toolSeq } = await allocated;
    const used = await errorOf(s.append(sessionId, [{ kind: 'toolStart', toolSeq, requestId: 'r2', tool: 'bash' }]));
    await s.closeAll();
    expect(toolSeq).toBe(2); // before the fix: 1, the toolSeq of the toolStart sent before it
    expect(used).toBeUndefined(); // before the fix: -32602, the allocation is unusable
  });

  // BUG 8 (SIGKILL torture, state values; fixed in 92b5d84). state/delete does not take effect in arrival
  // order after a pipelined state/set of the same key: setStateValue awaits write-file-atomic
  // (temp file, fsync, rename) while deleteStateValue unlinks synchronously, and neither goes
  // through the session's queue. So the delete runs first, answers {deleted: false}, and the set's
  // rename lands after it: both are acknowledged and the key keeps the value the client deleted
  // (also after any crash). Expected (protocol/README.md 3.6): deleted true, and state/get null.
  it('BUG 8: a state/delete pipelined behind a state/set of the same key deletes the value', async () => {
    const root = tempDir();
    const s = new FileSessionStore(root, { leases: false });
    const { sessionId } = await s.create({});
    const set = s.setState(sessionId, 'k', { v: 1 });
    const deleted = s.deleteState(sessionId, 'k');
    await set;
    const d = await deleted;
    const value = await s.getState(sessionId, 'k');
    await s.closeAll();
    expect(d).toBe(true); // before the fix: false
    expect(value).toBeNull(); // before the fix: {v: 1}
  });
});
