/**
 * The requests of protocol/vectors.json, by scenario: each runs on a fresh store and a fresh
 * server, in order, one answer awaited before the next request. `<id:N>` stands for the N-th
 * ULID the scenario's responses showed (normalize.ts). Only what every client can replay
 * through the protocol alone: no file manipulation, no timing, nothing whose answer depends on
 * the order of two ids made in one millisecond.
 */
export interface VectorRequest {
  method: string;
  params?: unknown;
}

/** Every scenario starts with this initialize (its answer is the scenario's first step). */
export const INITIALIZE: VectorRequest = { method: 'initialize', params: { protocolVersion: 1, clientInfo: { name: 'vectors' } } };

const user = (content: string) => ({ kind: 'message', message: { role: 'user', content } });
const assistant = (content: string) => ({ kind: 'message', message: { role: 'assistant', content } });
const S = '<id:1>'; // the scenario's first session (its create answers first after initialize, which shows no ULID)

export const SCENARIOS: Record<string, VectorRequest[]> = {
  lifecycle: [
    { method: 'session/list', params: {} },
    { method: 'initialize', params: { protocolVersion: 1 } },
    { method: 'shutdown' },
    { method: 'session/list', params: {} },
  ],
  sessions: [
    { method: 'session/create', params: { title: 'Vectors', systemPrompt: 'Be brief.', tags: ['demo'], metadata: { project: 'v' } } },
    { method: 'session/append', params: { sessionId: S, records: [user('héllo ✓ 😀'), assistant('hi'), { kind: 'event', type: 'note', payload: { n: 1.5, list: [1, 2, 3], nested: { ok: true } } }] } },
    { method: 'session/read', params: { sessionId: S } },
    { method: 'session/read', params: { sessionId: S, afterSeq: 1, limit: 1, kinds: ['message'] } },
    { method: 'session/update', params: { sessionId: S, title: 'Renamed', tags: ['demo', 'two'] } },
    { method: 'session/open', params: { sessionId: S, mode: 'read' } },
    { method: 'session/list', params: {} },
    { method: 'session/search', params: { query: 'héllo' } },
    { method: 'session/context', params: { sessionId: S } },
    { method: 'session/close', params: { sessionId: S } },
    { method: 'session/append', params: { sessionId: S, records: [user('after close')] } },
  ],
  errors: [
    { method: 'session/create', params: {} },
    { method: 'session/read', params: { sessionId: '01J0000000000000000000000Z' } },
    { method: 'session/read', params: { sessionId: '../escape' } },
    { method: 'session/create', params: { title: 7 } },
    { method: 'session/teleport', params: {} },
    { method: 'session/append', params: { sessionId: 'nosuch', records: [] } },
    { method: 'session/append', params: { sessionId: S, records: [user('one')], expectedLastSeq: 5 } },
    { method: 'session/read', params: { sessionId: S, generation: 3 } },
  ],
  idempotency: [
    { method: 'session/create', params: { title: 'Keyed', idempotencyKey: 'create-1' } },
    { method: 'session/create', params: { title: 'Keyed', idempotencyKey: 'create-1' } },
    { method: 'session/append', params: { sessionId: S, records: [user('once')], idempotencyKey: 'append-1' } },
    { method: 'session/append', params: { sessionId: S, records: [user('once')], idempotencyKey: 'append-1' } },
    { method: 'session/append', params: { sessionId: S, records: [user('other')], idempotencyKey: 'append-1' } },
    { method: 'session/read', params: { sessionId: S } },
  ],
  turns: [
    { method: 'session/create', params: { title: 'Turns' } },
    { method: 'turn/start', params: { sessionId: S, kind: 'user' } },
    { method: 'turn/setPhase', params: { sessionId: S, turnId: '<id:2>', phase: 'providerStream' } },
    { method: 'turn/get', params: { sessionId: S } },
    { method: 'turn/finish', params: { sessionId: S, turnId: '<id:2>', outcome: 'completed' } },
    { method: 'turn/setPhase', params: { sessionId: S, turnId: '<id:2>', phase: 'executingTools' } },
    { method: 'turn/get', params: { sessionId: S } },
    { method: 'turn/start', params: { sessionId: S, kind: 'background' } },
    { method: 'turn/fail', params: { sessionId: S, turnId: '<id:3>', error: 'provider timed out' } },
    { method: 'turn/resume', params: { sessionId: S, turnId: '<id:3>' } },
    { method: 'turn/get', params: { sessionId: S } },
  ],
  subscribe: [
    { method: 'session/create', params: {} },
    { method: 'session/subscribe', params: { sessionId: S } },
    { method: 'session/unsubscribe', params: { sessionId: S } },
    { method: 'session/unsubscribe', params: { sessionId: S } },
  ],
  retention: [
    { method: 'session/create', params: { title: 'Old', tags: ['scratch'] } },
    { method: 'session/prune', params: { olderThan: '0s', tags: ['scratch'], dryRun: true } },
    { method: 'session/close', params: { sessionId: S } },
    { method: 'session/prune', params: { olderThan: '0s', tags: ['scratch'], dryRun: true } },
    { method: 'session/prune', params: { olderThan: '1w' } },
  ],
  state: [
    { method: 'session/create', params: {} },
    { method: 'state/set', params: { sessionId: S, key: 'cursor', value: { page: 2, items: ['a', 'b'] } } },
    { method: 'state/get', params: { sessionId: S, key: 'cursor' } },
    { method: 'state/delete', params: { sessionId: S, key: 'cursor' } },
    { method: 'state/get', params: { sessionId: S, key: 'cursor' } },
  ],
  compaction: [
    { method: 'session/create', params: { title: 'Compact' } },
    { method: 'session/append', params: { sessionId: S, records: [user('q1'), assistant('a1'), user('q2'), assistant('a2')] } },
    { method: 'session/compact', params: { sessionId: S, summary: 'We discussed q1.', throughSeq: 2, expectedLastSeq: 4 } },
    { method: 'session/history', params: { sessionId: S } },
    { method: 'session/read', params: { sessionId: S } },
    { method: 'session/read', params: { sessionId: S, generation: 0 } },
    { method: 'session/context', params: { sessionId: S } },
    { method: 'session/rewind', params: { sessionId: S, toSeq: 3 } },
    { method: 'session/usage', params: { sessionId: S } },
  ],
  lineage: [
    { method: 'session/create', params: { title: 'Parent' } },
    { method: 'session/append', params: { sessionId: S, records: [user('first'), assistant('second')] } },
    { method: 'session/fork', params: { sessionId: S, atSeq: 1 } },
    { method: 'session/read', params: { sessionId: '<id:2>' } },
    { method: 'session/fork', params: { sessionId: S, atSeq: 9 } },
    { method: 'session/close', params: { sessionId: '<id:2>' } },
    { method: 'session/delete', params: { sessionId: '<id:2>' } },
    { method: 'session/read', params: { sessionId: '<id:2>' } },
    { method: 'session/restore', params: { sessionId: '<id:2>' } },
    { method: 'session/open', params: { sessionId: '<id:2>', mode: 'read' } },
  ],
};
