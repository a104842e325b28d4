import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const DEFAULT_SEARCH_LIMIT = 50;
export const MAX_SEARCH_LIMIT = 500;

export const SessionSearchParams = paramsObject({
  query: z.string().min(1).max(1024).meta({ description: 'Case-insensitive substring of a message record\'s text' }),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().meta({ description: `Hits per page (default ${DEFAULT_SEARCH_LIMIT})` }),
  cursor: z.string().max(1024).optional().meta({ description: 'nextCursor of the previous page' }),
  sessionIds: z.array(SessionId).min(1).max(1000).optional().meta({ description: 'Search only these sessions (default: every live session)' }),
}).meta({ id: 'SessionSearchParams' });

export const SearchHit = z
  .object({
    sessionId: SessionId,
    seq: Seq,
    snippet: z.string().meta({ description: 'At most 160 characters of the text from a little before the match, whitespace folded' }),
  })
  .meta({ id: 'SearchHit' });

export const SessionSearchResult = resultObject({
  hits: z.array(SearchHit),
  nextCursor: z.string().optional(),
}).meta({ id: 'SessionSearchResult' });

export const sessionSearch = defineMethod({
  method: 'session/search', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionSearchParams, result: SessionSearchResult, capability: 'session.search',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'Search the text of message records across sessions; hits in (session, seq) order, paged by cursor.',
});

export type SessionSearchParams = z.infer<typeof SessionSearchParams>;
export type SessionSearchResult = z.infer<typeof SessionSearchResult>;
