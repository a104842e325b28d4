/**
 * What every backend keeps the same way, written once for all of them (no copy between two
 * backends): the second net under the core's gate, and the subscribers of `changes`.
 */
import { StoreError } from '../domain/errors.js';

/** A backend's second net (Backend.secondNet): the rule a registered secret matches in a text, installed by the core. */
export class SecondNet {
  private find: (text: string) => string | undefined = () => undefined;

  constructor(
    /** How the refusal names the backend and what it did not do, e.g. "the memory backend" / "nothing was kept". */
    private readonly refusal: (rule: string) => StoreError,
  ) {}

  private findInBytes: (bytes: Buffer) => string | undefined = () => undefined;

  install(find: (text: string) => string | undefined, findInBytes?: (bytes: Buffer) => string | undefined): void {
    this.find = find;
    if (findInBytes) this.findInBytes = findInBytes;
  }

  /** The rule bytes match (their encodings, and their UTF-8 text), if any. */
  matchBytes(bytes: Buffer): string | undefined {
    return this.findInBytes(bytes);
  }

  /** Throws the refusal when `bytes` match (a buffer the core's gate checked clean is a lookup: SecretSet.findInBytesSliced). */
  checkBytes(bytes: Buffer): void {
    const rule = this.findInBytes(bytes);
    if (rule !== undefined) throw this.refusal(rule);
  }

  /** The rule a text matches, if any. */
  match(text: string): string | undefined {
    return this.find(text);
  }

  /** Throws the refusal (SecretRejected, nothing stored) when any text matches. */
  check(...texts: Array<string | null>): void {
    for (const t of texts) {
      const rule = t === null ? undefined : this.find(t);
      if (rule !== undefined) throw this.refusal(rule);
    }
  }
}

/** `changes` subscribers by session: poked (in a microtask) on every change this process makes. */
export class Subscribers {
  private readonly bySession = new Map<string, Set<() => void>>();

  /** Adds `poke`; returns its unsubscribe (which also runs `onStop`). */
  add(sessionId: string, poke: () => void, onStop: () => void = () => {}): () => void {
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    const mine = set;
    const fn = () => poke();
    mine.add(fn);
    return () => {
      onStop();
      mine.delete(fn);
      if (mine.size === 0 && this.bySession.get(sessionId) === mine) this.bySession.delete(sessionId);
    };
  }

  poke(sessionId: string): void {
    for (const fn of this.bySession.get(sessionId) ?? []) queueMicrotask(fn);
  }

  clear(): void {
    this.bySession.clear();
  }
}

/**
 * A persist at `at` (the position the core read) against the session's position now: Conflict
 * (nothing written) when it moved, InvalidArgument for an empty batch. Both before any byte.
 */
export function checkPersistAt(now: { generation: number; lastSeq: number }, at: { generation: number; lastSeq: number }, records: number): void {
  if (now.generation !== at.generation || now.lastSeq !== at.lastSeq) {
    throw new StoreError('Conflict', 'the session changed since it was read (lastSeq or generation); nothing was written', {
      reason: 'expectedLastSeq', lastSeq: now.lastSeq, generation: now.generation, outcome: 'notWritten',
    });
  }
  if (records === 0) throw new StoreError('InvalidArgument', 'an append needs at least one record', { path: 'records' });
}

/** sessionIdOfPath of a backend whose sessions have no path: InvalidArgument saying why (`why`). */
export function noPathsHere(why: string): StoreError {
  return new StoreError('InvalidArgument', why, { path: 'path' });
}
