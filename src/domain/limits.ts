export { DEFAULT_READ_LIMIT } from '../../protocol/methods/session.read.js';

/** At most this many bytes of stored records are gathered into one read page, on any backend. */
export const PAGE_BYTES = 16 << 20;
