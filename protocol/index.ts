/**
 * The published protocol: every method's params and result, every record and error, as zod
 * schemas. schema.json and meta.json are generated from this module (npm run gen:protocol).
 */
import type { MethodDescriptor } from './common.js';
import { exit, initialize, initialized, shutdown } from './methods/lifecycle.js';
import { sessionAppend } from './methods/session.append.js';
import { sessionClose } from './methods/session.close.js';
import { sessionCreate } from './methods/session.create.js';
import { sessionList } from './methods/session.list.js';
import { sessionOpen } from './methods/session.open.js';
import { sessionUpdate } from './methods/session.update.js';
import { sessionSearch } from './methods/session.search.js';
import { sessionRead } from './methods/session.read.js';
import { sessionContext } from './methods/session.context.js';
import { sessionCompact, sessionHistory } from './methods/session.compact.js';
import { sessionDelete, sessionFork, sessionRestore } from './methods/session.lineage.js';
import { sessionPrune } from './methods/session.prune.js';
import { sessionDidAppend, sessionDidOverflow, sessionSubscribe, sessionUnsubscribe, turnDidChange } from './methods/session.subscribe.js';
import { toolAllocateScratch } from './methods/tool.js';
import { stateDelete, stateGet, stateSet } from './methods/state.js';
import { blobGet } from './methods/blob.js';
import { sessionUsage } from './methods/session.usage.js';
import { sessionRewind } from './methods/session.rewind.js';
import { turnFail, turnFinish, turnGet, turnResume, turnSetPhase, turnStart } from './methods/turn.js';

export * from './version.js';
export * from './errors.js';
export * from './errorData.js';
export * from './errorDataWrites.js';
export * from './errorResponse.js';
export * from './common.js';
export * from './records.js';
export * from './secrets.js';
export * from './turns.js';
export * from './methods/lifecycle.js';
export * from './methods/session.create.js';
export * from './methods/session.open.js';
export * from './methods/session.append.js';
export * from './methods/session.read.js';
export * from './methods/session.list.js';
export * from './methods/session.update.js';
export * from './methods/session.search.js';
export * from './methods/session.close.js';
export * from './methods/session.context.js';
export * from './methods/session.compact.js';
export * from './methods/session.lineage.js';
export * from './methods/session.prune.js';
export * from './methods/session.subscribe.js';
export * from './methods/turn.js';
export * from './runtimeRecords.js';
export * from './methods/tool.js';
export * from './methods/state.js';
export * from './methods/blob.js';
export * from './usage.js';
export * from './methods/session.usage.js';
export * from './methods/session.rewind.js';

/** Every method and notification of the protocol, in documentation order. */
export const methods: readonly MethodDescriptor[] = [
  initialize, initialized, shutdown, exit,
  sessionCreate, sessionOpen, sessionAppend, sessionRead, sessionList, sessionUpdate, sessionSearch, sessionClose, sessionContext, sessionCompact, sessionHistory, sessionFork, sessionDelete, sessionRestore, sessionPrune,
  sessionUsage, sessionRewind,
  sessionSubscribe, sessionUnsubscribe, sessionDidAppend, sessionDidOverflow, turnDidChange,
  turnStart, turnSetPhase, turnFail, turnResume, turnFinish, turnGet,
  toolAllocateScratch, stateSet, stateGet, stateDelete, blobGet,
];
