/**
 * Opening: create (and a fork's create with its copies), open in read or write mode (an
 * upgrade closes and reopens), close. A write open takes the lease first and loads the
 * committed state under it; a session fail-stopped in this instance gives its lease back at
 * once and is never opened for writing again here.
 */
import { StoreError } from '../../domain/errors.js';
import { checkSessionId, newSessionId } from '../../domain/ids.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { resolveSecrets } from '../../domain/secrets/sessionSecrets.js';
import { baseState } from '../../domain/sessionUpdate.js';
import type { CreatedSession, OpenedSession, OpenMode, SecretsInput, SecretsStatus, SessionHeader, SessionHeaderInput } from '../../domain/types.js';
import { guardHeader } from '../commit/header.js';
import { oneAtATime } from '../commit/oneAtATime.js';
import type * as z from 'zod';
import type { Redaction as RedactionSchema } from '../../../protocol/secrets.js';
import type { Fence, SealedRecord, SessionRow } from '../port.js';
import { commitQueue } from './commitSink.js';
import type { Core } from './context.js';
import { LiveSession } from './live.js';
import { EMPTY_SNAPSHOT, snapshotOfRecords, stateOf } from './snapshot.js';
import { createDigest, createKeyReused, findCreated } from './createIdempotency.js';
import { checkIdempotencyKey } from './idempotency.js';

export async function create(c: Core, input: SessionHeaderInput, secretsInput: SecretsInput = {}, idempotencyKey?: string): Promise<CreatedSession> {
  if (input.parent) await c.loadLive(checkSessionId(input.parent.sessionId)); // a parent in the trash is not found
  if (idempotencyKey === undefined) return createWith(c, input, secretsInput, []);
  checkIdempotencyKey(idempotencyKey, c.secrets);
  return oneAtATime(c.creatingKeys, idempotencyKey, () => createWith(c, input, secretsInput, [], idempotencyKey));
}

/**
 * A new session holding `initial` records (a fork's copies), opened for writing; all or nothing.
 * With `key` (createIdempotency.ts), the original of a retry is opened for writing and answered.
 */
export async function createWith(c: Core, input: SessionHeaderInput, secretsInput: SecretsInput, initial: SealedRecord[], key?: string): Promise<CreatedSession> {
  c.refuseIfReadOnly('create a session');
  const { set, status } = resolveSecrets({ apiKeyEnv: input.llm?.apiKeyEnv, input: secretsInput }, c.env, c.vocabulary);
  c.secrets.addAll(set); // a secret registered for any session may reach no backend
  const guarded = guardHeader(input, secretsInput, c.secrets);
  const redactions: Array<z.infer<typeof RedactionSchema>> = guarded.redactions.map((r) => ({ seq: 0, ...r }));
  let stamp: SessionHeader['idempotency'];
  if (key !== undefined) {
    stamp = { key, digest: createDigest(guarded.value), ...(redactions.length > 0 ? { redactions } : {}) };
    const original = await findCreated(c, key);
    if (original && original.stamp.digest !== stamp.digest) throw createKeyReused(original.sessionId);
    if (original) {
      const opened = await open(c, original.sessionId, 'write', secretsInput);
      const shown = original.stamp.redactions ?? [];
      return { sessionId: original.sessionId, createdAt: original.createdAt, secrets: opened.secrets, ...(shown.length > 0 ? { redactions: shown } : {}) };
    }
  }
  const now = c.clock();
  const sessionId = newSessionId(now);
  const createdAt = new Date(now).toISOString();
  const header: SessionHeader = { sessionId, createdAt, ...guarded.value, ...(stamp ? { idempotency: stamp } : {}) };
  const sealed = c.gate.header({ sessionId, createdAt, text: JSON.stringify(header) }, c.maxRecordBytes);
  const copies = c.gate.copies(initial);
  const fence = await c.backend.leases.acquire(sessionId);
  const snapshot = c.gate.snapshot(initial.length > 0 ? snapshotOfRecords(initial, initial, baseState(header), (s) => c.gate.admitsSummary(s)).snapshot : EMPTY_SNAPSHOT);
  try {
    await c.backend.create(sealed, copies, snapshot, fence);
  } catch (err) {
    // An unknown outcome (the journal may be in place): read-only here for good, as after a failed append.
    if (err instanceof StoreError && err.kind === 'Uncertain') c.failStopped.add(sessionId);
    await c.backend.leases.release(fence).catch(() => undefined);
    throw err;
  }
  const row = await c.backend.load(sessionId, { writer: fence });
  adopt(c, header, row, 'write', fence, set, status);
  return { sessionId, createdAt, secrets: status, ...(redactions.length > 0 ? { redactions } : {}) };
}

/** Opens of one session run one at a time, in arrival order. */
export async function open(c: Core, sessionId: string, mode: OpenMode, secretsInput: SecretsInput = {}): Promise<OpenedSession> {
  checkSessionId(sessionId);
  return oneAtATime(c.opening, sessionId, () => openNow(c, sessionId, mode, secretsInput));
}

async function openNow(c: Core, sessionId: string, mode: OpenMode, secretsInput: SecretsInput): Promise<OpenedSession> {
  if (mode === 'write') c.refuseIfReadOnly('open a session for writing');
  if (mode === 'write' && c.failStopped.has(sessionId)) {
    throw new StoreError('ReadOnly', `session ${sessionId} is read-only in this process after a failed write; open it in a new process`, { sessionId, reason: 'failStop' });
  }
  const existing = c.sessions.get(sessionId);
  if (existing && (existing.mode === 'write' || mode === 'read')) {
    existing.status = resolveSecrets({ input: secretsInput }, c.env, c.vocabulary, existing.secrets).status;
    c.secrets.addAll(existing.secrets);
    const v = await c.view(existing, sessionId);
    return existing.describe(v.lastSeq, v.turn, v.header);
  }
  const prior = existing?.secrets;
  if (existing) await close(c, sessionId); // upgrade read -> write: reopen writable
  let row = await c.loadLive(sessionId);
  // The lease comes first: the committed state (and any repair of it) is read only under it.
  const fence = mode === 'write' ? await c.backend.leases.acquire(sessionId) : undefined;
  let session: LiveSession;
  try {
    if (fence) {
      row = await c.backend.load(sessionId, { writer: fence });
      if (row.trashed) throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
      row = await c.withUsage(row);
    }
    const header = JSON.parse(row.headerText) as SessionHeader;
    const resolved = resolveSecrets({ apiKeyEnv: header.llm?.apiKeyEnv, headerEnv: header.secretEnv, input: secretsInput }, c.env, c.vocabulary, prior);
    session = adopt(c, header, row, mode, fence, resolved.set, resolved.status);
  } catch (err) {
    if (fence) await c.backend.leases.release(fence).catch(() => undefined);
    throw err;
  }
  const state = stateOf(row);
  return session.describe(row.lastSeq, state.turn, state.header);
}

function adopt(c: Core, header: SessionHeader, row: SessionRow, mode: OpenMode, fence: Fence | undefined, secrets: SecretSet, status: SecretsStatus): LiveSession {
  c.secrets.addAll(secrets);
  let session: LiveSession | undefined;
  const queue = mode === 'write' && fence
    ? commitQueue({
      backend: c.backend, gate: c.gate, fence, clock: c.clock,
      generation: () => (session as LiveSession).generation,
      othersWaiting: () => c.requestsWaiting() > 1,
    }, row.lastSeq, stateOf(row))
    : undefined;
  session = new LiveSession(header, mode, fence, queue, secrets, status, row, c.scratch);
  if (row.recovered) session.recovered = row.recovered;
  const id = header.sessionId;
  // A fail-stopped session writes nothing more from this process: read-only here for good, and
  // its lease given back at once (not held until the process exits), so another sidecar can
  // take the session over.
  if (queue && fence) {
    queue.onStopped(() => {
      c.failStopped.add(id);
      void c.backend.leases.release(fence).catch(() => undefined);
    });
  }
  c.sessions.set(id, session);
  return session;
}

/** Waits for in-flight writes, then closes the session in this instance (its lease given back). */
export async function close(c: Core, sessionId: string): Promise<void> {
  checkSessionId(sessionId);
  const s = c.sessions.get(sessionId);
  if (!s) {
    await c.loadLive(sessionId); // SessionNotFound when there is no such session (or it is in the trash)
    return;
  }
  // A fail-stopped session stays: its committed view is this process's only true one.
  if (c.failStopped.has(sessionId)) return;
  c.sessions.delete(sessionId);
  await closeLive(c, s);
}

export async function closeLive(c: Core, s: LiveSession): Promise<void> {
  await s.drain();
  if (s.fence) await c.backend.leases.release(s.fence).catch(() => undefined); // a lease not released goes stale
}

/** Closes every open session, then the backend (process exit). */
export async function closeAll(c: Core): Promise<void> {
  const all = [...c.sessions.values()];
  c.sessions.clear();
  await Promise.allSettled(all.map((s) => closeLive(c, s)));
  await c.backend.close();
}
