import { MemoryFs } from '../../durable/memoryFs.js';
import type { SecretSet, Vocabulary } from '../../domain/secrets/knownSecrets.js';
import { FileSessionStore } from './fileStore.js';

/** Where the in-memory store's tree is rooted: a name inside MemoryFs, never a path on disk. */
export const EPHEMERAL_ROOT = '/ephemeral';

/**
 * The store of a process's ephemeral sessions (protocol §17): this file store, unchanged, over a
 * fresh in-memory file system — no byte reaches a disk — without writer leases (no other process
 * can ever see it). `secrets` is the durable store's set: one gate for both.
 */
export function ephemeralFileStore(opts: { secrets: SecretSet; warn?: (m: string) => void; vocabulary?: Vocabulary; env?: NodeJS.ProcessEnv }): FileSessionStore {
  return new FileSessionStore(EPHEMERAL_ROOT, { fs: new MemoryFs(), leases: false, ...opts });
}
