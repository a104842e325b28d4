import { createHash } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents-core';
import type { SecretsParam, SessionReadResult } from '../../../protocol/index.js';
import { SidecarClient, SidecarError } from '../../client/index.js';
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
  /**
   * The conversation's id, of the caller's choosing (as the SDK's `new MemorySession({ sessionId })`
   * or Python's `SQLiteSession("conversation_123")`): the session it names is found or, the
   * first time, created. A sidecar session's own id (a ULID, `sidecarSessionId`) continues that
   * session; any other string maps to a session/create `idempotencyKey` (`idempotencyKeyFor`),
   * so one id is one session in every process, also after a crash. Omitted: a new session,
   * whose id (`getSessionId()`) is its ULID.
   */
  sessionId?: string;
  /** The title of a session created here (session/list shows it); an existing session keeps its own. */
  title?: string;
  /** The tags of a session created here (session/list's `tags` filter). */
  tags?: string[];
  /** Metadata of a session created here (`client` and, for a caller's id, `agentsSessionId` are added). */
  metadata?: Record<string, unknown>;
  /** A connected (initialized) client to use; `close()` then closes only the session, never the client. */
  client?: SidecarClient;
  /** Secrets registered on the session at create/open (§10): an item holding one is refused (SecretRejected). */
  secrets?: SecretsParam;
}

/** The id of a sidecar session (session/create makes ULIDs). */
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KEY_PREFIX = 'agents.session:';
const HASHED_KEY_PREFIX = 'agents.session.sha256:';
const CLIENT_MARK = 'session-sidecar/adapters/openai-agents';

/**
 * The session/create idempotencyKey a caller-chosen session id maps to: `agents.session:<id>`
 * when that is a valid key (printable ASCII, at most 128 characters), else
 * `agents.session.sha256:<hex of the id's UTF-8 bytes>` — as clients/python's
 * `idempotency_key_for`, so both find the same session.
 */
export function idempotencyKeyFor(sessionId: string): string {
  const key = KEY_PREFIX + sessionId;
  if (key.length <= 128 && /^[\x20-\x7e]*$/.test(key)) return key;
  return HASHED_KEY_PREFIX + createHash('sha256').update(sessionId, 'utf8').digest('hex');
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
    /** The sidecar session's id (a ULID). */
    readonly sidecarSessionId: string,
    /** The SDK's session id: the caller's, or the sidecar session's for a session created without one. */
    private readonly sessionId: string,
    private readonly ownsClient: boolean,
  ) {}

  /** Spawns a sidecar on `store` (unless given `client`), then creates or opens the session. */
  static async open(opts: SidecarSessionOptions = {}): Promise<SidecarSession> {
    const owns = opts.client === undefined;
    const client = opts.client ?? await SidecarClient.start({ ...(opts.store !== undefined ? { store: opts.store } : {}), initialize: { clientInfo: { name: 'session-sidecar/adapters/openai-agents' } } });
    try {
      const sidecarSessionId = await findOrCreate(client, opts);
      return new SidecarSession(client, sidecarSessionId, opts.sessionId ?? sidecarSessionId, owns);
    } catch (err) {
      if (owns) await stop(client);
      throw err;
    }
  }

  /** The SDK's session id: the one given to `open` (the caller's), or the new session's ULID. */
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
        await this.client.append({ sessionId: this.sidecarSessionId, records: records.slice(i, i + MAX_RECORDS) });
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
        if (isRunning(this.client)) await this.client.close(this.sidecarSessionId);
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
    const head = await this.client.read({ sessionId: this.sidecarSessionId, limit: 1 });
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
        sessionId: this.sidecarSessionId, afterSeq: cursor, limit: Math.min(hi - cursor, 10_000), kinds: [...VIEW_KINDS], inline: true,
      });
      for (const r of page.records as unknown as ViewRecord[]) if (r.seq <= hi) out.push(r);
      const next = page.nextAfterSeq;
      if (next === null || next <= cursor) break;
      cursor = next;
    }
    return out;
  }

  private rewind(toSeq: number, expectedLastSeq: number): Promise<RewindResult> {
    return this.client.request<RewindResult>('session/rewind', { sessionId: this.sidecarSessionId, toSeq, expectedLastSeq });
  }
}

/** The sidecar session for `opts.sessionId`, opened for writing (see SidecarSessionOptions.sessionId). */
async function findOrCreate(client: SidecarClient, opts: SidecarSessionOptions): Promise<string> {
  const secrets = opts.secrets !== undefined ? { secrets: opts.secrets } : {};
  const id = opts.sessionId;
  if (id !== undefined && (typeof id !== 'string' || id === '')) throw new TypeError('sessionId must be a non-empty string');
  if (id !== undefined && ULID.test(id)) {
    try {
      return (await client.open({ sessionId: id, mode: 'write', ...secrets })).sessionId;
    } catch (err) {
      if (!(err instanceof SidecarError && err.kind === 'SessionNotFound')) throw err;
      // not a sidecar session's id: a caller-chosen id like any other
    }
  }
  const metadata: Record<string, unknown> = { client: CLIENT_MARK, ...(id !== undefined ? { agentsSessionId: id } : {}), ...opts.metadata };
  const header = {
    metadata, ...secrets, ...(opts.title !== undefined ? { title: opts.title } : {}), ...(opts.tags !== undefined ? { tags: opts.tags } : {}),
  };
  if (id === undefined) return (await client.create(header)).sessionId;
  try {
    return (await client.create({ ...header, idempotencyKey: idempotencyKeyFor(id) })).sessionId;
  } catch (err) {
    // Created before with another title/tags/metadata: that session is this id's.
    const original = err instanceof SidecarError && err.kind === 'Conflict' && err.data?.reason === 'idempotencyKeyReused' ? err.data.sessionId : undefined;
    if (typeof original !== 'string') throw err;
    await client.open({ sessionId: original, mode: 'write', ...secrets });
    return original;
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
