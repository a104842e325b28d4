import type { AgentInputItem, Session } from '@openai/agents-core';
import type { SecretsParam, SessionReadResult } from '../../../protocol/index.js';
import { SidecarClient } from '../../client/index.js';
import { assertJsonItems } from './jsonItems.js';
import { ITEM_TYPE, latestItems, VIEW_KINDS, type ViewItem, type ViewRecord } from './itemsView.js';

/**
 * `SidecarSession`: the OpenAI Agents SDK `Session` over one sidecar session (issue 19).
 *
 * Each item is one record `{kind: "event", type: "agents.item", payload: <the item>}`: an
 * `event` payload is stored and read back exactly as sent, member order included (a `message`
 * record would reorder members, protocol/README.md §5.1), and large strings come back inlined
 * (`session/read` with `inline: true`). Nothing is ever deleted: `popItem` and `clearSession`
 * append a `rewind` record (`session/rewind`, §19.2) and the journal keeps every item. The same
 * records and view rules as clients/python's SidecarSession, so both can use one session.
 *
 * `@openai/agents-core` is imported for its types only: loading this module loads no SDK code.
 */

export interface SidecarSessionOptions {
  /** The store of the sidecar this session spawns (when no `client` is given): a directory or postgres:// URL. */
  store?: string;
  /** An existing sidecar session to continue (opened for writing); omitted: a new session is created. */
  sessionId?: string;
  /** A connected (initialized) client to use; `close()` then closes only the session, never the client. */
  client?: SidecarClient;
  /** Secrets registered on the session at create/open (§10): an item holding one is refused (SecretRejected). */
  secrets?: SecretsParam;
}

/** At most this many records per append (§5.6, capabilities.session.append.maxRecords). */
const MAX_RECORDS = 10_000;

/** What session/rewind answers (§19.2); `turn` is not used here. */
interface RewindResult { seq: number; toSeq: number }

export class SidecarSession implements Session {
  private closed = false;
  /** Serializes this object's operations: each reads the tail and writes after it. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The sidecar client this session talks through (its child is the sidecar process). */
    readonly client: SidecarClient,
    private readonly sessionId: string,
    private readonly ownsClient: boolean,
  ) {}

  /** Spawns a sidecar on `store` (unless given `client`), then creates or opens the session. */
  static async open(opts: SidecarSessionOptions = {}): Promise<SidecarSession> {
    const owns = opts.client === undefined;
    const client = opts.client ?? await SidecarClient.start({ ...(opts.store !== undefined ? { store: opts.store } : {}), initialize: { clientInfo: { name: 'session-sidecar/adapters/openai-agents' } } });
    try {
      const secrets = opts.secrets !== undefined ? { secrets: opts.secrets } : {};
      let sessionId = opts.sessionId;
      if (sessionId === undefined) {
        sessionId = (await client.create({ metadata: { client: 'session-sidecar/adapters/openai-agents' }, ...secrets })).sessionId;
      } else {
        await client.open({ sessionId, mode: 'write', ...secrets });
      }
      return new SidecarSession(client, sessionId, owns);
    } catch (err) {
      if (owns) await stop(client);
      throw err;
    }
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The session's items, oldest first; with `limit`, the latest `limit` of them (read from the tail). */
  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.serial(async () => {
      const { items } = await this.tail(limit);
      return items.map((v) => v.item as AgentInputItem);
    });
  }

  /**
   * Appends each item as one record, durably (answered after fdatasync / COMMIT); all-or-nothing
   * up to 10000 items. An item JSON cannot keep exactly is refused first (TypeError, nothing sent).
   */
  addItems(items: AgentInputItem[]): Promise<void> {
    return this.serial(async () => {
      assertJsonItems(items);
      const records = items.map((item) => ({ kind: 'event' as const, type: ITEM_TYPE, payload: item as unknown }));
      for (let i = 0; i < records.length; i += MAX_RECORDS) {
        await this.client.append({ sessionId: this.sessionId, records: records.slice(i, i + MAX_RECORDS) });
      }
    });
  }

  /**
   * Removes the latest item from the view and returns it (undefined when there is none): a
   * rewind to just before its record, with `expectedLastSeq` (Conflict if the session changed
   * meanwhile). The item's record stays in the journal.
   */
  popItem(): Promise<AgentInputItem | undefined> {
    return this.serial(async () => {
      const { items, lastSeq } = await this.tail(1);
      const last = items[items.length - 1];
      if (last === undefined) return undefined;
      await this.rewind(last.seq - 1, lastSeq);
      return last.item as AgentInputItem;
    });
  }

  /** Empties the view: a rewind to the start (0, or the checkpoint after a compaction); none when it is empty. */
  clearSession(): Promise<void> {
    return this.serial(async () => {
      const { items, lastSeq, floor } = await this.tail(1);
      if (items.length === 0) return;
      await this.rewind(floor, lastSeq);
    });
  }

  /** Closes the session in the sidecar; stops the sidecar if this object spawned it. Idempotent. */
  close(): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      this.closed = true;
      try {
        if (isRunning(this.client)) await this.client.close(this.sessionId);
      } finally {
        if (this.ownsClient) await stop(this.client);
      }
    }, true);
  }

  private serial<T>(op: () => Promise<T>, closing = false): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed && !closing) throw new Error('this SidecarSession is closed');
      return op();
    });
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * The latest `limit` items (all when undefined), the session's lastSeq when the walk began,
   * and the lowest seq a rewind may go to (the active journal's checkpoint, or 0). One read of
   * the first record tells both lastSeq and where the active journal starts.
   */
  private async tail(limit: number | undefined): Promise<{ items: ViewItem[]; lastSeq: number; floor: number }> {
    const head = await this.client.read({ sessionId: this.sessionId, limit: 1 });
    const first = head.records[0];
    const floor = first !== undefined && first.kind === 'checkpoint' ? first.seq : 0;
    // Below the active journal's first record there is nothing: a read from below it would
    // return records from that first one on, past the range asked for.
    const start = first !== undefined ? first.seq - 1 : 0;
    const items = await latestItems((lo, hi) => this.range(Math.max(lo, start), hi), head.lastSeq, limit);
    return { items, lastSeq: head.lastSeq, floor };
  }

  /** The view-relevant records with lo < seq <= hi, oldest first, blobs inlined. */
  private async range(lo: number, hi: number): Promise<ViewRecord[]> {
    const out: ViewRecord[] = [];
    for (let cursor = lo; cursor < hi;) {
      const page: SessionReadResult = await this.client.read({
        sessionId: this.sessionId, afterSeq: cursor, limit: Math.min(hi - cursor, 10_000), kinds: [...VIEW_KINDS], inline: true,
      });
      for (const r of page.records as unknown as ViewRecord[]) if (r.seq <= hi) out.push(r);
      const next = page.nextAfterSeq;
      if (next === null || next <= cursor) break;
      cursor = next;
    }
    return out;
  }

  private rewind(toSeq: number, expectedLastSeq: number): Promise<RewindResult> {
    return this.client.request<RewindResult>('session/rewind', { sessionId: this.sessionId, toSeq, expectedLastSeq });
  }
}

function isRunning(client: SidecarClient): boolean {
  return client.child.exitCode === null && client.child.signalCode === null;
}

/** Ends a sidecar this session spawned: shutdown + exit when it runs, else just wait for its end. */
async function stop(client: SidecarClient): Promise<void> {
  if (!isRunning(client)) {
    await client.exited;
    return;
  }
  try {
    await client.shutdown();
  } catch {
    await client.kill('SIGKILL'); // it died meanwhile or does not answer shutdown: make sure it is gone
  }
}
