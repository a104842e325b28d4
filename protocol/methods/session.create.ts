import * as z from 'zod';
import { defineMethod, IdempotencyKey, paramsObject, resultObject, SessionId, Timestamp } from '../common.js';
import { EnvVarName, Redaction, SecretsParam, SecretsStatus } from '../secrets.js';
import { ParentLink } from './session.lineage.js';
import { DEFAULT_BLOB_THRESHOLD } from './blob.js';
import { KeepScratch } from './tool.js';
import { Tags } from '../tags.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';


export const LlmConfig = z
  .strictObject({
    provider: z.string().max(256).optional(),
    model: z.string().max(256).optional(),
    baseUrl: z.string().max(2048).optional(),
    apiKeyEnv: EnvVarName.optional().meta({
      description: 'NAME of the environment variable holding the API key; the value is never stored',
    }),
  })
  .meta({ id: 'LlmConfig' });

export const SessionCreateParams = paramsObject({
  cwd: z.string().max(4096).optional(),
  title: z.string().max(1024).optional(),
  systemPrompt: z.string().optional(),
  llm: LlmConfig.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tags: Tags.optional().meta({ description: 'Labels for session/list filters (capability session.update)' }),
  secrets: SecretsParam.optional(),
  parent: ParentLink.optional().meta({ description: 'The session this one continues or forks (stored in the header)' }),
  turns: z.enum(['manual', 'auto']).optional().meta({
    description: 'manual (default): turns only through turn/* methods; auto: messages drive the turn lifecycle',
  }),
  keepScratch: KeepScratch.optional().meta({ description: 'When tool scratch directories survive session/close (default never)' }),
  ephemeral: z.boolean().optional().meta({
    description: 'Keep the session in this process\'s memory only: never written to the store, gone at session/close and at exit (capability session.ephemeral)',
  }),
  blobThreshold: z.number().int().min(1024).max(1 << 30).optional().meta({
    description: `Strings at a BlobRef position (protocol/blobPositions.ts: tool-call arguments, interruption assistantText, toolStream text and dataBase64) larger than this many UTF-8 bytes are stored as blobs (default ${DEFAULT_BLOB_THRESHOLD}); every other string stays in its record`,
  }),
  idempotencyKey: IdempotencyKey.optional().meta({
    description: 'Per store: a retry with the same key and the same params answers the original result (the same sessionId, opened for writing again) and creates nothing; '
      + 'the same key with other params is Conflict (reason idempotencyKeyReused). Kept in the session\'s header while the session is not deleted (§6.3). Not with ephemeral',
  }),
}).meta({ id: 'SessionCreateParams' });

export const SessionCreateResult = resultObject({
  sessionId: SessionId,
  createdAt: Timestamp,
  secrets: SecretsStatus,
  redactions: z.array(Redaction).optional().meta({ description: 'What was redacted in the header (seq 0), when anything was' }),
}).meta({ id: 'SessionCreateResult' });

export const sessionCreate = defineMethod({
  method: 'session/create', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionCreateParams, result: SessionCreateResult, capability: 'session.create',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, CONTENT_ERRORS, ['Conflict', 'NotWritten', 'Uncertain']),
  summary: 'Create a session (durably, before answering) and open it for writing in this connection; register its secrets.',
});

export type SessionCreateParams = z.infer<typeof SessionCreateParams>;
export type SessionCreateResult = z.infer<typeof SessionCreateResult>;
