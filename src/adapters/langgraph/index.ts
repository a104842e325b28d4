/**
 * `session-sidecar/adapters/langgraph`: a LangGraph checkpointer backed by the sidecar.
 * Loading this module loads `@langchain/langgraph-checkpoint` (an optional peer dependency);
 * nothing else in the package imports it.
 */
export { SidecarCheckpointSaver, type SidecarCheckpointSaverOptions } from './saver.js';
export { ALL_TAG, namespaceTag, threadTag } from './directory.js';
export { CHECKPOINT_EVENT, WRITES_EVENT } from './records.js';
