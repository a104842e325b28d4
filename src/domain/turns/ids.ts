import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

/** Turn ids: ULIDs, so they sort by creation and need no escaping. */
export function newTurnId(): string {
  return next();
}
