import {
  sessionCompact, sessionHistory,
  DEFAULT_LIST_LIMIT, DEFAULT_READ_LIMIT, sessionAppend, sessionClose, sessionCreate, sessionList, sessionOpen, sessionRead, sessionSearch, sessionUpdate,
  type SessionReadResult,
} from '../../../protocol/index.js';
import { RawJson } from '../../framing/writers.js';
import { StoreError } from '../../domain/errors.js';
import type { ReadPage, SessionStore } from '../../domain/types.js';
import { searchSessions } from '../../core/services/search.js';
import { cancelled, handle, type RequestHandler } from '../dispatch.js';

/** session/* — each handler only translates params to one store call. */
export function sessionHandlers(store: SessionStore): RequestHandler[] {
  return [
    handle(sessionCreate, async ({ _meta, secrets, ephemeral, idempotencyKey, ...header }) => {
      if (!ephemeral) return store.create(header, secrets, { idempotencyKey });
      if (idempotencyKey !== undefined) throw new StoreError('InvalidArgument', 'an ephemeral session takes no idempotencyKey (it is gone with this process)', { path: 'idempotencyKey' });
      if (!store.createEphemeral) throw new StoreError('InvalidArgument', 'this server keeps no ephemeral sessions', { path: 'ephemeral' });
      return store.createEphemeral(header, secrets);
    }),
    handle(sessionOpen, async (p) => store.open(sessionToOpen(store, p), p.mode ?? 'write', p.secrets)),
    handle(sessionAppend, async (p, token) => {
      if (token.isCancellationRequested) throw cancelled();
      return store.append(p.sessionId, p.records, { expectedLastSeq: p.expectedLastSeq, idempotencyKey: p.idempotencyKey });
    }),
    handle(sessionRead, async (p) => {
      const opts = { generation: p.generation, afterSeq: p.afterSeq, limit: p.limit ?? DEFAULT_READ_LIMIT, kinds: p.kinds };
      if (p.inline || !store.readText) return wirePage(await store.read(p.sessionId, { ...opts, inline: p.inline }));
      // The records' stored JSON bytes go out as they are: no objects built, none re-serialized.
      const page = await store.readText(p.sessionId, opts);
      return new RawJson<SessionReadResult>([OPEN_RECORDS, ...page.body, Buffer.from(`],"lastSeq":${page.lastSeq},"nextAfterSeq":${page.nextAfterSeq}}`)], page.release);
    }),
    handle(sessionCompact, async ({ _meta, sessionId, ...req }) => store.compact(sessionId, req)),
    handle(sessionHistory, async (p) => ({ generations: await store.history(p.sessionId) })),
    handle(sessionList, async ({ _meta, ...p }) => store.list({ ...p, limit: p.limit ?? DEFAULT_LIST_LIMIT })),
    handle(sessionUpdate, async ({ _meta, sessionId, idempotencyKey, ...update }) => store.update(sessionId, update, { idempotencyKey })),
    handle(sessionSearch, async ({ _meta, ...req }) => searchSessions(store, req)),
    handle(sessionClose, async (p) => {
      await store.close(p.sessionId);
      return {};
    }),
  ];
}

const OPEN_RECORDS = Buffer.from('{"records":[');

/**
 * The store types records loosely (any `kind`: its own tests append extension kinds); over the
 * protocol every record was parsed by the append schema (protocol/records.ts) before it was
 * stored, and is read back as stored — so a page the server reads is the protocol's shape.
 */
function wirePage(page: ReadPage): SessionReadResult {
  return page as unknown as SessionReadResult;
}

/** session/open names its session by id or by path (resume by path), exactly one of them. */
function sessionToOpen(store: SessionStore, p: { sessionId?: string; path?: string }): string {
  if ((p.sessionId === undefined) === (p.path === undefined)) {
    throw new StoreError('InvalidArgument', 'session/open takes exactly one of sessionId and path', { path: p.path === undefined ? 'sessionId' : 'path' });
  }
  return p.sessionId ?? store.sessionIdOfPath(p.path as string);
}
