import * as z from 'zod';
import { Seq, Timestamp } from './common.js';
import { StoredTurnRecord, TurnState } from './turns.js';
import { StoredSessionUpdateRecord } from './methods/session.update.js';
import { StoredUsageTotals } from './usage.js';
import { Redaction } from './secrets.js';
import {
  ApiRecord, BlobRef, RuntimeCounters, RuntimeRecordKinds, storedRuntimeShapes, ToolFinishRecord, ToolStartRecord, ToolStreamRecord,
} from './runtimeRecords.js';

/**
 * Records are what a session's journal holds. A client appends records; it reads them back
 * as stored records (the same fields plus `seq` and `ts`). The top level of every record is
 * strict (the names `seq`, `ts`, `turnId`, `idempotency`, `batchEnd` and `crc` belong to the store); message bodies
 * keep provider-specific members, with their values exact (member order may change).
 */

export const ToolCall = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    arguments: z.union([z.string(), BlobRef]).meta({ description: 'The tool arguments as the provider sent them (a JSON text; a BlobRef when stored as a blob)' }),
  })
  .meta({ id: 'ToolCall' });

export const ChatMessage = z
  .looseObject({
    role: z.string().min(1).max(64).meta({ description: 'system | user | assistant | tool | ... ' }),
    content: z.unknown().optional(),
    name: z.string().optional(),
    toolCalls: z.array(ToolCall).optional(),
    toolCallId: z.string().optional(),
    reasoningDetails: z.array(z.unknown()).optional(),
  })
  .meta({ id: 'ChatMessage' });

const messageShape = { kind: z.literal('message'), message: ChatMessage };
const interruptionShape = {
  kind: z.literal('interruption'),
  reason: z.string().min(1),
  phase: z.string().min(1).meta({ description: 'The turn phase that was interrupted, e.g. providerStream or executingTools' }),
  assistantText: z.union([z.string(), BlobRef]).optional(),
  toolCalls: z.array(ToolCall).optional(),
  toolResults: z.array(z.looseObject({ id: z.string(), name: z.string(), result: z.unknown() })).optional(),
};
const eventShape = {
  kind: z.literal('event'),
  type: z.string().min(1).max(256),
  payload: z.unknown(),
};
const stored = {
  seq: Seq.min(1),
  ts: Timestamp,
  turnId: z.string().optional().meta({ description: 'The turn that was pending when the record was appended' }),
  idempotency: z.strictObject({
    key: z.string(), digest: z.string(), firstSeq: Seq, lastSeq: Seq, redactions: z.array(Redaction).optional(),
  }).optional().meta({ description: 'On the first record of an append sent with an idempotencyKey: the key and that append\'s original result (§6.3)' }),
};

export const MessageRecord = z.strictObject(messageShape).meta({ id: 'MessageRecord' });
export const InterruptionRecord = z.strictObject(interruptionShape).meta({ id: 'InterruptionRecord' });
export const EventRecord = z.strictObject(eventShape).meta({ id: 'EventRecord' });

/** A record as a client appends it. */
export const Record = z
  .discriminatedUnion('kind', [MessageRecord, InterruptionRecord, EventRecord, ApiRecord, ToolStartRecord, ToolFinishRecord, ToolStreamRecord])
  .meta({ id: 'Record' });

/** Written by session/compact: stands for every record up to its seq (they are in the archive). */
export const StoredCheckpointRecord = z
  .strictObject({
    seq: Seq.min(1), ts: Timestamp, kind: z.literal('checkpoint'), generation: z.number().int(), throughSeq: Seq,
    turn: TurnState.nullable(), counters: z.object({ summarizedRecords: z.number().int() }),
    archived: z.object({ generation: z.number().int(), records: z.number().int(), bytes: z.number().int() }).optional()
      .meta({ description: 'The generation this compaction archived (absent in a fork, which has no archives)' }),
    summary: z.string(), provider: z.string().optional(), model: z.string().optional(),
    runtime: RuntimeCounters.optional().meta({ description: 'The apiSeq/toolSeq counters at throughSeq (absent: all zero)' }),
    header: z.strictObject({ title: z.string().optional(), metadata: z.record(z.string(), z.unknown()).optional(), tags: z.array(z.string()).optional() })
      .optional().meta({ description: 'The effective title/metadata/tags at throughSeq, when the session had a sessionUpdate record (absent: the header line\'s)' }),
    usage: StoredUsageTotals.optional().meta({ description: 'The usage totals at throughSeq (absent: none counted)' }),
  })
  .meta({ id: 'StoredCheckpointRecord' });

/** Written by session/rewind: from here on the session is as it was at toSeq, plus what follows. */
export const StoredRewindRecord = z
  .strictObject({
    seq: Seq.min(1), ts: Timestamp, kind: z.literal('rewind'),
    toSeq: Seq.meta({ description: 'The records after toSeq and before this one are rewound (still readable, left out of the context)' }),
    turn: TurnState.nullable().meta({ description: 'The turn state as of toSeq: the turn state from here on' }),
    openApi: z.array(z.number().int()).meta({ description: 'apiSeqs of the requests open as of toSeq (the apiSeq/toolSeq high-water marks are never rewound)' }),
  })
  .meta({ id: 'StoredRewindRecord' });

/** A record as read back: the appended fields plus its `seq` (gapless per session) and `ts`. */
export const StoredRecord = z
  .discriminatedUnion('kind', [
    z.strictObject({ ...stored, ...messageShape }),
    z.strictObject({ ...stored, ...interruptionShape }),
    z.strictObject({ ...stored, ...eventShape }),
    z.strictObject({ ...stored, ...storedRuntimeShapes.api }),
    z.strictObject({ ...stored, ...storedRuntimeShapes.toolStart }),
    z.strictObject({ ...stored, ...storedRuntimeShapes.toolFinish }),
    z.strictObject({ ...stored, ...storedRuntimeShapes.toolStream }),
    StoredTurnRecord,
    StoredCheckpointRecord,
    StoredSessionUpdateRecord,
    StoredRewindRecord,
  ])
  .meta({ id: 'StoredRecord' });

/** Kinds a client appends; `turn` records are written by the server's turn methods. */
export const RecordKinds = ['message', 'interruption', 'event', ...RuntimeRecordKinds] as const;

export type ChatMessage = z.infer<typeof ChatMessage>;
export type Record = z.infer<typeof Record>;
export type StoredRecord = z.infer<typeof StoredRecord>;
