/**
 * Tool scratch directories on this machine's disk, for a store whose sessions live elsewhere (a
 * PostgreSQL database): `<localRoot>/scratch/<sessionId>/tool-NNNNNN`. Every byte written
 * there (the `issued.json` beside the directories) passes the final secret gate of the file
 * system layer, as everything the file store writes does.
 */
import path from 'node:path';
import { ensurePrivateDir } from '../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../durable/errors.js';
import { type FsLayer, nodeFs } from '../durable/fsLayer.js';
import { StoreError } from '../domain/errors.js';
import { gateFs } from '../domain/secrets/finalGate.js';
import type { SecretSet } from '../domain/secrets/knownSecrets.js';
import type { ToolSeqIssuer } from '../domain/runtimeCounters.js';
import { type KeepScratch, ToolRuns } from './toolRuns.js';

/** A session's tool runs in this process (scratch/toolRuns.ts ToolRuns, or none where there is no scratch). */
export interface SessionTools extends ToolSeqIssuer {
  /**
   * A fresh private directory for the next toolSeq, durable before it is handed out. Fails with
   * a StoreError: UnsafeStore for an unsafe scratch path, NotWritten for an I/O error.
   */
  allocate(committedToolSeq: number, keep?: KeepScratch): { toolSeq: number; dir: string; tmpDir: string };
  /** After a commit: its toolFinish records decide what onFailure keeps. */
  noteCommitted(records: ReadonlyArray<Record<string, unknown>>): void;
  /** At session/close: removes the scratch directories their policy does not keep. */
  cleanup(): Promise<void>;
}

/** Where a store's sessions get their scratch directories. */
export interface ScratchSpace {
  tools(sessionId: string, committedToolSeq: number, keep?: KeepScratch): SessionTools;
}

/**
 * Scratch directories under `<localRoot>/scratch`, written through a gate over `secrets`; or, with
 * `scratchDir`, where it names them (a file store's: sessions/<id>/scratch, STORAGE.md).
 */
export function scratchAt(localRoot: string, scratchDir?: (sessionId: string) => string, base: FsLayer = nodeFs): (secrets: SecretSet) => ScratchSpace {
  const root = path.resolve(localRoot);
  const scratchRoot = scratchDir ? root : path.join(root, 'scratch');
  return (secrets) => {
    const fsl = gateFs(base, secrets);
    const layout = { scratchDir: scratchDir ?? ((id: string) => path.join(scratchRoot, id)) };
    return {
      tools: (sessionId, committedToolSeq, keep) => {
        ensurePrivateDir(fsl, root);
        ensurePrivateDir(fsl, scratchRoot);
        const runs = new ToolRuns(fsl, layout, sessionId, committedToolSeq, keep);
        const allocate = runs.allocate.bind(runs);
        runs.allocate = (committed, k) => {
          try {
            return allocate(committed, k);
          } catch (err) {
            throw scratchError(err);
          }
        };
        return runs;
      },
    };
  };
}

/** A failed allocation as the protocol says it: nothing was allocated. */
function scratchError(err: unknown): unknown {
  if (err instanceof StoreError) return err;
  if (err instanceof UnsafeFileError) return new StoreError('UnsafeStore', `no scratch directory was allocated: a scratch path ${err.reason}`, { reason: err.reason });
  const errno = errnoOf(err);
  return new StoreError('NotWritten', `no scratch directory was allocated (${errno ?? 'I/O error'})`, errno ? { errno } : {});
}
