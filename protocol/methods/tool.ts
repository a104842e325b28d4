import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, SessionId } from '../common.js';
import { SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const KeepScratch = z.enum(['always', 'onFailure', 'never']).meta({
  id: 'KeepScratch',
  description: 'When a tool scratch directory survives session/close: always, onFailure (its toolFinish says success: false, or it never finished), never',
});

export const ToolAllocateScratchParams = paramsObject({
  sessionId: SessionId,
  requestId: z.string().min(1).max(256).meta({ description: 'The runtime request the tool run belongs to (as in toolStart)' }),
  keepScratch: KeepScratch.optional().meta({ description: "Overrides the session's keepScratch for this directory" }),
}).meta({ id: 'ToolAllocateScratchParams' });

export const ToolAllocateScratchResult = resultObject({
  toolSeq: z.number().int().min(1).meta({ description: 'The tool run this directory belongs to: pass it in toolStart' }),
  dir: z.string().meta({ description: 'Absolute path of the fresh, private (0700) directory' }),
  tmpDir: z.string().meta({ description: 'Absolute path of an empty tmp/ directory inside it (for TMPDIR)' }),
}).meta({ id: 'ToolAllocateScratchResult' });

export const toolAllocateScratch = defineMethod({
  method: 'tool/allocateScratch', kind: 'request', direction: 'clientToServer', since: 1,
  params: ToolAllocateScratchParams, result: ToolAllocateScratchResult, capability: 'tool.scratch',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, ['ReadOnly', 'LeaseLost', 'NotWritten', 'Uncertain']),
  summary: 'Reserve the next toolSeq and create its private scratch directory (tool-000001, ...) under the session.',
});

export type ToolAllocateScratchParams = z.infer<typeof ToolAllocateScratchParams>;
export type ToolAllocateScratchResult = z.infer<typeof ToolAllocateScratchResult>;
