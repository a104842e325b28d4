/**
 * `session-sidecar migrate`: copies every session of one store into another (file store <->
 * PostgreSQL), session by session:
 *
 * 1. The source's writer lease: a session a live writer holds is refused (not copied).
 * 2. Export from the source (verified there: checksums, seqs, torn tails refused).
 * 3. The secret gate, again, over every byte: each header, record and state value text is
 *    checked against the session's registered secrets (its secretEnv and llm.apiKeyEnv, resolved
 *    in this process's environment) and the well-known credential rules; a text holding one,
 *    or one the current rules would redact, refuses the whole session. Blobs likewise.
 * 4. Blobs the session references, missing in the destination: copied first (verified by
 *    digest on read; stored once per store), so a copied record never references a missing blob.
 * 5. Import: one atomic step per session (one transaction on PostgreSQL; a staged directory
 *    renamed into place on a file store). A crash leaves the session whole or absent.
 * 6. Verify: the session is exported again from the destination and compared with the source's
 *    export byte for byte (header, every generation's seqs, ts, kinds and record texts, state).
 *
 * A session already in the destination and identical to the source's is counted as already
 * copied (so a rerun after a crash completes the job); one that differs is refused.
 */
import type { SessionBundle, SealedRecord, Snapshot } from '../core/port.js';
import { snapshotOfRecords } from '../core/sessions/snapshot.js';
import { baseState } from '../domain/sessionUpdate.js';
import { StoreError } from '../domain/errors.js';
import { checkBytes } from '../domain/secrets/finalGate.js';
import { guardValue } from '../domain/secrets/gate.js';
import { MIN_SECRET_CHARS, type SecretSet, type Vocabulary } from '../domain/secrets/knownSecrets.js';
import { resolveSecrets } from '../domain/secrets/sessionSecrets.js';
import { redactTokens } from '../domain/secrets/tokenRules.js';
import type { SessionHeader } from '../domain/types.js';
import type { TransferEnd } from './ends.js';
import { type Work, WorkInterrupted } from '../domain/work.js';

export interface MigrateSummary {
  sessions: number;
  alreadyThere: number;
  refused: number;
  records: number;
  bytes: number;
  blobs: number;
  blobBytes: number;
}

export interface MigrateOptions {
  env: NodeJS.ProcessEnv;
  vocabulary: Vocabulary;
  /** One line per session (copied, already there) for stdout. */
  progress: (line: string) => void;
  /** One line per refused session for stderr. */
  refuse: (line: string) => void;
  /**
   * Secrets of this process, refused in every session as its own are: the passwords of the
   * PostgreSQL ends (a session written where the password was not known may quote it; it must
   * not land in the database it opens).
   */
  processSecrets?: readonly string[];
  /** Progress, and a stop asked between sessions (domain/work.ts): each session is copied whole or not at all, a rerun skips those already there. */
  work?: Work;
}

const BLOB_REF = /\{"\$blob":"sha256:([0-9a-f]{64})","bytes":(\d+)/g;

export async function migrateStores(from: TransferEnd, to: TransferEnd, o: MigrateOptions): Promise<MigrateSummary> {
  const sum: MigrateSummary = { sessions: 0, alreadyThere: 0, refused: 0, records: 0, bytes: 0, blobs: 0, blobBytes: 0 };
  const ids = await from.ids();
  o.work?.phase?.('copying', ids.length, 'sessions');
  for (const id of ids) {
    if (await o.work?.shouldStop?.()) throw Object.assign(new WorkInterrupted(`${sum.sessions} session(s) copied`), { summary: sum });
    o.work?.step?.();
    try {
      const outcome = await copySession(from, to, id, o, sum);
      o.progress(outcome);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      sum.refused++;
      o.refuse(`session ${id} not copied: ${err.message}`);
    }
  }
  return sum;
}

async function copySession(from: TransferEnd, to: TransferEnd, id: string, o: MigrateOptions, sum: MigrateSummary): Promise<string> {
  const holder = await from.leaseHolder(id);
  if (holder) throw new StoreError('SessionLocked', `it is open for writing (${holder}); close it (or stop that sidecar) and run migrate again`);
  const bundle = await from.export(id);
  const secrets = gate(bundle, o);
  const records = bundle.generations.reduce((n, g) => n + g.records.length, 0);
  const bytes = bundle.generations.reduce((n, g) => n + g.records.reduce((m, r) => m + Buffer.byteLength(r.text, 'utf8'), 0), 0);
  if (await to.exists(id)) {
    const there = await to.export(id);
    if (!sameBundle(bundle, there)) throw new StoreError('Conflict', 'a different session with this id exists in the destination; nothing was written');
    await to.settle?.(id); // a crash after its import's commit point may have left staging behind
    sum.alreadyThere++;
    return `already there ${id} (identical: ${records} records)`;
  }
  for (const [sha, size] of blobRefs(bundle)) {
    if (await to.hasBlob(sha)) continue;
    const bytes = await from.blob(sha);
    if (!bytes) throw new StoreError('Corrupt', `blob sha256:${sha} it references is missing in the source`, { reason: 'missing' });
    if (bytes.length !== size) throw new StoreError('Corrupt', `blob sha256:${sha} holds ${bytes.length} bytes, not the ${size} referenced`);
    const rule = secrets.findInBytes(bytes) ?? (redactTokens(bytes.toString('utf8')) === bytes.toString('utf8') ? undefined : 'credential');
    if (rule) throw new StoreError('SecretRejected', `blob sha256:${sha} holds a registered secret or a credential (rule: ${rule}); nothing of the session was written`, { rule });
    await to.putBlob(bytes, secrets);
    sum.blobs++;
    sum.blobBytes += bytes.length;
  }
  const { snapshot, toolSeq } = snapshotFor(bundle, (texts) => secrets.findInBytes(Buffer.from(texts.join('\n'), 'utf8')));
  await to.import(bundle, snapshot, toolSeq, secrets);
  const copied = await to.export(id);
  if (!sameBundle(bundle, copied)) throw new StoreError('Corrupt', 'the copy read back from the destination differs from the source: do not use it; verify the destination');
  for (const [sha] of blobRefs(bundle)) {
    if (!(await to.blob(sha))) throw new StoreError('Corrupt', `blob sha256:${sha} is missing in the destination after the copy`);
  }
  sum.sessions++;
  sum.records += records;
  sum.bytes += bytes;
  return `copied ${id}${bundle.trashed ? ' (in the trash)' : ''}: ${records} records in ${bundle.generations.length} generation${bundle.generations.length === 1 ? '' : 's'}, ${bundle.state.length} state values`;
}

/**
 * The secret gate over everything the session's bundle would write. Throws SecretRejected for
 * a registered secret (guardValue) or for a credential the current rules would redact.
 */
function gate(b: SessionBundle, o: MigrateOptions): SecretSet {
  const header = JSON.parse(b.header.text) as SessionHeader;
  const { set } = resolveSecrets({ apiKeyEnv: header.llm?.apiKeyEnv, headerEnv: header.secretEnv }, o.env, o.vocabulary);
  // One shorter than a registered secret's minimum is not one (as serve registers them).
  for (const p of o.processSecrets ?? []) if (p.length >= MIN_SECRET_CHARS) set.add(p);
  const check = (text: string, where: string) => {
    const value = JSON.parse(text) as Record<string, unknown>;
    const guarded = guardValue(value, set, where);
    if (guarded.redactions.length > 0) {
      throw new StoreError('SecretRejected', `${where} holds a credential (rule: ${guarded.redactions[0]?.rule}); nothing of the session was written`, { rule: guarded.redactions[0]?.rule });
    }
    if (value.kind === 'toolStream' && typeof value.dataBase64 === 'string') checkBytes(set, Buffer.from(value.dataBase64, 'base64'), `${where}.dataBase64<bytes>`);
  };
  check(b.header.text, 'the header');
  for (const g of b.generations) for (const r of g.records) check(r.text, `record ${r.seq} of generation ${g.generation}`);
  for (const s of b.state) check(s.text, `state value ${s.key}`);
  return set;
}

function blobRefs(b: SessionBundle): Map<string, number> {
  const refs = new Map<string, number>();
  const scan = (text: string) => {
    for (const m of text.matchAll(BLOB_REF)) refs.set(m[1] as string, Number(m[2]));
  };
  for (const g of b.generations) for (const r of g.records) scan(r.text);
  for (const s of b.state) scan(s.text);
  return refs;
}

/** Byte for byte: header, place (trash), every generation's number, throughSeq and records, state values. */
export function sameBundle(a: SessionBundle, b: SessionBundle): boolean {
  const rec = (r: SealedRecord) => [r.seq, r.ts, r.kind, r.text];
  const norm = (x: SessionBundle) => JSON.stringify([
    x.header.sessionId, x.header.createdAt, x.header.text, x.trashed,
    x.generations.map((g, i) => [g.generation, i < x.generations.length - 1 ? g.throughSeq ?? 0 : null, g.records.map(rec)]),
    [...x.state].sort((p, q) => (p.key < q.key ? -1 : 1)).map((s) => [s.key, s.text]),
  ]);
  return norm(a) === norm(b);
}

/** What the core keeps beside the records on PostgreSQL: turn and counters of the active generation, summaries. */
function snapshotFor(b: SessionBundle, gate: (texts: string[]) => string | undefined): { snapshot: Snapshot; toolSeq: number } {
  const active = b.generations[b.generations.length - 1]?.records ?? [];
  const base = baseState(JSON.parse(b.header.text) as SessionHeader);
  return snapshotOfRecords(active, b.generations.flatMap((g) => g.records), base, (summary) => gate([summary]) === undefined);
}
