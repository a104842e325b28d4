/**
 * `session-sidecar/adapters/openai-agents`: an OpenAI Agents SDK (`@openai/agents-core`, an
 * optional peer dependency) `Session` backed by the sidecar. Loaded only when imported; the
 * sidecar binary and its client never load it, and it loads the SDK for types only.
 */
export { idempotencyKeyFor, SidecarSession, type SidecarSessionOptions } from './sidecarSession.js';
export { ITEM_TYPE } from './itemsView.js';
