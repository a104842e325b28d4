import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, SessionId, Count } from '../common.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const DEFAULT_BLOB_CHUNK = 1 << 20;
export const MAX_BLOB_CHUNK = 8 << 20;
export const DEFAULT_BLOB_THRESHOLD = 256 << 10;

export const BlobGetParams = paramsObject({
  sessionId: SessionId,
  ref: z.string().meta({ description: 'The $blob member of a BlobRef: sha256:<hex>' }),
  offset: z.number().int().min(0).optional().meta({ description: 'First byte to return (default 0)' }),
  length: z.number().int().min(1).max(MAX_BLOB_CHUNK).optional().meta({ description: `At most this many bytes (default ${DEFAULT_BLOB_CHUNK})` }),
}).meta({ id: 'BlobGetParams' });

export const BlobGetResult = resultObject({
  dataBase64: z.string().meta({ description: 'The bytes [offset, offset + length), base64' }),
  offset: Count,
  bytes: Count.meta({ description: 'Total size of the blob' }),
  eof: z.boolean().meta({ description: 'true when this chunk reaches the end of the blob' }),
}).meta({ id: 'BlobGetResult' });

export const blobGet = defineMethod({
  method: 'blob/get', kind: 'request', direction: 'clientToServer', since: 1,
  params: BlobGetParams, result: BlobGetResult, capability: 'blob',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, ['OutOfRange']),
  summary: 'Read a chunk of a content-addressed blob of the store (blobs are store-wide: the digest names the content).',
});

export type BlobGetParams = z.infer<typeof BlobGetParams>;
export type BlobGetResult = z.infer<typeof BlobGetResult>;
