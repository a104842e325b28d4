/**
 * session/update, once for every backend: the request's members normalized (title sanitized,
 * tags checked) and passed through the secret gate as the exact `sessionUpdate` record that is
 * stored, then laid out at commit time against the header state the records before it leave
 * (so concurrent updates and appends are ordered by the commit queue, and the result's limits
 * are checked against the state it really applies to).
 */
import { StoreError } from '../../domain/errors.js';
import { guardValue } from '../../domain/secrets/gate.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import { applyUpdate, effectiveHeader, type HeaderState, normalizeUpdate, type SessionUpdate } from '../../domain/sessionUpdate.js';
import type { SessionHeader, UpdatedHeader } from '../../domain/types.js';
import type { AppendRequest } from './layOut.js';

export interface PreparedUpdate {
  text: string;
  value: SessionUpdate;
  redactions: Redaction[];
}

/** The record of one update, through the gate: a registered secret refuses it, credentials are redacted. */
export function prepareUpdate(update: SessionUpdate, secrets: SecretSet, maxBytes: number): PreparedUpdate {
  const guarded = guardValue({ kind: 'sessionUpdate', ...normalizeUpdate(update) }, secrets, 'update');
  if (Buffer.byteLength(guarded.text) > maxBytes) throw new StoreError('PayloadTooLarge', `the update is larger than ${maxBytes} bytes`, { maxBytes });
  const { kind: _k, ...value } = guarded.value as { kind: string } & SessionUpdate;
  return { text: guarded.text, value, redactions: guarded.redactions };
}

/**
 * The plan of one update: the effective header state after it, refused (nothing written) when
 * the resulting header would exceed the header size limit or hold a registered secret.
 */
export function updatePlan(
  prepared: PreparedUpdate, base: HeaderState, header: SessionHeader, secrets: SecretSet, maxHeaderBytes: number,
): { plan: NonNullable<AppendRequest['plan']>; after(): HeaderState | undefined } {
  let after: HeaderState | undefined;
  const plan: NonNullable<AppendRequest['plan']> = (state) => {
    const next = applyUpdate(state.header ?? base, prepared.value);
    const text = JSON.stringify(effectiveHeader(header, next));
    if (Buffer.byteLength(text) > maxHeaderBytes) {
      throw new StoreError('PayloadTooLarge', `the session header would be larger than ${maxHeaderBytes} bytes; nothing was written`, { maxBytes: maxHeaderBytes });
    }
    const rule = secrets.size > 0 ? secrets.findInText(text) : undefined;
    if (rule !== undefined) {
      throw new StoreError('SecretRejected', 'the updated header would hold a registered secret; nothing was written', { path: 'update', rule: String(rule) });
    }
    after = next;
    return { ...state, texts: [prepared.text], kinds: ['sessionUpdate'], header: next };
  };
  return { plan, after: () => after };
}

/** The answer: the effective header (without secret env names) and the update record's seq. */
export function updatedHeader(header: SessionHeader, state: HeaderState | undefined, seq: number, redactions: Redaction[]): UpdatedHeader {
  const { secretEnv: _names, idempotency: _key, ...shown } = effectiveHeader(header, state);
  const rs = redactions.map((r) => ({ ...r, seq }));
  return { ...shown, seq, ...(rs.length > 0 ? { redactions: rs } : {}) };
}
