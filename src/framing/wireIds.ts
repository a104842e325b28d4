/**
 * Request ids as the connection sees them. JSON-RPC 2.0 makes 7 and "7" two ids, but
 * vscode-jsonrpc keys its request queue and cancellation tokens by `String(id)`, where they
 * collide (the second would replace the first, which then is never answered). So every string
 * id crosses into the connection with a prefix and leaves it without: numbers pass unchanged,
 * and `String(n)` of a finite number never starts with the prefix, so the mapping is one-to-one
 * and no two wire ids share a connection key.
 */
const PREFIX = 's';

export type WireId = string | number;

/** The id the connection uses for a wire id. */
export function toConnectionId(id: WireId): WireId {
  return typeof id === 'string' ? PREFIX + id : id;
}

/** The wire id of a connection id (only ids made by toConnectionId reach here). */
export function toWireId(id: unknown): unknown {
  return typeof id === 'string' && id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id;
}
