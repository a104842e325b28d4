/**
 * `SidecarCheckpointSaver`: LangGraph's `BaseCheckpointSaver` over a session-sidecar. One sidecar
 * session per (thread_id, checkpoint_ns) (directory.ts), checkpoints and pending writes as
 * `event` records (records.ts), found through a per-session index (threadIndex.ts).
 *
 * Durability: `put` and `putWrites` resolve only after the sidecar answered the append, i.e. after
 * fdatasync (file store) or COMMIT (PostgreSQL). Secret safety: everything stored goes through the
 * sidecar's own checks — a registered secret anywhere refuses the append (`SecretRejected`, the
 * promise rejects, nothing is stored), well-known credentials are redacted.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver, copyCheckpoint, getCheckpointId, WRITES_IDX_MAP,
  type ChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata, type CheckpointTuple,
  type PendingWrite, type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { SecretsParam } from '../../../protocol/index.js';
import { SidecarClient, SidecarError, type SpawnOptions } from '../../client/index.js';
import { ThreadDirectory } from './directory.js';
import { CHECKPOINT_EVENT, WRITES_EVENT, type CheckpointPayload, type WritesPayload } from './records.js';
import { encodeSerialized } from './serialized.js';
import type { ThreadSession } from './threadSession.js';
import { buildTuple, checkpointRecord, loadMetadata } from './tuples.js';

export interface SidecarCheckpointSaverOptions {
  /** Store for the sidecar this saver spawns (its `--store`); ignored when `client` is given. */
  store?: string;
  /** A connected (initialized) client; the saver then spawns nothing and leaves it running at close. */
  client?: SidecarClient;
  /** How to spawn the sidecar (default: this package's binary); ignored when `client` is given. */
  spawn?: Omit<SpawnOptions, 'store'>;
  /** Secrets registered on every thread session (sent at create and at every write open). */
  secrets?: SecretsParam;
  serde?: SerializerProtocol;
}

function threadOf(config: RunnableConfig, what: string): { threadId: string; ns: string } {
  const threadId = config.configurable?.thread_id as unknown;
  if (typeof threadId !== 'string' || threadId === '') {
    throw new Error(`Failed to ${what}: the RunnableConfig has no "thread_id" string in its "configurable" property.`);
  }
  const ns = (config.configurable?.checkpoint_ns as unknown) ?? '';
  if (typeof ns !== 'string') throw new Error(`Failed to ${what}: "checkpoint_ns" must be a string.`);
  return { threadId, ns };
}

const gone = (err: unknown) => err instanceof SidecarError && err.kind === 'SessionNotFound';

export class SidecarCheckpointSaver extends BaseCheckpointSaver {
  private readonly threads: ThreadDirectory;

  private constructor(readonly client: SidecarClient, private readonly ownsClient: boolean, secrets: SecretsParam | undefined, serde?: SerializerProtocol) {
    super(serde);
    this.threads = new ThreadDirectory(client, secrets);
  }

  static async open(opts: SidecarCheckpointSaverOptions = {}): Promise<SidecarCheckpointSaver> {
    if (opts.client) return new SidecarCheckpointSaver(opts.client, false, opts.secrets, opts.serde);
    const client = new SidecarClient({ ...opts.spawn, ...(opts.store !== undefined ? { store: opts.store } : {}) });
    try {
      const { capabilities } = await client.initialize({ clientInfo: { name: 'session-sidecar/adapters/langgraph' } });
      const session = capabilities.session as Record<string, unknown> | undefined;
      const list = session?.list as { filters?: boolean } | undefined;
      if (!list?.filters || !session?.delete || !capabilities.state) {
        throw new Error('this sidecar lacks session/list filters, session/delete or state/*, which the LangGraph checkpointer needs');
      }
    } catch (err) {
      client.child.kill('SIGKILL');
      throw err;
    }
    return new SidecarCheckpointSaver(client, true, opts.secrets, opts.serde);
  }

  /** Saves the thread indexes, then shuts down the sidecar it spawned (or closes its sessions on a given client). */
  async close(): Promise<void> {
    const child = this.client.child;
    if (child.exitCode !== null || child.signalCode !== null) return; // the sidecar is gone: nothing left to save
    const open = this.threads.writable();
    await Promise.allSettled(open.map((s) => s.flush()));
    if (this.ownsClient) {
      await this.client.shutdown();
      return;
    }
    await Promise.allSettled(open.map((s) => this.client.close(s.sessionId)));
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (typeof config.configurable?.thread_id !== 'string') return undefined;
    const { threadId, ns } = threadOf(config, 'get a checkpoint');
    const session = await this.threads.find(threadId, ns);
    if (!session) return undefined;
    try {
      const index = await session.sync();
      const id = getCheckpointId(config) || index.idsNewestFirst()[0];
      if (!id) return undefined;
      const record = await checkpointRecord(session, index, id);
      return record && (await buildTuple(this.serde, session, index, record, this.getNextVersion(undefined)));
    } catch (err) {
      if (!gone(err)) throw err;
      this.threads.forget(session.sessionId);
      return undefined;
    }
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let limit = options.limit;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const onlyId = getCheckpointId(config) || undefined;
    const beforeId = before ? getCheckpointId(before) || undefined : undefined;
    let sessions: ThreadSession[];
    if (threadId !== undefined && ns !== undefined) {
      const one = await this.threads.find(threadId, ns);
      sessions = one ? [one] : [];
    } else {
      sessions = await this.threads.sessions(threadId);
    }
    for (const session of sessions) {
      let index;
      try {
        index = await session.sync();
      } catch (err) {
        if (!gone(err)) throw err;
        this.threads.forget(session.sessionId);
        continue;
      }
      if (ns !== undefined && index.ns !== ns) continue;
      for (const id of index.idsNewestFirst()) {
        if (limit !== undefined && limit <= 0) return;
        if (onlyId !== undefined && id !== onlyId) continue;
        if (beforeId !== undefined && id >= beforeId) continue;
        const record = await checkpointRecord(session, index, id);
        if (!record) continue;
        const metadata = await loadMetadata(this.serde, record);
        if (filter && !Object.entries(filter).every(([k, v]) => (metadata as Record<string, unknown>)[k] === v)) continue;
        if (limit !== undefined) limit -= 1;
        yield await buildTuple(this.serde, session, index, record, this.getNextVersion(undefined), metadata);
      }
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const { threadId, ns } = threadOf(config, 'put a checkpoint');
    const prepared = copyCheckpoint(checkpoint);
    const channelValues = prepared.channel_values as Record<string, unknown>;
    // Only the channels whose version changed are stored; the others are in earlier records.
    const values: CheckpointPayload['values'] = await Promise.all(Object.entries(newVersions).map(async ([ch, ver]) => {
      if (!Object.prototype.hasOwnProperty.call(channelValues, ch)) return [ch, ver, null] as CheckpointPayload['values'][number];
      const [type, bytes] = await this.serde.dumpsTyped(channelValues[ch]);
      return [ch, ver, encodeSerialized(type, bytes)] as CheckpointPayload['values'][number];
    }));
    const { channel_values: _omitted, ...rest } = prepared;
    const [[cType, cBytes], [mType, mBytes]] = await Promise.all([this.serde.dumpsTyped(rest), this.serde.dumpsTyped(metadata)]);
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const payload: CheckpointPayload = {
      threadId, ns, id: checkpoint.id, parentId: parentId || null,
      checkpoint: encodeSerialized(cType, cBytes), metadata: encodeSerialized(mType, mBytes), values,
    };
    const session = await this.threads.findOrCreate(threadId, ns);
    await session.append({ kind: 'event', type: CHECKPOINT_EVENT, payload });
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const { threadId, ns } = threadOf(config, 'put writes');
    const checkpointId = config.configurable?.checkpoint_id as unknown;
    if (typeof checkpointId !== 'string' || checkpointId === '') {
      throw new Error('Failed to put writes: the RunnableConfig has no "checkpoint_id" in its "configurable" property.');
    }
    const payload: WritesPayload = {
      threadId, ns, checkpointId, taskId, taskPath: taskPath ?? '',
      writes: await Promise.all(writes.map(async ([channel, value], i): Promise<WritesPayload['writes'][number]> => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        return [WRITES_IDX_MAP[channel] ?? i, channel, encodeSerialized(type, bytes)];
      })),
    };
    const session = await this.threads.findOrCreate(threadId, ns);
    await session.append({ kind: 'event', type: WRITES_EVENT, payload });
  }

  /** Moves every session of the thread (all namespaces) to the sidecar's trash: `session/restore` brings it back. */
  async deleteThread(threadId: string): Promise<void> {
    for (const sessionId of await this.threads.sessionIdsOf(threadId)) {
      try {
        await this.client.request('session/delete', { sessionId });
      } catch (err) {
        if (!gone(err)) throw err;
      }
      this.threads.forget(sessionId);
    }
  }
}
