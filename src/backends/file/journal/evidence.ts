import path from 'node:path';
import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { ungated } from '../../../domain/secrets/finalGate.js';
import type { StoreLayout } from '../layout.js';
import { readPrefix } from './lines.js';

/**
 * Never-acknowledged bytes at a journal's end (a torn tail), kept as evidence under
 * recovery/<id>/<ms>-<offset>.torn before anyone cuts or rewrites them away: the file created
 * O_CREAT|O_EXCL|O_NOFOLLOW 0600 (createPrivate), written, fsynced, and its directory fsynced —
 * so when the caller then truncates the journal (a write open) or replaces it (rekey), the bytes
 * it drops are already durable elsewhere. Returns the evidence path relative to the store root.
 */
export function keepTornTail(fsl: FsLayer, layout: StoreLayout, id: string, fd: number, offset: number, bytes: number): string {
  const dir = layout.recoverySessionDir(id);
  ensurePrivateDir(fsl, layout.recoveryDir); // 0700, checked at mkdir
  ensurePrivateDir(fsl, dir);
  const file = path.join(dir, `${Date.now()}-${offset}.torn`);
  const buf = readPrefix(fsl, fd, offset, bytes);
  const out = createPrivate(fsl, file);
  try {
    // Bytes already on disk: the one write not gated (see secrets/finalGate.ts).
    const evidence = ungated(fsl);
    for (let done = 0; done < buf.length; ) done += evidence.writeSync(out, buf, done, buf.length - done, done);
    fsl.fsyncSync(out);
  } finally {
    fsl.closeSync(out);
  }
  fsyncDir(fsl, dir);
  return path.relative(layout.root, file);
}
