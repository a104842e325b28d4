//! The Rust client of [session-sidecar](https://github.com/session-sidecar/session-sidecar):
//! durable, secret-safe conversation sessions for AI agents, kept by a sidecar process spoken
//! to over its stdin/stdout with JSON-RPC 2.0 (`protocol/README.md` is the specification).
//!
//! - [`Client`]: blocking, over `std::process` with a reader thread; `Send + Sync`.
//! - [`AsyncClient`] (feature `tokio`): tokio process, a reader and a writer task.
//! - Both framings ([`Framing::Ndjson`], the default, and [`Framing::Lsp`]).
//! - Every request method of protocol v1 as a typed function (`create`, `append`, `read`, …;
//!   [`TYPED_METHODS`]), params with `new(required…)` + setters or struct literals with
//!   `..Default::default()`; records and results typed — all generated from
//!   `protocol/schema.json` and `protocol/meta.json` (`src/generated.rs`, DO NOT EDIT).
//! - [`Error`]: one variant per protocol error kind with its typed `data`; [`Error::outcome`]
//!   tells [`Outcome::NotWritten`] from [`Outcome::Uncertain`].
//! - Notifications as a blocking iterator or a stream, through a bounded buffer ([`Lagged`]).
//! - Paging: [`Client::records`], [`Client::sessions`], [`Client::search_hits`].
//! - [`BlobOr`]: a member that is its value or a [`BlobRef`].
//! - Drop closes the sidecar's stdin, waits, and kills it after a timeout.
//!
//! ```no_run
//! use session_sidecar::{Client, Record, SessionAppendParams, SessionCreateParams, SessionReadParams};
//!
//! # fn main() -> session_sidecar::Result<()> {
//! let client = Client::spawn("/tmp/my-store")?; // $SESSION_SIDECAR_COMMAND, or session-sidecar on PATH
//! let sid = client.create(SessionCreateParams::new().title("Fix the build"))?.session_id;
//! let ack = client.append(SessionAppendParams::new(&sid, [Record::text("user", "Why does CI fail?")]))?;
//! println!("durable through seq {}", ack.last_seq);
//! for record in client.records(SessionReadParams::new(&sid)) {
//!     println!("{:?}", record?);
//! }
//! client.shutdown()?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod blob;
mod builder;
mod client;
mod command;
mod core;
mod error;
mod error_data;
mod framing;
mod generated;
mod notify;
mod paging;
mod pending;
mod records;

#[cfg(feature = "tokio")]
mod aio;

pub use blob::BlobOr;
pub use builder::{Builder, Stderr};
pub use client::Client;
pub use pending::{Notifications, Pending};
pub use command::{resolve_command, split_command_line, COMMAND_ENV, EXECUTABLE};
pub use error::*;
pub use error_data::*;
pub use framing::DEFAULT_MAX_FRAME_BYTES;
pub use generated::*;
pub use notify::{Lagged, NotificationItem, DEFAULT_NOTIFICATION_CAPACITY};
pub use paging::Pages;

#[cfg(feature = "tokio")]
pub use aio::{AsyncClient, AsyncPending, NotificationStream, PageStream};

/// A request method of the protocol: its name, params and result types. One marker type per
/// method is generated in [`method`]; use them with [`Client::call`] and [`Client::send`].
pub trait Method {
    /// The method name, e.g. `session/append`.
    const NAME: &'static str;
    /// Its params.
    type Params: serde::Serialize;
    /// Its result.
    type Result: serde::de::DeserializeOwned;
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
