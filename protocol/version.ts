/** The protocol version this build speaks. Bumped only for incompatible changes. */
export const PROTOCOL_VERSION = 1 as const;
/** Every protocol version this build can serve; `initialize` refuses others. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly number[] = [PROTOCOL_VERSION];
