import type { Peer } from '../wire.js';

export type Rec = Record<string, unknown>;

export const user = (content: string): Rec => ({ kind: 'message', message: { role: 'user', content } });
export const assistant = (content: string): Rec => ({ kind: 'message', message: { role: 'assistant', content } });

/** JSON with object members sorted: records compare by value (member order may change, values may not). */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Rec)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** A stored record without the members the server adds. */
export function appended(stored: Rec): Rec {
  const { seq: _s, ts: _t, turnId: _u, apiSeq: _a, ...rest } = stored;
  return rest;
}

/** Every record of a session, page by page. */
export async function readAll(p: Peer, sessionId: string, extra: Rec = {}): Promise<Rec[]> {
  const out: Rec[] = [];
  let afterSeq = 0;
  for (let pages = 0; pages < 10_000; pages++) {
    const r = await p.call<{ records: Rec[]; nextAfterSeq: number | null }>('session/read', { sessionId, afterSeq, ...extra });
    out.push(...r.records);
    if (r.nextAfterSeq === null) return out;
    afterSeq = r.nextAfterSeq;
  }
  throw new Error('session/read never reached lastSeq');
}

export async function newSession(p: Peer, params: Rec = {}): Promise<string> {
  return (await p.call<{ sessionId: string }>('session/create', params)).sessionId;
}
