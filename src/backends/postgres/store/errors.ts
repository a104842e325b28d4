import { PgBackendError } from '../errors.js';
import { StoreError } from '../../../domain/errors.js';

/**
 * The PostgreSQL backend's errors as the store's: the same kind names (Unavailable is a store
 * kind too). Messages and details are already text-free of database content (see
 * backends/postgres/errors.ts); `holder` is put in the protocol's SessionLocked shape.
 */
export function storeErrorOf(err: unknown): unknown {
  if (!(err instanceof PgBackendError)) return err;
  const details: Record<string, unknown> = { ...err.details };
  const holder = details.holder as { host?: string; pid?: number; sidecarId?: string } | undefined;
  if (holder) details.holder = { pid: holder.pid, hostname: holder.host, sidecarId: holder.sidecarId };
  if (err.kind === 'Unavailable') {
    details.retryable ??= true;
    details.retryAfterMs ??= 1000;
    details.reason ??= 'unavailable';
  }
  return new StoreError(err.kind, err.message, details);
}

/** Runs a backend call with its errors mapped. */
export async function pg<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storeErrorOf(err);
  }
}
