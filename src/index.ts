/** Library entry: the store and server, for embedding and for tests. */
export { FileSessionStore, type FileStoreOptions } from './store/fileStore.js';
export { StoreError, type StoreErrorKind } from './store/errors.js';
export type * from './store/types.js';
export { startServer, type ServerOptions } from './server/server.js';
