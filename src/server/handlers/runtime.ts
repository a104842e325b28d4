import {
  blobGet, DEFAULT_BLOB_CHUNK, stateDelete, stateGet, stateSet, toolAllocateScratch,
} from '../../../protocol/index.js';
import type { SessionStore } from '../../domain/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** tool/*, state/*, blob/* — each handler only translates params to one store call. */
export function runtimeHandlers(store: SessionStore): RequestHandler[] {
  return [
    handle(toolAllocateScratch, (p) => store.allocateScratch(p.sessionId, p.requestId, p.keepScratch)),
    handle(stateSet, async (p) => {
      const { redactions } = await store.setState(p.sessionId, p.key, p.value);
      return redactions.length > 0 ? { redactions: redactions.map((r) => ({ seq: 0, ...r })) } : {};
    }),
    handle(stateGet, async (p) => ({ value: await store.getState(p.sessionId, p.key) })),
    handle(stateDelete, async (p) => ({ deleted: await store.deleteState(p.sessionId, p.key) })),
    handle(blobGet, async (p) => {
      const chunk = await store.getBlob(p.sessionId, p.ref, p.offset ?? 0, p.length ?? DEFAULT_BLOB_CHUNK);
      return { dataBase64: chunk.bytes.toString('base64'), offset: chunk.offset, bytes: chunk.size, eof: chunk.offset + chunk.bytes.length >= chunk.size };
    }),
  ];
}
