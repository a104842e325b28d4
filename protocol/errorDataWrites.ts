import * as z from 'zod';
import { TurnState } from './turns.js';

/*
 * `error.data` of the kinds that refuse or fail a write: what was (not) written, and why. Open
 * objects like every error data (a server may add members; ignore those you do not know); every
 * member but `kind` is optional because which appear depends on the cause. The members listed
 * are every one the server sends today (src/backends, src/core, src/domain).
 */
const int = () => z.number().int().min(0);
const errno = () => z.string().optional().meta({ description: 'The system error code, e.g. ENOSPC or EIO, when known' });
const sqlstate = () => z.string().optional().meta({ description: 'PostgreSQL backend: the SQLSTATE class of the failure (never the database\'s text)' });
const stage = () => z.string().optional().meta({ description: 'Where it failed, e.g. preCommit' });

/** Nothing was written; the session stays writable. */
export const NotWrittenErrorData = z
  .looseObject({
    kind: z.literal('NotWritten'), errno: errno(), stage: stage(), sqlstate: sqlstate(),
    sessionId: z.string().optional(),
    reason: z.string().optional().meta({ description: 'PostgreSQL backend: e.g. dataRejected' }),
    outcome: z.literal('notWritten').optional(),
  })
  .meta({ id: 'NotWrittenErrorData' });

/** Some bytes were written and truncated away: nothing changed. */
export const RolledBackErrorData = z
  .looseObject({ kind: z.literal('RolledBack'), errno: errno() })
  .meta({ id: 'RolledBackErrorData' });

/** The write may or may not be durable; the session is fail-stopped in this process (§6.3). */
export const UncertainErrorData = z
  .looseObject({ kind: z.literal('Uncertain'), errno: errno(), stage: stage(), sessionId: z.string().optional() })
  .meta({ id: 'UncertainErrorData' });

export const ReadOnlyErrorData = z
  .looseObject({
    kind: z.literal('ReadOnly'),
    sessionId: z.string().optional(),
    reason: z.string().optional().meta({ description: 'notOpen, openedReadOnly, failStop or readOnlyStore' }),
  })
  .meta({ id: 'ReadOnlyErrorData' });

export const LeaseLostErrorData = z
  .looseObject({ kind: z.literal('LeaseLost'), sessionId: z.string().optional(), outcome: z.literal('notWritten').optional() })
  .meta({ id: 'LeaseLostErrorData' });

export const UnavailableErrorData = z
  .looseObject({
    kind: z.literal('Unavailable'),
    reason: z.string().optional().meta({ description: 'One fixed word, e.g. connection, serverShutdown, authentication (§6.2)' }),
    retryable: z.boolean().optional(),
    retryAfterMs: int().optional(),
    outcome: z.enum(['notWritten', 'unknown']).optional().meta({ description: 'For writes: unknown when the connection broke while COMMIT was in flight' }),
    sqlstate: sqlstate(),
  })
  .meta({ id: 'UnavailableErrorData' });

export const PayloadTooLargeErrorData = z
  .looseObject({
    kind: z.literal('PayloadTooLarge'),
    index: int().optional().meta({ description: 'The record (index in records) that is too large' }),
    maxBytes: int().optional(),
    maxMessageBytes: int().optional().meta({ description: 'The message (frame) limit, when the whole message is too large' }),
  })
  .meta({ id: 'PayloadTooLargeErrorData' });

export const SecretRejectedErrorData = z
  .looseObject({
    kind: z.literal('SecretRejected'),
    path: z.string().optional().meta({ description: 'Where the secret is, in the path grammar of §6.1' }),
    rule: z.string().optional().meta({ description: 'In which form: raw, json-escape, percent, base64, base64url, hex, nested-json, or a credential rule' }),
    index: int().optional(),
    ref: z.string().optional().meta({ description: 'The blob holding it' }),
  })
  .meta({ id: 'SecretRejectedErrorData' });

export const InvalidTurnTransitionErrorData = z
  .looseObject({
    kind: z.literal('InvalidTurnTransition'),
    turn: TurnState.nullable().optional().meta({ description: 'The current turn state' }),
    reason: z.string().optional(),
  })
  .meta({ id: 'InvalidTurnTransitionErrorData' });
