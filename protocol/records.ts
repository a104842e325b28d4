import * as z from 'zod';
import { Seq, Timestamp, Count } from './common.js';
import { StoredTurnRecord, TurnState } from './turns.js';
import { StoredSessionUpdateRecord } from './methods/session.update.js';
import { StoredUsageTotals } from './usage.js';
import { IdempotencyStamp } from './secrets.js';
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
    content: z.unknown().optional().meta({ description: 'The message content: any JSON value (usually a string, an array of content parts, or null), kept exactly as sent (numbers keep their text, §5); never replaced by a BlobRef, whatever its size (§15.4)' }),
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
  toolResults: z.array(z.looseObject({
    id: z.string(),
    name: z.string(),
    result: z.unknown().meta({ description: 'What the tool returned: any JSON value, kept exactly as sent (numbers keep their text, §5); never replaced by a BlobRef (§15.4)' }),
  })).optional(),
};
const eventShape = {
  kind: z.literal('event'),
  type: z.string().min(1).max(256),
  payload: z.unknown().meta({ description: 'The event data: any JSON value (null when there is none; required), kept exactly as sent (numbers keep their text, §5); never replaced by a BlobRef (§15.4)' }),
};
const stored = {
  seq: Seq.min(1),
  ts: Timestamp,
  turnId: z.string().optional().meta({ description: 'The turn that was pending when the record was appended' }),
  idempotency: IdempotencyStamp.optional().meta({ description: 'On the first record of an append sent with an idempotencyKey: the key and that append\'s original result (§6.3)' }),
};

export const MessageRecord = z.strictObject(messageShape).meta({ id: 'MessageRecord' });
export const InterruptionRecord = z.strictObject(interruptionShape).meta({ id: 'InterruptionRecord' });
export const EventRecord = z.strictObject(eventShape).meta({ id: 'EventRecord' });

/** A record as a client appends it. */
export const Record = z
  .discriminatedUnion('kind', [MessageRecord, InterruptionRecord, EventRecord, ApiRecord, ToolStartRecord, ToolFinishRecord, ToolStreamRecord])
  .meta({
    id: 'Record',
    discriminator: kindDiscriminator([ // a function declaration below: hoisted
      ['message', 'MessageRecord'], ['interruption', 'InterruptionRecord'], ['event', 'EventRecord'], ['api', 'ApiRecord'],
      ['toolStart', 'ToolStartRecord'], ['toolFinish', 'ToolFinishRecord'], ['toolStream', 'ToolStreamRecord'],
    ]),
  });

/** Written by session/compact: stands for every record up to its seq (they are in the archive). */
export const StoredCheckpointRecord = z
  .strictObject({
    seq: Seq.min(1), ts: Timestamp, kind: z.literal('checkpoint'), generation: Count, throughSeq: Seq,
    turn: TurnState.nullable(), counters: z.object({ summarizedRecords: Count }),
    archived: z.object({ generation: Count, records: Count, bytes: Count }).optional()
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
    openApi: z.array(Count).meta({ description: 'apiSeqs of the requests open as of toSeq (the apiSeq/toolSeq high-water marks are never rewound)' }),
  })
  .meta({ id: 'StoredRewindRecord' });

/** The client's kinds as read back, each a named variant: the appended fields plus `seq` and `ts`. */
export const StoredMessageRecord = z.strictObject({ ...stored, ...messageShape }).meta({ id: 'StoredMessageRecord' });
export const StoredInterruptionRecord = z.strictObject({ ...stored, ...interruptionShape }).meta({ id: 'StoredInterruptionRecord' });
export const StoredEventRecord = z.strictObject({ ...stored, ...eventShape }).meta({ id: 'StoredEventRecord' });
export const StoredApiRecord = z.strictObject({ ...stored, ...storedRuntimeShapes.api }).meta({ id: 'StoredApiRecord' });
export const StoredToolStartRecord = z.strictObject({ ...stored, ...storedRuntimeShapes.toolStart }).meta({ id: 'StoredToolStartRecord' });
export const StoredToolFinishRecord = z.strictObject({ ...stored, ...storedRuntimeShapes.toolFinish }).meta({ id: 'StoredToolFinishRecord' });
export const StoredToolStreamRecord = z.strictObject({ ...stored, ...storedRuntimeShapes.toolStream }).meta({ id: 'StoredToolStreamRecord' });

/**
 * The OpenAPI-style `discriminator` annotation of a union on `kind` (JSON Schema ignores it; code
 * generators use it to pick the variant type): each kind mapped to its named definition.
 */
function kindDiscriminator(variants: Array<[string, string]>) {
  return { propertyName: 'kind', mapping: Object.fromEntries(variants.map(([kind, id]) => [kind, `#/$defs/${id}`])) };
}

/** A record as read back: the appended fields plus its `seq` (gapless per session) and `ts`. */
export const StoredRecord = z
  .discriminatedUnion('kind', [
    StoredMessageRecord, StoredInterruptionRecord, StoredEventRecord, StoredApiRecord, StoredToolStartRecord, StoredToolFinishRecord, StoredToolStreamRecord,
    StoredTurnRecord,
    StoredCheckpointRecord,
    StoredSessionUpdateRecord,
    StoredRewindRecord,
  ])
  .meta({
    id: 'StoredRecord',
    discriminator: kindDiscriminator([
      ['message', 'StoredMessageRecord'], ['interruption', 'StoredInterruptionRecord'], ['event', 'StoredEventRecord'], ['api', 'StoredApiRecord'],
      ['toolStart', 'StoredToolStartRecord'], ['toolFinish', 'StoredToolFinishRecord'], ['toolStream', 'StoredToolStreamRecord'], ['turn', 'StoredTurnRecord'],
      ['checkpoint', 'StoredCheckpointRecord'], ['sessionUpdate', 'StoredSessionUpdateRecord'], ['rewind', 'StoredRewindRecord'],
    ]),
  });

/** Kinds a client appends; `turn` records are written by the server's turn methods. */
export const RecordKinds = ['message', 'interruption', 'event', ...RuntimeRecordKinds] as const;

export type ChatMessage = z.infer<typeof ChatMessage>;
export type Record = z.infer<typeof Record>;
export type StoredRecord = z.infer<typeof StoredRecord>;
