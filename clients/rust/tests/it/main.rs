//! Integration tests against the real sidecar: `$SESSION_SIDECAR_COMMAND` when set (the JS
//! suite's test/clients/rust.test.ts sets it to the built `node dist/src/cli.js`), else the
//! build of the repository this crate is in (`npm run build` first). One test binary, so the
//! crate links once.

mod common;

mod codegen;
mod crash;
mod errors;
mod lifecycle;
mod methods;
mod notifications;
mod paging;
mod two_clients;
mod vectors;

#[cfg(feature = "tokio")]
mod async_client;
