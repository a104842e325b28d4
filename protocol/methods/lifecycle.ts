import * as z from 'zod';
import { EmptyParams, defineMethod, paramsObject, resultObject, Count } from '../common.js';

export const InitializeParams = paramsObject({
  protocolVersion: z.number().int().optional().meta({
    description: 'The one protocol version the client speaks (1); refused with UnsupportedProtocolVersion if the server does not speak it. At least one of protocolVersion and protocolVersions',
  }),
  protocolVersions: z.array(z.number().int()).min(1).max(64).optional().meta({
    description: 'Every protocol version the client speaks: the server answers with the highest of them it speaks (§4.1), or UnsupportedProtocolVersion when it speaks none. At least one of protocolVersion and protocolVersions',
  }),
  clientInfo: z.object({ name: z.string(), version: z.string().optional() }).optional(),
  processId: z.number().int().nullable().optional().meta({
    description: 'The client process id: the server exits when that process dies',
  }),
  capabilities: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: 'InitializeParams' });

export const ServerCapabilities = z
  .looseObject({
    framings: z.array(z.enum(['lsp', 'ndjson'])),
    maxMessageBytes: Count,
    recordKinds: z.array(z.string()),
    session: z.object({
      create: z.boolean(),
      open: z.object({ modes: z.array(z.enum(['write', 'read'])) }),
      append: z.object({ maxRecords: Count, expectedLastSeq: z.boolean(), idempotencyKey: z.boolean().optional().meta({ description: "session/append accepts idempotencyKey (§6.3)" }) }),
      read: z.object({ maxLimit: Count, kinds: z.boolean() }),
      list: z.object({ maxLimit: Count, filters: z.boolean().optional() }),
      context: z.object({ prune: z.boolean() }),
      compact: z.boolean(),
      fork: z.boolean(),
      delete: z.object({ trash: z.boolean(), purge: z.boolean() }),
      subscribe: z.object({ crossProcess: z.boolean(), maxUnsentRecords: Count }),
      usage: z.boolean().optional().meta({ description: 'session/usage: token usage totals by model' }),
      rewind: z.boolean().optional().meta({ description: 'session/rewind: undo in place with a rewind record' }),
      prune: z.object({ dryRun: z.boolean(), tags: z.boolean() }).optional().meta({ description: 'session/prune (§18)' }),
      ephemeral: z.object({ scratch: z.boolean() }).optional().meta({ description: 'session/create ephemeral: true (§17); scratch: whether tool/allocateScratch works for one' }),
      update: z.object({ maxTags: Count }).optional(),
      idempotencyKey: z.object({ append: z.boolean(), create: z.boolean(), update: z.boolean() }).optional()
        .meta({ description: 'Which methods accept idempotencyKey (§6.3): a retry with the same key answers the original result' }),
      search: z.object({ maxLimit: Count }).optional(),
    }).loose(),
    turns: z.object({ modes: z.array(z.enum(['manual', 'auto'])) }),
    tool: z.object({ scratch: z.boolean() }).optional(),
    state: z.object({ maxValueBytes: Count }).optional(),
    blob: z.object({ defaultThreshold: Count, maxChunk: Count }).optional(),
    encryptionAtRest: z.object({
      algorithm: z.literal('AES-256-GCM'),
      active: z.boolean().meta({ description: 'Whether this store is encrypted (serve --encryption-key-env / --encryption-key-file)' }),
    }).optional().meta({ description: 'Encryption at rest of the file store (§20); absent with a PostgreSQL store' }),
  })
  .meta({ id: 'ServerCapabilities' });

export const InitializeResult = resultObject({
  protocolVersion: z.number().int().min(1).meta({ description: 'The version settled on: the highest the client offered that the server speaks (1 in this build)' }),
  serverInfo: z.object({ name: z.string(), version: z.string() }),
  capabilities: ServerCapabilities,
  store: z.object({
    root: z.string().meta({ description: 'Absolute path of the store directory (file backend), or the database URL without its password (postgres)' }),
    backend: z.enum(['file', 'postgres']).meta({ description: 'Which persistence backend the store uses' }),
  }),
}).meta({ id: 'InitializeResult' });

export const initialize = defineMethod({
  method: 'initialize', kind: 'request', direction: 'clientToServer', since: 1,
  params: InitializeParams, result: InitializeResult,
  errors: ['UnsupportedProtocolVersion'],
  summary: 'First request of a connection: agree on the protocol version, learn capabilities and the store root.',
});
export const initialized = defineMethod({
  method: 'initialized', kind: 'notification', direction: 'clientToServer', since: 1,
  params: EmptyParams.optional(),
  summary: 'Sent by the client after it received the initialize result.',
});
export const shutdown = defineMethod({
  method: 'shutdown', kind: 'request', direction: 'clientToServer', since: 1,
  params: EmptyParams.optional(), result: z.null(),
  errors: [],
  summary: 'Finish in-flight appends, close every session; the server then waits for exit.',
});
export const exit = defineMethod({
  method: 'exit', kind: 'notification', direction: 'clientToServer', since: 1,
  params: EmptyParams.optional(),
  summary: 'Exit the process: code 0 after shutdown, 1 otherwise.',
});

export type InitializeParams = z.infer<typeof InitializeParams>;
export type InitializeResult = z.infer<typeof InitializeResult>;
