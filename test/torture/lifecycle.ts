import fs from 'node:fs';
import path from 'node:path';
import type { FileSessionStore } from '../../src/stores/fileStore.js';
import { comparable, fail, Ledger, type Rec, type SessionLedger, type Stored } from './model.js';

/**
 * Where each session of a simulated-crash workload is (live, in the trash, purged) and which
 * move is in flight, and the check that a crash image agrees: every acknowledged move is
 * durable, a move in flight left a state that the repeated request (or a restore) completes,
 * and nothing is stranded — no session directory in two places, no part of a trashed session
 * left in a live place, nothing of a purged session anywhere (protocol/STORAGE.md, Crash
 * recovery of multi-step operations).
 */

export type Where = 'live' | 'trashed' | 'purged';
export type Move = 'delete' | 'restore' | 'purge';

export class LifecycleLedger extends Ledger {
  readonly where = new Map<string, { at: Where; moving?: Move }>();

  /** A move was sent: until it is acknowledged, either place is right. */
  moving(id: string, move: Move): void {
    const w = this.where.get(id) ?? { at: 'live' as Where };
    this.where.set(id, { ...w, moving: move });
  }

  moved(id: string, to: Where): void {
    this.where.set(id, { at: to });
  }

  /**
   * A fork was acknowledged: its records (read back from the live store right after) are as
   * acknowledged as the appends of its source.
   */
  forked(id: string, records: Stored[]): void {
    const s = this.session(id);
    for (const r of records) {
      s.records.set(r.seq, comparable(r, r as unknown as Rec));
      s.maxSeq = Math.max(s.maxSeq, r.seq);
    }
  }
}

/** The live places of a session's parts other than its directory (which a delete moves after it). */
function liveParts(root: string, id: string): string[] {
  return [path.join(root, 'history', id), path.join(root, 'index', `${id}.json`), path.join(root, 'recovery', id)];
}

const exists = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;

export interface Placed {
  live: boolean;
  trashed: boolean;
}

export function placeOf(root: string, id: string): Placed {
  const live = exists(path.join(root, 'sessions', id, 'journal.jsonl'));
  const trashed = exists(path.join(root, 'trash', id, 'session', 'journal.jsonl'));
  if (live && trashed) fail(`session ${id} is both live and in the trash (a rename kept in both directories)`);
  return { live, trashed };
}

/** Ids with a directory in the trash (deleted sessions, whole or part). */
export function trashedOnDisk(root: string): string[] {
  const dir = path.join(root, 'trash');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => !n.startsWith('.')) : [];
}

/**
 * Brings a session of a crash image to where its acknowledged (or in-flight) moves put it and
 * returns whether it is then live, to be checked against its ledger. A trashed session is
 * restored in the image (the proof that the trash holds it whole); an in-flight move is
 * completed by repeating it (or by a restore).
 */
export async function settle(store: FileSessionStore, root: string, id: string, ledger: LifecycleLedger, sl: SessionLedger | undefined): Promise<boolean> {
  const w = ledger.where.get(id) ?? { at: 'live' as Where };
  const place = placeOf(root, id);
  const gone = () => {
    const left = [path.join(root, 'sessions', id), path.join(root, 'trash', id), path.join(root, 'trash', `.purging-${id}`), ...liveParts(root, id)].filter(exists);
    if (left.length > 0) fail(`session ${id} was purged but ${left.map((p) => path.relative(root, p)).join(', ')} remain`);
  };
  const noStrays = () => {
    const left = liveParts(root, id).filter(exists);
    if (left.length > 0) fail(`session ${id} is in the trash but ${left.map((p) => path.relative(root, p)).join(', ')} stayed in a live place (stranded)`);
  };
  const restoreHere = async () => {
    await store.restore(id);
    if (!placeOf(root, id).live) fail(`session ${id}: restore answered but the session is not live`);
    if (exists(path.join(root, 'trash', id))) fail(`session ${id}: restore left trash/${id}`);
    return true;
  };
  if (w.moving === undefined) {
    if (w.at === 'purged') return gone(), false;
    if (w.at === 'trashed') {
      if (place.live || !place.trashed) fail(`session ${id}: its acknowledged delete is not durable (live ${place.live}, in trash ${place.trashed})`);
      noStrays();
      return restoreHere();
    }
    if (!place.live) fail(`the acknowledged session ${id} is gone${place.trashed ? ' (it is in the trash)' : ''}`);
    return true;
  }
  if (w.moving === 'purge') {
    if (place.live) return true; // a purge of a live session commits when it moves it to the trash
    try {
      await store.delete(id, true); // the repeated purge completes it
    } catch (err) {
      if ((err as { kind?: string }).kind !== 'SessionNotFound') throw err;
    }
    return gone(), false;
  }
  // a delete or a restore in flight: either place, and the session whole in it
  if (place.live) {
    const stray = ['history', 'index.json', 'recovery', 'session'].map((p) => path.join(root, 'trash', id, p)).filter(exists);
    // a delete moves the directory first, a restore last: a live session has every part in place
    if (stray.length > 0) fail(`session ${id} is live but ${stray.map((p) => path.relative(root, p)).join(', ')} is in the trash (stranded)`);
    return true;
  }
  if (!place.trashed) fail(`session ${id} is neither live nor in the trash after a ${w.moving} in flight${sl ? ' (it had acknowledged records)' : ''}`);
  return restoreHere();
}
