import { type FsLayer, nodeFs } from '../../durable/fsLayer.js';
import { StoreError } from '../errors.js';
import type { SecretSet } from './knownSecrets.js';

/**
 * The ONE final secret gate: every byte the store writes passes through `writeSync` of the
 * FsLayer the store holds (the interface has no other write call), and that layer is this wrapper. The exact
 * bytes about to be written — after redaction, re-serialization, summarizing, copying — are
 * checked for every secret registered in this process, in every encoding the detector knows,
 * before the call reaches the file system. A hit throws `SecretRejected` and writes nothing.
 *
 * Journal lines, headers, checkpoints, compaction copies and archives, index entries, state
 * values, blob contents, lease holder records: all pass here, because no code under src/backends/file
 * writes except through its FsLayer (test/domain/secrets/finalGate.test.ts enforces both: a
 * static scan for other write calls, and a recording layer under the gate that fails on any
 * write the gate did not see).
 *
 * The one exception is recovery evidence: bytes already on disk (a torn tail) moved aside
 * before the journal is cut. Refusing them would make the session unopenable and would not
 * keep the bytes off the disk (they are there already); that writer asks for `ungated(fsl)`.
 *
 * Copies must hand the gate whole lines: a secret is checked within one write call, so a
 * caller copying a journal cuts its chunks at line ends (compact.ts copyRange).
 */
export interface GatedFs extends FsLayer {
  readonly [UNGATED]: FsLayer;
}

const UNGATED: unique symbol = Symbol('ungated');

/** Buffers (by identity) the gate checked, for the test that proves nothing bypasses it. */
export const checkedByGate = new WeakSet<Buffer>();

/** What the gate asks of the secrets it checks against (a SecretSet, or a backend's second net over one). */
export interface ByteFinder {
  readonly size: number;
  findInBytes(bytes: Buffer): string | undefined;
}

export function gateFs(inner: FsLayer, secrets: ByteFinder): GatedFs {
  const check = (bytes: Buffer) => {
    checkBytes(secrets, bytes);
    checkedByGate.add(bytes);
  };
  // Every call of the seam forwarded to `inner` (bound: a layer may be a class instance whose
  // methods live on its prototype), writeSync replaced.
  const forwarded = Object.fromEntries(
    Object.keys(nodeFs).map((k) => {
      const call = inner[k as keyof FsLayer] as ((...a: unknown[]) => unknown) | undefined;
      return [k, typeof call === 'function' ? call.bind(inner) : call];
    }),
  ) as unknown as FsLayer;
  return {
    ...forwarded,
    [UNGATED]: inner,
    writeSync(fd, buf, offset, length, position) {
      check(offset === 0 && length === buf.length ? buf : buf.subarray(offset, offset + length));
      checkedByGate.add(buf);
      return inner.writeSync(fd, buf, offset, length, position);
    },
  };
}

/** The layer under the gate: only for recovery evidence (bytes that are on disk already). */
export function ungated(fsl: FsLayer): FsLayer {
  return (fsl as Partial<GatedFs>)[UNGATED] ?? fsl;
}

/** Throws SecretRejected when `bytes` hold a registered secret in any encoding. */
export function checkBytes(secrets: ByteFinder, bytes: Buffer, where = '(bytes to write)'): void {
  if (secrets.size === 0) return;
  const rule = secrets.findInBytes(bytes);
  if (rule === undefined) return;
  const what = where === '(bytes to write)' ? 'reached the final check before a write' : `is in ${where}`;
  const err = new StoreError('SecretRejected', `a registered secret ${what} (rule: ${rule}); nothing was written`, {
    path: where, rule,
  });
  // appendDurably passes this error through unchanged (nothing was written, nothing to roll back).
  throw Object.assign(err, { refusedBeforeWrite: true });
}

/** Whether an error is the gate's refusal (callers that can write something safer instead). */
export function isGateRefusal(err: unknown): boolean {
  return err instanceof StoreError && err.kind === 'SecretRejected' && err.details.path === '(bytes to write)';
}
