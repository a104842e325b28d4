/**
 * A file store: the core's `Sessions` over a `FileBackend` (src/backends/file/fileBackend.ts),
 * composed here, above both, so that neither imports the other (test/architecture).
 *
 * What this adds to the two is only their wiring: one secret set shared by the core's gate and
 * the backend's second net, the store key registered as a secret (it may never be stored, in
 * any encoding), and the scratch space under sessions/<id>/scratch.
 */
import type { FsLayer } from '../durable/fsLayer.js';
import type { StoreKey } from '../durable/storeKey.js';
import { SecretSet, type Vocabulary } from '../domain/secrets/knownSecrets.js';
import { Sessions } from '../core/sessions/sessions.js';
import { FileBackend, type FileBackendHooks } from '../backends/file/fileBackend.js';
import { scratchAt } from '../scratch/localScratch.js';
import type { KernelLock } from '../backends/file/kernelLock.js';

export interface FileStoreOptions {
  /** The file-system seam; tests inject failures through it. */
  fs?: FsLayer;
  clock?: () => number;
  /** Largest serialized record (default 32 MiB). */
  maxRecordBytes?: number;
  /** Where warnings go (stderr in the server). Never given record content. */
  warn?: (message: string) => void;
  /** A session `list` left out because it cannot be read: its id and the error's kind. */
  onUnlisted?: (sessionId: string, kind: string) => void;
  /** Words every record contains (the protocol's vocabulary): no secret may occur in them. */
  vocabulary?: Vocabulary;
  /** Where env var names given as secrets are resolved (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** How old an unrefreshed writer lease must be before another process takes it over (default 10 s, at least 5 s). */
  leaseStaleMs?: number;
  /**
   * Cross-process writer leases (default true). Turn them off only where this store instance
   * is provably the only writer of its root (unit tests that simulate restarts in one process).
   */
  leases?: boolean;
  /**
   * Inspection only (the command line's list, show, verify, ...): the store is never changed —
   * no folders created, no index entry refreshed, no write open, no lease taken.
   */
  readOnly?: boolean;
  /**
   * The secrets this instance gates against and adds its sessions' secrets to; given, it is
   * shared with another store of the same process (the ephemeral one beside the durable one).
   */
  secrets?: SecretSet;
  /** Encryption at rest (STORAGE.md): the store's encryption.json must name this key. */
  encryptionKey?: StoreKey;
  /** Test seams of the backend (compaction steps, the purge's check). */
  hooks?: FileBackendHooks;
}

/**
 * A file store: `Sessions` whose port is a FileBackend. A class only so that `new
 * FileSessionStore(root, options)` (the library's API) keeps working; it adds no session logic.
 */
export class FileSessionStore extends Sessions {
  declare readonly port: FileBackend;

  constructor(root: string, opts: FileStoreOptions = {}) {
    const secrets = opts.secrets ?? new SecretSet();
    const backend = new FileBackend(root, {
      ...(opts.fs ? { fs: opts.fs } : {}),
      ...(opts.leaseStaleMs !== undefined ? { leaseStaleMs: opts.leaseStaleMs } : {}),
      ...(opts.leases !== undefined ? { leases: opts.leases } : {}),
      ...(opts.readOnly !== undefined ? { readOnly: opts.readOnly } : {}),
      ...(opts.encryptionKey ? { encryptionKey: opts.encryptionKey } : {}),
      ...(opts.warn ? { warn: opts.warn } : {}),
      ...(opts.onUnlisted ? { onUnlisted: opts.onUnlisted } : {}),
      ...(opts.hooks ? { hooks: opts.hooks } : {}),
    });
    opts.encryptionKey?.registerWith(secrets); // the key may never be stored, in any encoding
    super(backend, {
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.maxRecordBytes !== undefined ? { maxRecordBytes: opts.maxRecordBytes } : {}),
      ...(opts.warn ? { warn: opts.warn } : {}),
      ...(opts.vocabulary ? { vocabulary: opts.vocabulary } : {}),
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.readOnly !== undefined ? { readOnly: opts.readOnly } : {}),
      secrets,
      scratch: scratchAt(backend.display, (id) => backend.scratchDir(id), opts.fs),
    });
  }

  /** The serving lock (FileBackend.lockForServing): taken before the store is opened. */
  static lockForServing(root: string, fsl?: FsLayer): Promise<KernelLock | undefined> {
    return FileBackend.lockForServing(root, fsl);
  }

  /** This instance serves the store: it keeps the lock until closeAll. */
  holdServingLock(lock: KernelLock | undefined): void {
    this.port.holdServingLock(lock);
  }
}
