//! [`Error`]: one variant per protocol error kind (`error.data.kind`, protocol §6), with its
//! `data` typed, plus the client's own failures; and [`Outcome`], whether a failed write may
//! have been written.

use crate::error_data::*;
use crate::{jsonrpc_code, ErrorKind, InvalidParamsErrorData, OutOfRangeData, UnsupportedProtocolVersionData};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// A JSON-RPC error answered by the sidecar: its `code`, `message` (for humans; may change) and
/// `data` (typed per kind; never record content or your params' text values, §6).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError<D> {
    /// The JSON-RPC error code (-31001 … for domain errors, -32xxx for JSON-RPC ones).
    pub code: i64,
    /// The error message.
    pub message: String,
    /// The error's `data`.
    pub data: D,
    /// `data` exactly as the server sent it (`None` when it sent none).
    pub raw_data: Option<Value>,
}

/// Whether a request that failed may have changed the store (§6 "Anything written?").
///
/// ```
/// use session_sidecar::{Error, Outcome};
/// fn after_failed_append(e: &Error) {
///     match e.outcome() {
///         Outcome::NotWritten => { /* nothing changed: retry as is (after fixing the cause) */ }
///         Outcome::Uncertain => { /* restart the sidecar, reopen, read from the last acknowledged seq */ }
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Nothing was written (the server said so, or the request was refused before it ran).
    NotWritten,
    /// It may or may not have been written: `Uncertain` (a failed `fdatasync`; the session is
    /// fail-stopped in that process), `-32603` internal errors, `Unavailable` with
    /// `outcome: "unknown"`, and every failure where no answer arrived (the sidecar died, a
    /// timeout, unreadable output, an answer that could not be decoded).
    Uncertain,
}

/// Every error of this crate: the protocol's, one variant per `data.kind` (domain errors) or
/// JSON-RPC code, each with its `data` typed; and the client's own (the process, the pipes,
/// timeouts, decoding).
///
/// Dispatch on the variant (the server's `message` may change). [`Error::outcome`] says
/// whether a failed write may have been written.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// `SessionNotFound` (-31001).
    SessionNotFound(Box<RpcError<SessionNotFoundData>>),
    /// `InvalidSessionId` (-31002).
    InvalidSessionId(Box<RpcError<InvalidSessionIdData>>),
    /// `Conflict` (-31003).
    Conflict(Box<RpcError<ConflictData>>),
    /// `Corrupt` (-31004).
    Corrupt(Box<RpcError<CorruptData>>),
    /// `UnsafeStore` (-31005).
    UnsafeStore(Box<RpcError<UnsafeStoreData>>),
    /// `NotWritten` (-31006): nothing was written; the session stays writable.
    NotWritten(Box<RpcError<WriteFailureData>>),
    /// `RolledBack` (-31007): partly written, then truncated away; nothing changed.
    RolledBack(Box<RpcError<WriteFailureData>>),
    /// `Uncertain` (-31008): may or may not be durable; the session is fail-stopped in that
    /// sidecar process (restart it, reopen, read from your last acknowledged seq).
    Uncertain(Box<RpcError<WriteFailureData>>),
    /// `ReadOnly` (-31009).
    ReadOnly(Box<RpcError<ReadOnlyData>>),
    /// `PayloadTooLarge` (-31010).
    PayloadTooLarge(Box<RpcError<PayloadTooLargeData>>),
    /// `UnsupportedProtocolVersion` (-31011).
    UnsupportedProtocolVersion(Box<RpcError<UnsupportedProtocolVersionData>>),
    /// `SecretRejected` (-31012): nothing was written.
    SecretRejected(Box<RpcError<SecretRejectedData>>),
    /// `InvalidTurnTransition` (-31013).
    InvalidTurnTransition(Box<RpcError<InvalidTurnTransitionData>>),
    /// `SessionLocked` (-31014): another process holds the session's writer lease.
    SessionLocked(Box<RpcError<SessionLockedData>>),
    /// `LeaseLost` (-31015).
    LeaseLost(Box<RpcError<LeaseLostData>>),
    /// `Unavailable` (-31016): the PostgreSQL store cannot be reached.
    Unavailable(Box<RpcError<UnavailableData>>),
    /// `KeyMismatch` (-31017): the store's encryption key does not open what is stored.
    KeyMismatch(Box<RpcError<KeyMismatchData>>),
    /// `OutOfRange` (-31018): a well-formed value outside the session's current range (`data.min`..=`data.max`).
    OutOfRange(Box<RpcError<OutOfRangeData>>),
    /// -32700: a frame was not UTF-8 or not JSON.
    ParseError(Box<RpcError<Option<Value>>>),
    /// -32600: not a valid request (also a second `initialize`, any request after `shutdown`).
    InvalidRequest(Box<RpcError<Option<Value>>>),
    /// -32601: unknown method.
    MethodNotFound(Box<RpcError<Option<Value>>>),
    /// -32602: the params failed validation (`data.issues`: where, never the values).
    InvalidParams(Box<RpcError<InvalidParamsErrorData>>),
    /// -32603: an unexpected server fault (its stderr has the details under `data.ref`).
    Internal(Box<RpcError<InternalData>>),
    /// -32002: a request before `initialize`.
    ServerNotInitialized(Box<RpcError<Option<Value>>>),
    /// -32800: cancelled (`$/cancelRequest`) before it started; nothing ran.
    RequestCancelled(Box<RpcError<Option<Value>>>),
    /// An error this client does not know (a newer kind or code), or whose `data` did not have
    /// the documented shape; `data` as received.
    Other(Box<RpcError<Option<Value>>>),
    /// The sidecar ended (or its output became unreadable) before answering. Every request
    /// pending then fails with it, and every later one at once.
    Exited {
        /// What happened, with the exit status and, when captured, the sidecar's last stderr line.
        reason: String,
    },
    /// No answer within the request timeout; `$/cancelRequest` was sent. A write may still
    /// be committed.
    Timeout {
        /// The method.
        method: String,
    },
    /// No sidecar command to run (see [`Builder::command`](crate::Builder::command)).
    NotFound {
        /// What is missing.
        message: String,
    },
    /// The sidecar could not be started.
    Spawn {
        /// The argv that was run.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The answer did not decode into the method's result type.
    Decode {
        /// The method.
        method: String,
        /// Why.
        source: serde_json::Error,
    },
    /// The params could not be encoded as JSON (nothing was sent).
    Encode(serde_json::Error),
    /// Another I/O failure of the client.
    Io(std::io::Error),
}

/// `Result<T, Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The kind of a domain error (`data.kind`), e.g. [`ErrorKind::Conflict`].
    pub fn kind(&self) -> Option<ErrorKind> {
        Some(match self {
            Error::SessionNotFound(_) => ErrorKind::SessionNotFound,
            Error::InvalidSessionId(_) => ErrorKind::InvalidSessionId,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Corrupt(_) => ErrorKind::Corrupt,
            Error::UnsafeStore(_) => ErrorKind::UnsafeStore,
            Error::NotWritten(_) => ErrorKind::NotWritten,
            Error::RolledBack(_) => ErrorKind::RolledBack,
            Error::Uncertain(_) => ErrorKind::Uncertain,
            Error::ReadOnly(_) => ErrorKind::ReadOnly,
            Error::PayloadTooLarge(_) => ErrorKind::PayloadTooLarge,
            Error::UnsupportedProtocolVersion(_) => ErrorKind::UnsupportedProtocolVersion,
            Error::SecretRejected(_) => ErrorKind::SecretRejected,
            Error::InvalidTurnTransition(_) => ErrorKind::InvalidTurnTransition,
            Error::SessionLocked(_) => ErrorKind::SessionLocked,
            Error::LeaseLost(_) => ErrorKind::LeaseLost,
            Error::Unavailable(_) => ErrorKind::Unavailable,
            Error::KeyMismatch(_) => ErrorKind::KeyMismatch,
            Error::OutOfRange(_) => ErrorKind::OutOfRange,
            _ => return None,
        })
    }

    /// The JSON-RPC code, for an error the server answered.
    pub fn code(&self) -> Option<i64> {
        self.rpc_parts().map(|(code, _, _)| code)
    }

    /// The server's message, for an error the server answered.
    pub fn server_message(&self) -> Option<&str> {
        self.rpc_parts().map(|(_, message, _)| message)
    }

    /// The error's `data` exactly as the server sent it, for an error the server answered.
    pub fn raw_data(&self) -> Option<&Value> {
        self.rpc_parts().and_then(|(_, _, data)| data)
    }

    fn rpc_parts(&self) -> Option<(i64, &str, Option<&Value>)> {
        macro_rules! parts {
            ($($v:ident),*) => {
                match self {
                    $(Error::$v(e) => Some((e.code, e.message.as_str(), e.raw_data.as_ref())),)*
                    _ => None,
                }
            };
        }
        parts!(
            SessionNotFound, InvalidSessionId, Conflict, Corrupt, UnsafeStore, NotWritten, RolledBack, Uncertain,
            ReadOnly, PayloadTooLarge, UnsupportedProtocolVersion, SecretRejected, InvalidTurnTransition,
            SessionLocked, LeaseLost, Unavailable, KeyMismatch, OutOfRange, ParseError, InvalidRequest, MethodNotFound,
            InvalidParams, Internal, ServerNotInitialized, RequestCancelled, Other
        )
    }

    /// Whether the failed request may have changed the store: see [`Outcome`].
    pub fn outcome(&self) -> Outcome {
        match self {
            Error::Uncertain(_)
            | Error::Internal(_)
            | Error::Other(_)
            | Error::Exited { .. }
            | Error::Timeout { .. }
            | Error::Decode { .. }
            | Error::Io(_) => Outcome::Uncertain,
            Error::Unavailable(e) if e.data.outcome.as_deref() == Some("unknown") => Outcome::Uncertain,
            _ => Outcome::NotWritten,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((code, message, _)) = self.rpc_parts() {
            return match self.kind() {
                Some(kind) => write!(f, "{kind}: {message} (code {code})"),
                None => write!(f, "{message} (code {code})"),
            };
        }
        match self {
            Error::Exited { reason } => write!(f, "the sidecar is gone: {reason}"),
            Error::Timeout { method } => write!(f, "no answer to {method} in time (cancelled)"),
            Error::NotFound { message } => f.write_str(message),
            Error::Spawn { command, source } => write!(f, "cannot start the sidecar ({command}): {source}"),
            Error::Decode { method, source } => write!(f, "unexpected answer to {method}: {source}"),
            Error::Encode(e) => write!(f, "params are not JSON: {e}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            _ => unreachable!("every answered error has rpc parts"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Spawn { source, .. } => Some(source),
            Error::Decode { source, .. } => Some(source),
            Error::Encode(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// The error of a JSON-RPC error object `{code, message, data?}`.
pub(crate) fn from_response(error: &Value) -> Error {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
    let data = error.get("data").cloned();
    let raw = |code: i64, message: String, data: Option<Value>| Box::new(RpcError { code, message, raw_data: data.clone(), data });
    let kind = data.as_ref().and_then(|d| d.get("kind")).and_then(Value::as_str).and_then(ErrorKind::from_wire);
    if let Some(kind) = kind {
        return domain(kind, code, message, data.clone().unwrap_or(Value::Null), data);
    }
    match code {
        jsonrpc_code::PARSE_ERROR => Error::ParseError(raw(code, message, data)),
        jsonrpc_code::INVALID_REQUEST => Error::InvalidRequest(raw(code, message, data)),
        jsonrpc_code::METHOD_NOT_FOUND => Error::MethodNotFound(raw(code, message, data)),
        jsonrpc_code::SERVER_NOT_INITIALIZED => Error::ServerNotInitialized(raw(code, message, data)),
        jsonrpc_code::REQUEST_CANCELLED => Error::RequestCancelled(raw(code, message, data)),
        jsonrpc_code::INVALID_PARAMS => typed(code, message, data.clone().unwrap_or(Value::Null), data, Error::InvalidParams),
        jsonrpc_code::INTERNAL_ERROR => {
            let typed_data = data.clone().unwrap_or_else(|| Value::Object(Map::new()));
            typed(code, message, typed_data, data, Error::Internal)
        }
        _ => Error::Other(raw(code, message, data)),
    }
}

fn typed<D: DeserializeOwned>(code: i64, message: String, data: Value, raw: Option<Value>, wrap: fn(Box<RpcError<D>>) -> Error) -> Error {
    match D::deserialize(&data) {
        Ok(d) => wrap(Box::new(RpcError { code, message, data: d, raw_data: raw })),
        Err(_) => Error::Other(Box::new(RpcError { code, message, raw_data: raw, data: Some(data) })),
    }
}

/// A domain error by its kind. The match is exhaustive over the generated [`ErrorKind`], so a
/// kind added to `protocol/meta.json` does not compile until it has a variant here.
fn domain(kind: ErrorKind, code: i64, message: String, data: Value, raw: Option<Value>) -> Error {
    match kind {
        ErrorKind::SessionNotFound => typed(code, message, data, raw, Error::SessionNotFound),
        ErrorKind::InvalidSessionId => typed(code, message, data, raw, Error::InvalidSessionId),
        ErrorKind::Conflict => typed(code, message, data, raw, Error::Conflict),
        ErrorKind::Corrupt => typed(code, message, data, raw, Error::Corrupt),
        ErrorKind::UnsafeStore => typed(code, message, data, raw, Error::UnsafeStore),
        ErrorKind::NotWritten => typed(code, message, data, raw, Error::NotWritten),
        ErrorKind::RolledBack => typed(code, message, data, raw, Error::RolledBack),
        ErrorKind::Uncertain => typed(code, message, data, raw, Error::Uncertain),
        ErrorKind::ReadOnly => typed(code, message, data, raw, Error::ReadOnly),
        ErrorKind::PayloadTooLarge => typed(code, message, data, raw, Error::PayloadTooLarge),
        ErrorKind::UnsupportedProtocolVersion => typed(code, message, data, raw, Error::UnsupportedProtocolVersion),
        ErrorKind::SecretRejected => typed(code, message, data, raw, Error::SecretRejected),
        ErrorKind::InvalidTurnTransition => typed(code, message, data, raw, Error::InvalidTurnTransition),
        ErrorKind::SessionLocked => typed(code, message, data, raw, Error::SessionLocked),
        ErrorKind::LeaseLost => typed(code, message, data, raw, Error::LeaseLost),
        ErrorKind::Unavailable => typed(code, message, data, raw, Error::Unavailable),
        ErrorKind::KeyMismatch => typed(code, message, data, raw, Error::KeyMismatch),
        ErrorKind::OutOfRange => typed(code, message, data, raw, Error::OutOfRange),
        ErrorKind::Unknown => Error::Other(Box::new(RpcError { code, message, data: Some(data), raw_data: raw })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_meta_json_has_its_variant_and_code() {
        for &kind in ErrorKind::ALL {
            let data = match kind {
                ErrorKind::UnsupportedProtocolVersion => json!({"kind": kind.as_str(), "supported": [1], "requested": 2}),
                ErrorKind::OutOfRange => json!({"kind": kind.as_str(), "path": "toSeq", "min": 1, "max": 5}),
                _ => json!({"kind": kind.as_str()}),
            };
            let e = from_response(&json!({"code": kind.code(), "message": "m", "data": data}));
            assert_eq!(e.kind(), Some(kind), "{kind}");
            assert_eq!(e.code(), Some(kind.code()));
        }
    }

    #[test]
    fn typed_data_and_outcomes() {
        let e = from_response(&json!({"code": -31003, "message": "x",
            "data": {"expectedLastSeq": 3, "lastSeq": 5, "kind": "Conflict"}}));
        match &e {
            Error::Conflict(c) => assert_eq!((c.data.expected_last_seq, c.data.last_seq), (Some(3), Some(5))),
            other => panic!("{other:?}"),
        }
        assert_eq!(e.outcome(), Outcome::NotWritten);
        let e = from_response(&json!({"code": -31008, "message": "x", "data": {"errno": "EIO", "kind": "Uncertain"}}));
        assert!(matches!(&e, Error::Uncertain(u) if u.data.errno.as_deref() == Some("EIO")));
        assert_eq!(e.outcome(), Outcome::Uncertain);
        let e = from_response(&json!({"code": -31009, "message": "x", "data": {"reason": "failStop", "kind": "ReadOnly"}}));
        assert!(matches!(&e, Error::ReadOnly(r) if r.data.reason == Some(ReadOnlyReason::FailStop)));
        let e = from_response(&json!({"code": -31016, "message": "x",
            "data": {"reason": "connectionLost", "retryable": true, "retryAfterMs": 500, "outcome": "unknown", "kind": "Unavailable"}}));
        assert_eq!(e.outcome(), Outcome::Uncertain);
        let e = from_response(&json!({"code": -32602, "message": "x",
            "data": {"kind": "InvalidParams", "issues": [{"path": "limit", "message": "too small"}]}}));
        assert!(matches!(&e, Error::InvalidParams(p) if p.data.issues[0].path == "limit"));
        let e = from_response(&json!({"code": -32603, "message": "x", "data": {"kind": "Internal", "ref": "3d5f51e8"}}));
        assert!(matches!(&e, Error::Internal(i) if i.data.reference.as_deref() == Some("3d5f51e8")));
        assert_eq!(e.outcome(), Outcome::Uncertain);
        let e = from_response(&json!({"code": -31099, "message": "new", "data": {"kind": "SomethingNew"}}));
        assert!(matches!(&e, Error::Other(o) if o.code == -31099));
        assert!(matches!(from_response(&json!({"code": -32601, "message": "m"})), Error::MethodNotFound(_)));
        assert_eq!(from_response(&json!({"code": -32601, "message": "m"})).raw_data(), None);
        let raw = json!({"expectedLastSeq": 3, "lastSeq": 5, "kind": "Conflict", "new": null});
        assert_eq!(from_response(&json!({"code": -31003, "message": "x", "data": raw})).raw_data(), Some(&raw));
        assert_eq!(from_response(&json!({"code": -32603, "message": "x"})).raw_data(), None, "the typed default data is not what was received");
    }
}
