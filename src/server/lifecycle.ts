import { ResponseError } from 'vscode-jsonrpc/node';
import {
  ErrorKindCode, initialize, JsonRpcErrorCode, MAX_APPEND_RECORDS, MAX_LIST_LIMIT, MAX_READ_LIMIT,
  DEFAULT_BLOB_THRESHOLD, MAX_BLOB_CHUNK, MAX_SEARCH_LIMIT, MAX_TAGS, MAX_STATE_VALUE_BYTES, RecordKinds, shutdown, SUPPORTED_PROTOCOL_VERSIONS,
} from '../../protocol/index.js';
import type { InitializeResult } from '../../protocol/methods/lifecycle.js';
import type { Logger } from '../log.js';
import type { SessionStore } from '../domain/types.js';
import { handle, type RequestHandler } from './dispatch.js';
import { invalidParams } from './errors.js';
import { MAX_UNSENT_RECORDS } from './handlers/subscribe.js';

/**
 * The settling rule of §4.1: the version the server speaks on this connection is the highest one
 * the client offered (`protocolVersion`, `protocolVersions`, or both: their union) that the server
 * also speaks. None in common is UnsupportedProtocolVersion with `data.supported`, so a client
 * always settles in one round trip when it offers its list, and in at most two when it offers one
 * version (the refusal tells it what to retry with). A single `protocolVersion` is never answered
 * with another version: a client that offers one version and does not read the answer's
 * `protocolVersion` must never end up speaking a version it did not ask for.
 */
export function settleVersion(single: number | undefined, list: number[] | undefined): number {
  if (single === undefined && list === undefined) {
    throw invalidParams([{ path: 'protocolVersion', message: 'one of protocolVersion and protocolVersions is required' }]);
  }
  const offered = [...(single === undefined ? [] : [single]), ...(list ?? [])];
  const common = offered.filter((v) => SUPPORTED_PROTOCOL_VERSIONS.includes(v));
  if (common.length === 0) {
    const what = list === undefined ? `protocol version ${single}` : `protocol versions ${offered.join(', ')}`;
    throw new ResponseError(ErrorKindCode.UnsupportedProtocolVersion, `unsupported ${what}`, {
      kind: 'UnsupportedProtocolVersion', supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      ...(single === undefined ? {} : { requested: single }),
      ...(list === undefined ? {} : { offered: list }),
    });
  }
  return Math.max(...common);
}

export type Phase = 'uninitialized' | 'running' | 'shuttingDown';

export interface LifecycleOptions {
  store: SessionStore;
  serverInfo: { name: string; version: string };
  maxMessageBytes: number;
  log: Logger;
  /** Ends the process with this exit code (after in-flight work). */
  finish: (code: number, why: string) => void;
  /** How often to check that the client process given in initialize is alive. */
  parentPollMs?: number;
}

/** The LSP-style lifecycle: initialize, initialized, shutdown, exit; and the parent-process watch. */
export class Lifecycle {
  phase: Phase = 'uninitialized';
  private parentWatch: NodeJS.Timeout | undefined;

  constructor(private readonly opts: LifecycleOptions) {}

  /** Requests allowed in the current phase; the error to answer otherwise. */
  readonly gate = (method: string): ResponseError<unknown> | undefined => {
    if (method === 'initialize' && this.phase !== 'uninitialized') {
      return new ResponseError(JsonRpcErrorCode.InvalidRequest, 'initialize may be sent only once per connection');
    }
    if (this.phase === 'uninitialized' && method !== 'initialize') {
      return new ResponseError(JsonRpcErrorCode.ServerNotInitialized, 'Server not initialized: send initialize first');
    }
    if (this.phase === 'shuttingDown') return new ResponseError(JsonRpcErrorCode.InvalidRequest, 'the server is shutting down');
    return undefined;
  };

  handlers(): RequestHandler[] {
    return [
      handle(initialize, (p) => {
        const version = settleVersion(p.protocolVersion, p.protocolVersions);
        this.phase = 'running';
        if (typeof p.processId === 'number' && p.processId > 0) this.watchParent(p.processId);
        return this.initializeResult(version);
      }),
      handle(shutdown, async () => {
        this.phase = 'shuttingDown';
        await this.opts.store.closeAll();
        return null;
      }),
    ];
  }

  /** Notifications: `exit` ends the process; `$/` ones this server does not know are ignored. */
  notification(method: string): void {
    if (method === 'exit') this.opts.finish(this.phase === 'shuttingDown' ? 0 : 1, 'exit notification');
    else if (method === 'initialized') setImmediate(() => this.opts.store.warmUp?.()); // after any request already read
    else if (!method.startsWith('$/')) this.opts.log.debug('ignored an unknown notification');
  }

  private initializeResult(protocolVersion: number): InitializeResult {
    return {
      protocolVersion,
      serverInfo: this.opts.serverInfo,
      capabilities: {
        framings: ['lsp', 'ndjson'],
        maxMessageBytes: this.opts.maxMessageBytes,
        recordKinds: [...RecordKinds],
        session: {
          create: true,
          open: { modes: ['write', 'read'] },
          append: { maxRecords: MAX_APPEND_RECORDS, expectedLastSeq: true, idempotencyKey: true },
          read: { maxLimit: MAX_READ_LIMIT, kinds: true },
          list: { maxLimit: MAX_LIST_LIMIT, filters: true },
          context: { prune: true },
          compact: true,
          fork: true,
          delete: { trash: true, purge: true },
          subscribe: { crossProcess: true, maxUnsentRecords: MAX_UNSENT_RECORDS },
          usage: true,
          rewind: true,
          prune: { dryRun: true, tags: true },
          ...(this.opts.store.createEphemeral ? { ephemeral: { scratch: false } } : {}),
          update: { maxTags: MAX_TAGS },
          idempotencyKey: { append: true, create: true, update: true },
          search: { maxLimit: MAX_SEARCH_LIMIT },
        },
        turns: { modes: ['manual', 'auto'] },
        tool: { scratch: true },
        state: { maxValueBytes: MAX_STATE_VALUE_BYTES },
        blob: { defaultThreshold: DEFAULT_BLOB_THRESHOLD, maxChunk: MAX_BLOB_CHUNK },
        ...(['file', 'postgres'].includes(this.opts.store.backend ?? 'file') ? { encryptionAtRest: { algorithm: 'AES-256-GCM' as const, active: this.opts.store.encrypted === true } } : {}),
      },
      store: { root: this.opts.store.root, backend: this.opts.store.backend ?? 'file' },
    };
  }

  private watchParent(pid: number): void {
    this.parentWatch = setInterval(() => {
      if (!isAlive(pid)) this.opts.finish(0, 'the client process is gone');
    }, this.opts.parentPollMs ?? 2000);
    this.parentWatch.unref();
  }

  dispose(): void {
    if (this.parentWatch) clearInterval(this.parentWatch);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}
