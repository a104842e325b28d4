/** Library entry: the store and server, for embedding and for tests. */
export { FileSessionStore, type FileStoreOptions } from './stores/fileStore.js';
export { StoreError, type StoreErrorKind } from './domain/errors.js';
export type * from './domain/types.js';
export { startServer, type ServerOptions } from './server/server.js';
