import { UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { StoreError } from '../../domain/errors.js';
import { checkMarker } from './encryptionMarker.js';
import type { StoreLayout } from './layout.js';

/**
 * A store root as an instance opens it: for inspection only, it must exist already (nothing is
 * created); otherwise its folders are created (0700) as needed. Either way its encryption
 * marker must agree with the key given (checkMarker: KeyMismatch otherwise).
 */
export function openStoreRoot(fsl: FsLayer, layout: StoreLayout, key: StoreKey | undefined, readOnly: boolean): void {
  if (readOnly) {
    if (!fsl.lstatSync(layout.root)?.isDirectory() || !fsl.lstatSync(layout.sessionsDir)?.isDirectory()) {
      throw new StoreError('SessionNotFound', `no session store at ${layout.root}`, { reason: 'noStore' });
    }
    checkMarker(fsl, layout, key, true);
    return;
  }
  try {
    layout.init(fsl);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: ${err.path} ${err.reason}`, { reason: err.reason });
    throw err;
  }
  checkMarker(fsl, layout, key, false);
}
