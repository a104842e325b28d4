import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId, Timestamp, Count } from '../common.js';
import { SecretsParam, SecretsStatus } from '../secrets.js';
import { TurnState } from '../turns.js';
import { LlmConfig } from './session.create.js';
import { ParentLink } from './session.lineage.js';
import { KeepScratch } from './tool.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const OpenMode = z.enum(['write', 'read']);

export const SessionOpenParams = paramsObject({
  sessionId: SessionId.optional().meta({ description: 'The session to open (exactly one of sessionId and path)' }),
  path: z.string().min(1).max(4096).optional().meta({
    description: 'Resume by path: a journal file or session directory inside the store (relative paths: to the server\'s working directory); anything outside the store is refused with UnsafeStore',
  }),
  mode: OpenMode.optional().meta({ description: 'write (default): may append; read: never changes the journal' }),
  secrets: SecretsParam.optional().meta({ description: 'More secrets for this session (values must be sent again after a restart)' }),
}).meta({ id: 'SessionOpenParams' });

export const Recovered = z
  .object({
    bytes: Count.meta({ description: 'Bytes of torn tail removed from the journal' }),
    evidence: z.string().meta({ description: 'Path, relative to the store root, of the file keeping those bytes' }),
  })
  .meta({ id: 'Recovered' });

export const SessionOpenResult = resultObject({
  sessionId: SessionId,
  mode: OpenMode,
  createdAt: Timestamp,
  title: z.string().optional(),
  cwd: z.string().optional(),
  systemPrompt: z.string().optional(),
  llm: LlmConfig.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
  parent: ParentLink.optional(),
  lastSeq: Seq,
  secrets: SecretsStatus,
  turns: z.enum(['manual', 'auto']).optional(),
  turn: TurnState.nullable().meta({ description: 'The current or last turn (null when the session never had one)' }),
  recovered: Recovered.optional(),
  keepScratch: KeepScratch.optional(),
  blobThreshold: Count.optional(),
}).meta({ id: 'SessionOpenResult' });

export const sessionOpen = defineMethod({
  method: 'session/open', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionOpenParams, result: SessionOpenResult, capability: 'session.open',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, ['SessionLocked', 'ReadOnly', 'Conflict', 'NotWritten', 'Uncertain']),
  summary: 'Open a session: in write mode, repair a torn tail (keeping evidence) and allow appends.',
});

export type SessionOpenParams = z.infer<typeof SessionOpenParams>;
export type SessionOpenResult = z.infer<typeof SessionOpenResult>;
