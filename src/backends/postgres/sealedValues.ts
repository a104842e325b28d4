/**
 * Which stored values are sealed on an encrypted PostgreSQL store, and the associated data
 * that binds each to where it belongs (STORAGE.md, "PostgreSQL: encryption at rest"):
 *
 *   records.text            session-sidecar/pg/record␀<sessionId>␀<seq>␀<ts>␀<kind>
 *   sessions.<column>       session-sidecar/pg/session␀<sessionId>␀<column>
 *                           (header_text, header_state, turn_text, runtime_text, usage_text,
 *                           first_message, last_message)
 *   state_values.text       session-sidecar/pg/state␀<sessionId>␀<key>
 *   blobs.bytes             session-sidecar/pg/blob␀<sha256 of the plaintext>
 *
 * A value moved to another row, seq or column, or whose plaintext columns beside it (ts, kind)
 * were edited, fails to open: Corrupt, naming where it is. Records carry no generation in their
 * associated data: compaction copies the records after the checkpoint into the next generation
 * as stored (sessions.ts rotate), and an archived generation holds the same records.
 *
 * The backend calls these at its port (backend.ts): what the core hands it is plaintext that
 * passed the core's gate; what sessions.ts, append.ts, runtime.ts and transfer.ts write is
 * the sealed text, and the checksums they keep (crc) cover the stored — sealed — text, as the
 * file store's crc covers a sealed line's bytes: damage is found without the key (verify).
 */
import type { PgCodec } from './sealing.js';
import type { SealedHeader, SealedRecord, SessionBundle, SessionRow, Snapshot } from './types.js';

export function recordAad(sessionId: string, r: { seq: number; ts: string; kind: string }): string {
  return `session-sidecar/pg/record\0${sessionId}\0${r.seq}\0${r.ts}\0${r.kind}`;
}

export function rowAad(sessionId: string, column: string): string {
  return `session-sidecar/pg/session\0${sessionId}\0${column}`;
}

export function stateAad(sessionId: string, key: string): string {
  return `session-sidecar/pg/state\0${sessionId}\0${key}`;
}

export function blobAad(sha256: string): string {
  return `session-sidecar/pg/blob\0${sha256}`;
}

/** The snapshot's members and the session row's columns that hold them. */
export const SNAPSHOT_COLUMNS = {
  turn: 'turn_text', runtime: 'runtime_text', usage: 'usage_text', firstMessage: 'first_message', lastMessage: 'last_message', header: 'header_state',
} as const satisfies Record<keyof Snapshot, string>;

export function sealHeader(c: PgCodec, h: SealedHeader): SealedHeader {
  return { ...h, text: c.sealText(rowAad(h.sessionId, 'header_text'), h.text) };
}

export function sealRecord(c: PgCodec, sessionId: string, r: SealedRecord): SealedRecord {
  return { ...r, text: c.sealText(recordAad(sessionId, r), r.text) };
}

export function openRecord(c: PgCodec, sessionId: string, generation: number, r: SealedRecord): SealedRecord {
  return { ...r, text: c.openText(recordAad(sessionId, r), r.text, { sessionId, generation, seq: r.seq }) };
}

export function sealSnapshot(c: PgCodec, sessionId: string, s: Snapshot): Snapshot {
  const out = { ...s };
  for (const [member, column] of Object.entries(SNAPSHOT_COLUMNS) as Array<[keyof Snapshot, string]>) {
    const v = s[member];
    out[member] = v === null ? null : c.sealText(rowAad(sessionId, column), v);
  }
  return out;
}

export function openSnapshot(c: PgCodec, sessionId: string, s: Snapshot): Snapshot {
  const out = { ...s };
  for (const [member, column] of Object.entries(SNAPSHOT_COLUMNS) as Array<[keyof Snapshot, string]>) {
    const v = s[member];
    out[member] = v === null ? null : c.openText(rowAad(sessionId, column), v, { sessionId, column, seq: 0 });
  }
  return out;
}

/** A header text as stored in the row, opened. */
export function openHeaderText(c: PgCodec, sessionId: string, stored: string): string {
  return c.key ? c.openText(rowAad(sessionId, 'header_text'), stored, { sessionId, column: 'header_text', seq: 0 }) : stored;
}

/** A loaded row with its header and snapshot opened. */
export function openRow<R extends Pick<SessionRow, 'sessionId' | 'headerText' | 'snapshot'>>(c: PgCodec, row: R): R {
  if (!c.key) return row;
  return {
    ...row,
    headerText: openHeaderText(c, row.sessionId, row.headerText),
    snapshot: openSnapshot(c, row.sessionId, row.snapshot),
  };
}

export function sealState(c: PgCodec, sessionId: string, key: string, text: string): string {
  return c.sealText(stateAad(sessionId, key), text);
}

export function openState(c: PgCodec, sessionId: string, key: string, stored: string): string {
  return c.openText(stateAad(sessionId, key), stored, { sessionId, key });
}

/** A whole session as migrate moves it (plaintext between stores): opened after export, sealed before import. */
export function mapBundle(b: SessionBundle, text: (what: 'header' | 'record' | 'state', t: string, r?: SealedRecord, key?: string, generation?: number) => string): SessionBundle {
  return {
    ...b,
    header: { ...b.header, text: text('header', b.header.text) },
    generations: b.generations.map((g) => ({ ...g, records: g.records.map((r) => ({ ...r, text: text('record', r.text, r, undefined, g.generation) })) })),
    state: b.state.map((s) => ({ key: s.key, text: text('state', s.text, undefined, s.key) })),
  };
}

export function openBundle(c: PgCodec, b: SessionBundle): SessionBundle {
  if (!c.key) return b;
  const id = b.header.sessionId;
  return mapBundle(b, (what, t, r, key, generation) => {
    if (what === 'header') return c.openText(rowAad(id, 'header_text'), t, { sessionId: id, column: 'header_text', seq: 0 });
    if (what === 'record') return openRecord(c, id, generation ?? 0, r!).text;
    return openState(c, id, key!, t);
  });
}

export function sealBundle(c: PgCodec, b: SessionBundle): SessionBundle {
  if (!c.key) return b;
  const id = b.header.sessionId;
  return mapBundle(b, (what, t, r, key) => {
    if (what === 'header') return sealHeader(c, b.header).text;
    if (what === 'record') return sealRecord(c, id, r!).text;
    return sealState(c, id, key!, t);
  });
}
