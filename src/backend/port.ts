/**
 * Moved: the port is src/core/port.ts (interface Backend and the types it speaks). These
 * names are re-exported for the file backend's transfer code, which imports them from here
 * until the file backend moves onto the port (issue 26, phase 3); new code imports
 * src/core/port.ts.
 */
export type { ArchivedGeneration, BundleGeneration, Fence, LeaseHolder, SealedHeader, SealedRecord, SessionBundle, SessionRow, Snapshot } from '../core/port.js';
