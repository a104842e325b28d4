import * as z from 'zod';
import { Count } from './common.js';

/**
 * What an agent runtime journals besides the conversation: provider API traffic and tool runs.
 * They share the session's journal and seq with the conversation (one all-or-nothing append may
 * mix them), and are numbered by their own counters, assigned by the server at commit time:
 * `apiSeq` pairs a request with its response; `toolSeq` names one tool run (its scratch
 * directory, its streams, its finish). Counters continue across close, restart and
 * compaction and are never reused. Readers that do not ask for these kinds skip their lines
 * without parsing them (see STORAGE.md, "Runtime records").
 */

/** A large string stored once as a content-addressed blob, in place of the string. */
export const BlobRef = z
  .strictObject({
    $blob: z.string().regex(/^sha256:[0-9a-f]{64}$/).meta({ description: 'sha256:<hex> of the UTF-8 bytes of the string' }),
    bytes: z.number().int().min(0).meta({ description: 'Length of the blob in bytes' }),
    mediaType: z.string().max(256).optional().meta({ description: 'Given by the client when it marked the value as an attachment' }),
  })
  .meta({ id: 'BlobRef' });

/**
 * A value marked to be stored as a blob whatever its size. Not accepted in a record of protocol
 * version 1 (§15.4): the BlobRef positions take a string or a BlobRef, and an object using
 * `$attach` anywhere else is refused with -32602.
 */
export const Attachment = z
  .strictObject({
    $attach: z.string().meta({ description: 'The content (e.g. base64 image data), to be stored as a blob' }),
    mediaType: z.string().max(256).optional(),
  })
  .meta({ id: 'Attachment', description: 'A request to store a string as a blob whatever its size. Not accepted in a record of protocol version 1: the BlobRef positions take a string or a BlobRef, and $attach anywhere else is refused with -32602 (§15.4)' });

const ToolSeq = z.number().int().min(1).max(2 ** 31 - 1);
const blobbable = z.union([z.string(), BlobRef]);

export const apiShape = {
  kind: z.literal('api'),
  direction: z.enum(['request', 'response']).meta({
    description: 'A request opens the next apiSeq; a response pairs with the latest request still open',
  }),
  payload: z.unknown().meta({ description: 'The provider request or response body, as the runtime sent or received it' }),
};
export const toolStartShape = {
  kind: z.literal('toolStart'),
  toolSeq: ToolSeq.optional().meta({ description: 'From tool/allocateScratch; omitted: the server assigns the next one' }),
  requestId: z.string().min(1).max(256),
  tool: z.string().min(1).max(256),
  toolUseId: z.string().max(256).optional(),
  agent: z.string().max(256).optional(),
};
export const toolFinishShape = {
  kind: z.literal('toolFinish'),
  toolSeq: ToolSeq,
  requestId: z.string().min(1).max(256),
  status: z.string().max(256).optional(),
  exitCode: z.number().int().optional(),
  success: z.boolean(),
  outputLen: z.number().int().min(0).optional(),
  error: z.string().optional(),
};
export const toolStreamShape = {
  kind: z.literal('toolStream'),
  toolSeq: ToolSeq,
  stream: z.enum(['stdout', 'stderr']),
  text: z.string().optional().meta({ description: 'A UTF-8 chunk (exactly one of text and dataBase64)' }),
  dataBase64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/).optional().meta({ description: 'Any other bytes, base64 (exactly one of text and dataBase64)' }),
};

export const ApiRecord = z.strictObject(apiShape).meta({ id: 'ApiRecord' });
export const ToolStartRecord = z.strictObject(toolStartShape).meta({ id: 'ToolStartRecord' });
export const ToolFinishRecord = z.strictObject(toolFinishShape).meta({ id: 'ToolFinishRecord' });
export const ToolStreamRecord = z.strictObject(toolStreamShape).meta({ id: 'ToolStreamRecord' });

/** The members the server adds to runtime records (after `kind`). */
export const storedRuntimeShapes = {
  api: { ...apiShape, apiSeq: ToolSeq },
  toolStart: { ...toolStartShape, toolSeq: ToolSeq },
  toolFinish: toolFinishShape,
  toolStream: { ...toolStreamShape, text: blobbable.optional(), dataBase64: blobbable.optional() },
};

/** The runtime counters after a record: carried by checkpoints so they survive compaction. */
export const RuntimeCounters = z
  .object({
    apiSeq: z.number().int().min(0).meta({ description: 'The last apiSeq assigned' }),
    openApi: z.array(Count).meta({ description: 'apiSeqs of requests still waiting for their response, oldest first' }),
    toolSeq: z.number().int().min(0).meta({ description: 'The highest toolSeq started' }),
  })
  .meta({ id: 'RuntimeCounters' });

export const RuntimeRecordKinds = ['api', 'toolStart', 'toolFinish', 'toolStream'] as const;

export type BlobRef = z.infer<typeof BlobRef>;
export type RuntimeCounters = z.infer<typeof RuntimeCounters>;
