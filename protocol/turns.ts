import * as z from 'zod';
import { Seq, Timestamp } from './common.js';

export const TurnKind = z.enum(['user', 'background']);
export const TurnPhase = z.enum(['accepted', 'compacting', 'providerStream', 'executingTools']);
export const TurnStatus = z.enum(['active', 'retryable', 'completed', 'interrupted', 'terminalFailure', 'abandoned']);
export const TurnOutcome = z.enum(['completed', 'interrupted', 'terminalFailure', 'abandoned']);

/** Where a session's current (or last) turn stands, reduced from its `turn` records. */
export const TurnState = z
  .object({
    turnId: z.string(),
    kind: TurnKind,
    phase: TurnPhase,
    status: TurnStatus,
    firstSeq: Seq.meta({ description: 'seq of the record that started the turn' }),
    lastSeq: Seq.optional().meta({ description: 'seq of the record that finished it' }),
    error: z.string().optional(),
  })
  .meta({ id: 'TurnState' });

/**
 * A turn transition as stored in the journal (written by the server, never appended by a
 * client): `event` says which transition, the other members its data.
 */
export const TurnRecordShape = {
  kind: z.literal('turn'),
  turnId: z.string(),
  event: z.enum(['start', 'phase', 'fail', 'resume', 'finish']),
  turnKind: TurnKind.optional(),
  phase: TurnPhase.optional(),
  outcome: TurnOutcome.optional(),
  error: z.string().optional(),
};

export const StoredTurnRecord = z
  .strictObject({ seq: Seq.min(1), ts: Timestamp, ...TurnRecordShape })
  .meta({ id: 'StoredTurnRecord' });

export type TurnState = z.infer<typeof TurnState>;
export type TurnPhase = z.infer<typeof TurnPhase>;
