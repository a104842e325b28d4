import path from 'node:path';
import type { StoredRecord } from '../../protocol/index.js';
import { attachKey } from '../backends/file/journal/cipher.js';
import { type DamagedSpan, type Salvage, salvageJournal } from '../backends/file/journal/salvage.js';
import { StoreLayout } from '../backends/file/layout.js';
import type { OpenedSession } from '../domain/types.js';
import { CliError, openStore, sessionIdByPrefix } from './common.js';
import { out, stdoutStyle } from './output.js';
import { readOnlyFs } from './readOnlyFs.js';
import { TranscriptRenderer } from './render.js';
import type { StoreTarget } from './storeTarget.js';

/**
 * `show --salvage`: a damaged session of a directory store, read line by line (journal/salvage.ts):
 * every record that verifies, in file order, and a mark where each damaged span is. The store's
 * own reads refuse such a session; this never writes (`repair` is what rewrites one).
 */
/** The salvage of a session of a directory store, named whole or by a unique prefix (damaged ones included). */
export async function salvaged(target: StoreTarget, idOrPrefix: string): Promise<{ id: string; salvage: Salvage; session: OpenedSession }> {
  if (target.kind !== 'file') throw new CliError('--salvage reads a directory store\'s journals: a PostgreSQL store checks every row on its own');
  const id = await sessionIdOf(target, idOrPrefix);
  const fsl = readOnlyFs();
  if (target.key) attachKey(fsl, { key: target.key, gate: () => {} }); // reading only: nothing is sealed
  let salvage: Salvage;
  try {
    salvage = salvageJournal(fsl, new StoreLayout(target.root).journal(id));
  } catch (e) {
    throw new CliError(`session ${id} cannot be salvaged: ${(e as Error).message}`);
  }
  const records = salvage.entries.filter((e) => 'record' in e).length;
  return { id, salvage, session: { ...(salvage.header as unknown as OpenedSession), lastSeq: records } };
}

/** A damaged span, for a human: where it is and why it was left out. */
export function damagedText(id: string, d: DamagedSpan): string {
  const lines = d.firstLine === d.lastLine ? `line ${d.firstLine}` : `lines ${d.firstLine}-${d.lastLine}`;
  return `damaged: ${lines} of ${path.join('sessions', id, 'journal.jsonl')} (${d.bytes} bytes at offset ${d.offset}): ${d.reason}`;
}

export async function showSalvaged(target: StoreTarget, idOrPrefix: string, o: { json: boolean; raw: boolean; full: boolean }): Promise<number> {
  const { id, salvage, session } = await salvaged(target, idOrPrefix);
  const damaged = salvage.entries.flatMap((e) => ('damaged' in e ? [e.damaged] : []));
  if (o.json || o.raw) {
    const rows = salvage.entries.map((e) => ('record' in e ? e.record : { damaged: e.damaged }));
    out(o.raw ? rows.map((r) => `${JSON.stringify(r)}\n`).join('') : `${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const s = stdoutStyle();
  const renderer = new TranscriptRenderer({ style: s, full: o.full });
  out(renderer.header(session, [`salvaged: ${session.lastSeq} record(s) verify; ${damaged.length} damaged span(s) left out`]));
  for (const e of salvage.entries) {
    if ('record' in e) out(renderer.record(e.record as unknown as StoredRecord));
    else out(`${s.bold(`⚠ ${damagedText(id, e.damaged)}`)}\n\n`);
  }
  return 0;
}

/** A session id given whole or by a unique prefix, among the listed sessions and those the listing left out. */
async function sessionIdOf(target: StoreTarget, idOrPrefix: string): Promise<string> {
  const store = await openStore(target);
  try {
    const id = await sessionIdByPrefix(store, idOrPrefix);
    if (id === undefined) throw new CliError(`session ${idOrPrefix} not found`);
    return id;
  } finally {
    await store.closeAll();
  }
}
