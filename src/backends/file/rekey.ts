import path from 'node:path';
import { openPrivate, readPrivateSmallBytes } from '../../durable/durableFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { sameKey, type StoreKey } from '../../durable/storeKey.js';
import { StoreError } from '../../domain/errors.js';
import { checkBytes } from '../../domain/secrets/finalGate.js';
import { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { HEX64 } from '../../domain/blobRefs.js';
import { checkSessionId } from '../../domain/ids.js';
import { baseState } from '../../domain/sessionUpdate.js';
import type { SessionHeader } from '../../domain/types.js';
import { readMarker, writeMarker } from './encryptionMarker.js';
import { fileAad, type JournalCipher, keyMismatch, type StoreCipher } from './journal/cipher.js';
import { decodeLine, encodeHeaderLine, encodeRecordLine, openHeader } from './journal/format.js';
import { firstLine } from './journal/lines.js';
import { corrupt, crcOf, type JournalPosition, scanRecords } from './journal/scan.js';
import type { StoreLayout } from './layout.js';
import { SessionLease } from './leases.js';
import { KernelLock } from './kernelLock.js';
import { ensurePrivateDir } from '../../durable/durableFile.js';
import { UnsafeFileError } from '../../durable/errors.js';
import { keepTornTail, namesIn, removeCache, removeTemps, replaceFile, TempFile } from './rekeyFiles.js';
import { openWith, sealedKeyId, sealWith } from './sealedFile.js';
import { type Work, WorkInterrupted } from '../../domain/work.js';

/**
 * `session-sidecar rekey`: rewrites a whole store from one key (`from`; absent: a plaintext store)
 * to another (`to`; absent: decrypt). STORAGE.md, "Rekey", is the reference; the crash reasoning:
 *
 * 1. Every session's writer lease is taken (a running sidecar holding one refuses the rekey);
 *    nothing is changed before all are held.
 * 2. encryption.json is replaced (atomically, durably) by {rekey: {fromKeyId, toKeyId}}: from
 *    then on every server and command refuses the store (KeyMismatch rekeyUnfinished) until the
 *    rekey is finished, so nothing is written under either key meanwhile.
 * 3. Each file is rewritten on its own: the new bytes go to `<file>.rekey.tmp` (O_CREAT|O_EXCL|
 *    O_NOFOLLOW, 0600), fsynced, renamed over the file, the directory fsynced. Every file names the
 *    key it is sealed with (a journal's header `key`, a sealed file's `key`; none: plaintext), so
 *    after a crash each one is whole under exactly one of the two keys, and a repeated rekey
 *    skips those already under `to`. Index entries and list.cache are caches: removed, rebuilt
 *    from the journals. A torn tail (never acknowledged) is moved to recovery/ as a write open
 *    would, before its journal is rewritten without it.
 * 4. encryption.json names `to` (or is removed when decrypting): the store is served again.
 */
export interface RekeyOptions {
  from?: StoreKey;
  to?: StoreKey;
  fs: FsLayer;
  leaseStaleMs?: number;
  /** Progress, and a stop asked between sessions (domain/work.ts): the marker stays "rekey unfinished", every lease is released, a rerun goes on. */
  work?: Work;
}

export interface RekeyReport {
  sessions: number;
  rewritten: number;
  skipped: number;
}


export async function rekeyStore(layout: StoreLayout, opts: RekeyOptions): Promise<RekeyReport> {
  const { fs: fsl, from, to } = opts;
  if (!from && !to) throw new StoreError('InvalidArgument', 'give the current key (--from-env/--from-file), the new key (--to-env/--to-file), or both', { path: 'keys' });
  if (from && to && from.id === to.id) throw new StoreError('InvalidArgument', 'the new key is the current key', { path: 'to' });
  if (!fsl.lstatSync(layout.sessionsDir)?.isDirectory()) throw new StoreError('SessionNotFound', `no session store at ${layout.root}`, { reason: 'noStore' });
  const wanted = { fromKeyId: from?.id ?? null, toKeyId: to?.id ?? null };
  const marker = readMarker(fsl, layout);
  if (marker?.rekey) {
    if (!sameKey(marker.rekey.fromKeyId, from) || !sameKey(marker.rekey.toKeyId, to)) {
      throw keyMismatch('an interrupted rekey of this store used other keys: run it again with the same --from and --to keys', 'rekeyUnfinished');
    }
  } else if (sameKey(marker?.keyId ?? null, to)) {
    // Finished already (a repeated command after a crash at its very last step): nothing to do.
    return { sessions: sessionIds(fsl, layout).length, rewritten: 0, skipped: 0 };
  } else if (!sameKey(marker?.keyId ?? null, from)) {
    throw keyMismatch(marker ? 'the --from key is not the store\'s key' : 'the store is not encrypted: give no --from key', marker ? 'wrongKey' : 'notEncrypted');
  }
  // The keys are secrets of this process: no plaintext holding one is ever sealed (finalGate.ts).
  const secrets = new SecretSet();
  from?.registerWith(secrets);
  to?.registerWith(secrets);
  const gate = (plain: Buffer) => checkBytes(secrets, plain);
  const ciphers: Ciphers = { from: from && { key: from, gate }, to: to && { key: to, gate } };
  const storeLock = await excludeServers(fsl, layout);
  let leases: SessionLease[];
  let ids: string[];
  try {
    ids = sessionIds(fsl, layout);
    leases = await takeLeases(fsl, layout, ids, opts.leaseStaleMs ?? 10_000);
  } catch (err) {
    storeLock.release();
    throw err;
  }
  const report: RekeyReport = { sessions: ids.length, rewritten: 0, skipped: 0 };
  try {
    if (!marker?.rekey) writeMarker(fsl, layout, { rekey: wanted });
    opts.work?.phase?.('rewriting', ids.length, 'sessions');
    for (const id of ids) {
      // A safe point: every file so far is whole under one key, the marker says "unfinished".
      if (await opts.work?.shouldStop?.()) throw new WorkInterrupted(`${report.rewritten} file(s) rewritten`);
      rekeySession(fsl, layout, id, ciphers, report);
      opts.work?.step?.();
    }
    rekeyBlobs(fsl, layout, ciphers, report);
    removeCache(fsl, path.join(layout.indexDir, 'list.cache'));
    writeMarker(fsl, layout, to ? { keyId: to.id } : undefined);
  } finally {
    await Promise.all(leases.map((l) => l.release()));
    storeLock.release();
  }
  return report;
}

/**
 * Step 0: the store's kernel lock, exclusively (layout.storeLock). Every serving sidecar holds it
 * shared for as long as it lives (StoreCore.serveStore), whether or not it has a session open, so
 * a rekey never runs beside one, and a sidecar cannot start while a rekey runs. Held to the end.
 */
async function excludeServers(fsl: FsLayer, layout: StoreLayout): Promise<KernelLock> {
  ensurePrivateDir(fsl, layout.locksDir);
  let lock: KernelLock | undefined;
  try {
    lock = await KernelLock.tryAcquire(fsl, layout.storeLock, 'exclusive');
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `rekey refused: ${path.basename(err.path)} ${err.reason}; nothing changed`, { reason: err.reason });
    throw err;
  }
  if (!lock) {
    throw new StoreError('SessionLocked', 'a sidecar is serving this store (or another rekey is running): stop it first; nothing was changed', { reason: 'storeServed' });
  }
  return lock;
}

interface Ciphers {
  from?: StoreCipher;
  to?: StoreCipher;
}

/** Every session id that has a directory in sessions/, history/ or trash/. */
function sessionIds(fsl: FsLayer, layout: StoreLayout): string[] {
  const ids = new Set<string>();
  for (const dir of [layout.sessionsDir, layout.historyDir, layout.trashDir]) {
    for (const name of namesIn(fsl, dir)) {
      try {
        ids.add(checkSessionId(name));
      } catch {
        // not a session's directory: nothing of ours to rewrite
      }
    }
  }
  return [...ids].sort();
}

async function takeLeases(fsl: FsLayer, layout: StoreLayout, ids: string[], staleMs: number): Promise<SessionLease[]> {
  const held: SessionLease[] = [];
  try {
    for (const id of ids) held.push(await SessionLease.acquire(fsl, layout, id, staleMs, true));
  } catch (err) {
    await Promise.all(held.map((l) => l.release()));
    if (err instanceof StoreError && err.kind === 'SessionLocked') {
      throw new StoreError('SessionLocked', `${err.message}: stop the sidecar that has the store open, then run rekey again (nothing was changed)`, err.details);
    }
    throw err;
  }
  return held;
}

function rekeySession(fsl: FsLayer, layout: StoreLayout, id: string, c: Ciphers, report: RekeyReport): void {
  const trash = layout.trashSessionDir(id);
  const places = [
    { session: layout.sessionDir(id), history: layout.historySessionDir(id), index: layout.indexEntry(id) },
    { session: path.join(trash, 'session'), history: path.join(trash, 'history'), index: path.join(trash, 'index.json') },
  ];
  for (const p of places) {
    removeCache(fsl, p.index);
    const journal = path.join(p.session, 'journal.jsonl');
    const files = [
      ...(fsl.lstatSync(journal) ? [journal] : []),
      ...namesIn(fsl, p.history).filter((n) => /^\d+\.jsonl$/.test(n)).map((n) => path.join(p.history, n)),
    ];
    const headers = headerLinesUnder(fsl, files, c);
    for (const file of files) count(report, rekeyJournal(fsl, layout, id, file, c, headers));
    removeTemps(fsl, p.history);
    const stateDir = path.join(p.session, 'state');
    for (const name of namesIn(fsl, stateDir).filter((n) => n.endsWith('.json'))) {
      const key = name.slice(0, -'.json'.length);
      count(report, rekeyFile(fsl, path.join(stateDir, name), fileAad('state', id, key), c, `state value ${key} of session ${id}`));
    }
    removeTemps(fsl, stateDir);
  }
}

function rekeyBlobs(fsl: FsLayer, layout: StoreLayout, c: Ciphers, report: RekeyReport): void {
  const root = path.join(layout.blobsDir, 'sha256');
  for (const fan of namesIn(fsl, root)) {
    const dir = path.join(root, fan);
    for (const hex of namesIn(fsl, dir).filter((h) => HEX64.test(h))) count(report, rekeyFile(fsl, path.join(dir, hex), fileAad('blob', hex), c, `blob sha256:${hex}`));
    removeTemps(fsl, dir);
  }
}

function count(report: RekeyReport, rewrote: boolean): void {
  if (rewrote) report.rewritten += 1;
  else report.skipped += 1;
}

/** A whole sealed (or plaintext) file under `to`; false when it is already. */
function rekeyFile(fsl: FsLayer, file: string, aad: string, c: Ciphers, what: string): boolean {
  const stored = readPrivateSmallBytes(fsl, file, Number.MAX_SAFE_INTEGER);
  if (stored === undefined) return false;
  const keyId = sealedKeyId(stored);
  if (sameKey(keyId, c.to?.key)) return false;
  if (!sameKey(keyId, c.from?.key)) throw keyMismatch(`${what} is sealed with neither key`, 'wrongKey');
  const plain = openWith(c.from, aad, stored);
  if (!plain) throw new StoreError('Corrupt', `${what} is damaged (it does not authenticate); nothing more was rewritten`, { reason: 'authentication' });
  replaceFile(fsl, file, [sealWith(c.to, aad, plain)]);
  return true;
}

/**
 * The header lines of one place (a session's journal and its archives, live or in the trash),
 * by the header's plaintext: a header is sealed once and the same line written into every file
 * that has it — compaction copies the header line byte for byte into the archive it makes, and
 * verify holds every archive to that; sealing each file's copy afresh (a new nonce each) would
 * break it. Files a crashed run already rewrote are under `to`: their line is taken, so the
 * files rewritten now match them.
 */
type HeaderLines = Map<string, Buffer>;

function headerLinesUnder(fsl: FsLayer, files: string[], c: Ciphers): HeaderLines {
  const lines: HeaderLines = new Map();
  for (const file of files) {
    const fd = openPrivate(fsl, file, false);
    try {
      const head = headerOf(fsl, fd, fsl.fstatSync(fd).size);
      if (!sameKey(head.keyId, c.to?.key)) continue;
      const opened = openHeader(head.raw, c.to);
      if (opened.ok) lines.set(JSON.stringify(opened.value), Buffer.concat([head.line, NEWLINE]));
    } catch {
      // damaged: rekeyJournal reports it when it comes to the file
    } finally {
      fsl.closeSync(fd);
    }
  }
  return lines;
}

const NEWLINE = Buffer.from('\n');

/** A journal file's first line, decoded, and the key it names (null: plaintext), as openHeader tells a sealed header. */
function headerOf(fsl: FsLayer, fd: number, size: number) {
  const first = firstLine(fsl, fd, 0, size);
  if (!first?.terminated) throw corrupt(1, 'missing or unterminated header');
  const raw = decodeLine(first.bytes);
  if (!raw.ok) throw corrupt(1, `header ${raw.reason}`);
  const keyId = typeof raw.value.enc === 'string' && raw.value.createdAt === undefined ? raw.value.key : null;
  return { line: first.bytes, end: first.end, raw: raw.value, keyId };
}

/**
 * A journal (or archived generation) rewritten under `to`, record by record (each its own batch,
 * as a migrate writes them), with its place's header line (`headers`); false when its header
 * already names `to`.
 */
function rekeyJournal(fsl: FsLayer, layout: StoreLayout, id: string, file: string, c: Ciphers, headers: HeaderLines): boolean {
  const fd = openPrivate(fsl, file, false);
  try {
    const size = fsl.fstatSync(fd).size;
    const head = headerOf(fsl, fd, size);
    const { keyId } = head;
    if (sameKey(keyId, c.to?.key)) return false;
    if (!sameKey(keyId, c.from?.key)) throw keyMismatch(`session ${id}: ${path.basename(file)} is sealed with neither key`, 'wrongKey', { sessionId: id });
    const opened = openHeader(head.raw, c.from);
    if (!opened.ok) throw corrupt(1, `header ${opened.reason}`);
    if (opened.value.sessionId !== id) throw corrupt(1, 'header names another session');
    const fromCipher: JournalCipher | undefined = c.from && { ...c.from, sessionId: id };
    const toCipher: JournalCipher | undefined = c.to && { ...c.to, sessionId: id };
    // Streamed: one journal is never held in memory whole.
    const out = new TempFile(fsl, file);
    try {
      const plain = JSON.stringify(opened.value);
      let header = headers.get(plain);
      if (!header) headers.set(plain, (header = encodeHeaderLine(opened.value as Record<string, unknown> & { sessionId: string }, toCipher)));
      out.write(header);
      const origin: JournalPosition = { bytes: head.end, lastSeq: 0, records: 0, lastCrc: crcOf(head.line) };
      const scan = scanRecords(fsl, fd, origin, size, (rec) => {
        const { seq, ts, ...body } = rec;
        out.write(encodeRecordLine(seq, String(ts), undefined, JSON.stringify(body), toCipher));
      }, baseState(opened.value as unknown as SessionHeader), fromCipher);
      if (scan.tail) keepTornTail(fsl, layout, id, fd, scan.tail.offset, scan.tail.bytes);
      out.commit();
    } catch (err) {
      out.abort();
      throw err;
    }
    return true;
  } finally {
    fsl.closeSync(fd);
  }
}
