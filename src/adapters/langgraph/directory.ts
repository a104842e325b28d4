/**
 * Which sidecar session holds which thread. A thread's session carries deterministic tags —
 * `langgraph`, `langgraph.thread:<h(thread_id)>` and `langgraph.ns:<h(thread_id, checkpoint_ns)>`,
 * h a sha256 prefix (tags allow only `[A-Za-z0-9._:-]`, a thread id may be any string) — so it is
 * found with one `session/list` `tags` filter (protocol §4.9, matched on the index, not the
 * journals). Its header also names the thread (`metadata.langgraph`), for people and tools.
 *
 * If two processes raced to create the same thread's session, the one with the smallest session
 * id (ULIDs: the first created) is the thread's, everywhere, always.
 */
import { createHash } from 'node:crypto';
import type { SecretsParam, SessionSummary } from '../../../protocol/index.js';
import type { SidecarClient } from '../../client/index.js';
import { ThreadSession } from './threadSession.js';

export const ALL_TAG = 'langgraph';
const h = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 40);
export const threadTag = (threadId: string) => `langgraph.thread:${h(threadId)}`;
export const namespaceTag = (threadId: string, ns: string) => `langgraph.ns:${h([threadId, ns])}`;
const keyOf = (threadId: string, ns: string) => JSON.stringify([threadId, ns]);

export class ThreadDirectory {
  private readonly byKey = new Map<string, ThreadSession>();
  private readonly bySession = new Map<string, ThreadSession>();
  private readonly creating = new Map<string, Promise<ThreadSession>>();

  constructor(private readonly client: SidecarClient, private readonly secrets: SecretsParam | undefined) {}

  /** The thread's session, or undefined when it has none (nothing is created). */
  async find(threadId: string, ns: string): Promise<ThreadSession | undefined> {
    const known = this.byKey.get(keyOf(threadId, ns));
    if (known) return known;
    const [first] = await this.summaries(namespaceTag(threadId, ns));
    if (!first) return undefined;
    const session = this.session(first.sessionId);
    this.byKey.set(keyOf(threadId, ns), session);
    return session;
  }

  /** The thread's session, created (durably, open for writing) when it has none. */
  findOrCreate(threadId: string, ns: string): Promise<ThreadSession> {
    const key = keyOf(threadId, ns);
    let pending = this.creating.get(key);
    if (!pending) {
      pending = (async () => {
        const found = await this.find(threadId, ns);
        if (found) return found;
        const { sessionId } = await this.client.create({
          title: `LangGraph thread ${threadId}${ns ? ` (${ns})` : ''}`.slice(0, 1024),
          tags: [ALL_TAG, threadTag(threadId), namespaceTag(threadId, ns)],
          metadata: { langgraph: { threadId, checkpointNs: ns } },
          ...(this.secrets ? { secrets: this.secrets } : {}),
        });
        const session = ThreadSession.created(this.client, sessionId, this.secrets, threadId, ns);
        this.bySession.set(sessionId, session);
        this.byKey.set(key, session);
        return session;
      })().finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  /**
   * The sessions of one thread (all its namespaces), or of every thread: each synced, with its
   * thread and namespace known (a session without any record of ours yet is left out: it holds
   * no checkpoint).
   */
  async sessions(threadId?: string): Promise<ThreadSession[]> {
    const found = await this.summaries(threadId === undefined ? ALL_TAG : threadTag(threadId));
    const sessions = found.map((summary) => this.session(summary.sessionId));
    const indexes = await Promise.all(sessions.map((s) => s.sync()));
    const chosen = new Map<string, ThreadSession>();
    for (const [i, session] of sessions.entries()) {
      const index = indexes[i]!;
      if (index.threadId === null || index.ns === null) continue;
      const key = keyOf(index.threadId, index.ns);
      if (!chosen.has(key)) chosen.set(key, session); // summaries come smallest session id first
    }
    return [...chosen.values()];
  }

  /** The ids of every live session of the thread (all namespaces), whatever they hold. */
  async sessionIdsOf(threadId: string): Promise<string[]> {
    return (await this.summaries(threadTag(threadId))).map((s) => s.sessionId);
  }

  /** Drops what is known of these sessions (deleted, or gone from under us). */
  forget(sessionId: string): void {
    this.bySession.delete(sessionId);
    for (const [key, s] of this.byKey) if (s.sessionId === sessionId) this.byKey.delete(key);
  }

  /** Sessions this saver holds open for writing (their index copies are saved at close). */
  writable(): ThreadSession[] {
    return [...this.bySession.values()].filter((s) => s.isWritable);
  }

  private session(sessionId: string): ThreadSession {
    let s = this.bySession.get(sessionId);
    if (!s) {
      s = new ThreadSession(this.client, sessionId, this.secrets);
      this.bySession.set(sessionId, s);
    }
    return s;
  }

  /** Every live (not deleted) session carrying `tag`, smallest session id first. */
  private async summaries(tag: string): Promise<SessionSummary[]> {
    const all: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.list({ tags: [tag], limit: 1000, ...(cursor ? { cursor } : {}) });
      all.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor);
    return all.sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  }
}
