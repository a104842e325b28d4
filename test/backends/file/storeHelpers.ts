import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { expect } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreError, type StoreErrorKind } from '../../../src/domain/errors.js';
import { FileSessionStore, type FileStoreOptions } from '../../../src/stores/fileStore.js';
import type { RecordInput, StoredRecord } from '../../../src/domain/types.js';

/** RFC 3339 UTC timestamp with millisecond precision, as the store writes it. */
export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const journalOf = (root: string, id: string): string => path.join(root, 'sessions', id, 'journal.jsonl');
export const indexOf = (root: string, id: string): string => path.join(root, 'index', `${id}.json`);
export const modeOf = (p: string): number => fs.statSync(p).mode & 0o777;

/**
 * A store for unit tests. These simulate restarts with several instances in one process, so
 * cross-process leases are off unless a test asks for them (conformance tests, with real
 * processes, and the lease tests use them).
 */
export function store(root: string, opts: FileStoreOptions = {}): FileSessionStore {
  return new FileSessionStore(root, { leases: false, ...opts });
}

export function message(role: string, content: unknown): RecordInput {
  return { kind: 'message', message: { role, content } };
}

/** An assistant message with one tool call whose `arguments` (a BlobRef position, protocol/blobPositions.ts) is `args`. */
export function toolCall(args: unknown): RecordInput {
  return { kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: args as string }] } };
}

/** The arguments of a record made by toolCall, as stored (a string or a BlobRef). */
export function argsOf(record: unknown): unknown {
  return (record as { message?: { toolCalls?: Array<{ arguments?: unknown }> } } | undefined)?.message?.toolCalls?.[0]?.arguments;
}

export function note(i: number, extra: Record<string, unknown> = {}): RecordInput {
  return { kind: 'note', i, ...extra };
}

/** Awaits `p` and returns the StoreError it rejects with, asserting its kind. */
export async function storeError(p: Promise<unknown> | (() => unknown), kind: StoreErrorKind): Promise<StoreError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err, `expected StoreError ${kind}`).toBeInstanceOf(StoreError);
  expect((err as StoreError).kind).toBe(kind);
  return err as StoreError;
}

/** The journal's lines, each with its trailing newline (an unterminated last line without). */
export function lines(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
    out.push(buf.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < buf.length) out.push(buf.subarray(start));
  return out;
}

/** Seals a JSON object text the way the journal does: crc32 of the body before `,"crc":`. */
export function sealed(objectText: string): Buffer {
  const body = objectText.slice(0, -1);
  return Buffer.from(`${body},"crc":"${crc32(body).toString(16).padStart(8, '0')}"}\n`, 'utf8');
}

/** A line's text without its `,"crc":"…"}` suffix and newline, ending in `}` again. */
export function unsealed(line: Buffer): string {
  const text = line.toString('utf8').replace(/\n$/, '');
  return `${text.slice(0, text.length - ',"crc":"00000000"}'.length)}}`;
}


/**
 * Waits until the store's background index writes (debounced by a timer, then written) have
 * settled. The store exposes no hook for this (index writes never delay an append), so it
 * looks at the private session map; if that changes shape it falls back to a generous sleep.
 */
export async function indexSettled(s: FileSessionStore): Promise<void> {
  await s.port.indexSettled();
}

/** A fault-injection layer: every call goes to node's fs unless `override` replaces it. */
export function faultFs(override: Partial<FsLayer>): FsLayer {
  return { ...nodeFs, ...override };
}

export function eio(code = 'EIO'): Error {
  return Object.assign(new Error(`injected ${code}`), { code });
}

/** A store on `root` with `n` single-record appends of small notes; returns the session id. */
export async function sessionWith(root: string, n: number, opts: FileStoreOptions = {}): Promise<string> {
  const s = store(root, opts);
  const { sessionId } = await s.create({ title: 'fixture' });
  for (let i = 1; i <= n; i++) await s.append(sessionId, [note(i)]);
  await s.closeAll();
  return sessionId;
}

/** nodeFs, noting in `synced.size` the size of `file` at each fsync/fdatasync of it. */
export function syncNoting(file: string, synced: { size: number }): FsLayer {
  const fds = new Set<number>();
  const seen = (fd: number) => {
    if (fds.has(fd)) synced.size = fs.fstatSync(fd).size;
  };
  return {
    ...nodeFs,
    openSync(p, flags, mode) {
      const fd = nodeFs.openSync(p, flags, mode);
      if (p === file) fds.add(fd);
      return fd;
    },
    closeSync(fd) {
      fds.delete(fd);
      nodeFs.closeSync(fd);
    },
    fsyncSync(fd) {
      nodeFs.fsyncSync(fd);
      seen(fd);
    },
    async fdatasync(fd) {
      await nodeFs.fdatasync(fd);
      seen(fd);
    },
  };
}

/** Every record of a session's active generation (or of an archived one), paged through. */
export async function readAll(s: FileSessionStore, id: string, generation?: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  for (let afterSeq = 0; ;) {
    const page = await s.read(id, { afterSeq, limit: 1000, ...(generation === undefined ? {} : { generation }) });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}
