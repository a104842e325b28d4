import { monotonicFactory } from 'ulid';
import { StoreError } from './errors.js';

const nextUlid = monotonicFactory();
const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** A new session id: a ULID, so ids sort by creation time and never need escaping. */
export function newSessionId(now: number): string {
  return nextUlid(now);
}

/** checkSessionId as a test, without an exception: what a listing asks of every name in sessions/. */
export function isSessionId(id: string): boolean {
  return ID_PATTERN.test(id) && !id.includes('..') && !id.startsWith('.');
}

/** Ids become file names: anything that could escape the store or hide a file is refused. */
export function checkSessionId(id: string): string {
  if (!isSessionId(id)) {
    throw new StoreError(
      'InvalidSessionId',
      'invalid session id: expected 1-128 characters of [A-Za-z0-9._-], no "..", not starting with "."',
    );
  }
  return id;
}
