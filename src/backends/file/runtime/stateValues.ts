import { AppendFailure, errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import { ensurePrivateDir, readPrivateSmall, replaceAtomicallySync, syncAfterRename } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { checkStateKey, STATE_WRAPPER_BYTES } from '../../../domain/stateValues.js';
import { MAX_STATE_VALUE_BYTES } from '../../../../protocol/methods/state.js';
import { fileAad } from '../journal/cipher.js';
import { openText, sealedLimit, sealText } from '../sealedFile.js';
import { parseExact } from '../../../domain/exactJson.js';

/**
 * state/<key>.json holds {"value": ...} (prepared by domain/stateValues.ts). Replaced atomically
 * (replaceAtomicallySync, not write-file-atomic, whose temp file is predictable and opened without
 * O_EXCL|O_NOFOLLOW: temp file <key>.json.<16 random hex>.tmp created O_CREAT|O_EXCL|O_NOFOLLOW
 * 0600, written through the FsLayer, fsynced, renamed) and then the directory is fsynced, so after
 * a crash the key holds the old value or the new one, never a mix, and an acknowledged set survives.
 */

/** Writes a prepared value (synchronously: state writes take effect in the session's queue order). */
export function writeStateValue(fsl: FsLayer, layout: StoreLayout, id: string, key: string, text: string): void {
  try {
    ensurePrivateDir(fsl, layout.stateDir(id));
    // Sealed (encryption at rest) after the final gate's check of the plaintext, as every stored byte is.
    replaceAtomicallySync(fsl, layout.stateValue(id, key), sealText(fsl, fileAad('state', id, key), text)); // refuses a symlink or FIFO at the name
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `state value ${key} refused: a state path ${err.reason}`, { reason: err.reason });
    throw stateWriteError(err, key);
  }
}

export function getStateValue(fsl: FsLayer, layout: StoreLayout, id: string, key: string): unknown {
  checkStateKey(key);
  let text: string | undefined;
  try {
    text = readPrivateSmall(fsl, layout.stateValue(id, key), sealedLimit(MAX_STATE_VALUE_BYTES + STATE_WRAPPER_BYTES + 1));
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `state value ${key} refused: it ${err.reason}`, { reason: err.reason });
    throw err;
  }
  if (text === undefined) return null;
  const plain = openText(fsl, fileAad('state', id, key), text);
  if (plain === undefined) throw new StoreError('Corrupt', `state value ${key} is damaged (it does not authenticate under the store's key)`, { key, reason: 'authentication' });
  try {
    return (parseExact(plain) as { value: unknown }).value ?? null;
  } catch {
    throw new StoreError('Corrupt', `state value ${key} is damaged (not JSON)`, { key, reason: 'not JSON' });
  }
}

export function deleteStateValue(fsl: FsLayer, layout: StoreLayout, id: string, key: string): boolean {
  checkStateKey(key);
  try {
    fsl.unlinkSync(layout.stateValue(id, key));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw stateWriteError(err, key);
  }
  try {
    syncAfterRename(fsl, layout.stateDir(id));
  } catch (err) {
    throw stateWriteError(err, key);
  }
  return true;
}

/** NotWritten while the old value still stands; Uncertain once the change was visible but its sync failed. */
function stateWriteError(err: unknown, key: string): StoreError {
  if (err instanceof StoreError) return err; // the final secret gate's refusal: the old value stands
  if (err instanceof AppendFailure) {
    return new StoreError('Uncertain', `state value ${key} may or may not be durable (${err.errno ?? 'I/O error'}); the session is read-only in this process`, {
      ...(err.errno ? { errno: err.errno } : {}),
    });
  }
  const errno = errnoOf(err);
  return new StoreError('NotWritten', `state value ${key} not changed (${errno ?? 'I/O error'}); the previous value stands`, errno ? { errno } : {});
}
