//! The typed `data` of each error kind (protocol §6.2), as the server produces it. Every
//! member is optional (a shape the server does not send is not an error) and other members are
//! kept in `extra`.

use crate::TurnState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

macro_rules! data_struct {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty => $json:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[$fdoc])*
                #[serde(rename = $json, default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
            /// Other members of `data` (besides `kind`).
            #[serde(flatten)]
            pub extra: Map<String, Value>,
        }
    };
}

data_struct!(
    /// `data` of `SessionNotFound` (-31001).
    SessionNotFoundData { /** The session. */ session_id: String => "sessionId" }
);
data_struct!(
    /// `data` of `InvalidSessionId` (-31002): nothing besides `kind`.
    InvalidSessionIdData {}
);
data_struct!(
    /// `data` of `Conflict` (-31003): `expectedLastSeq` and `lastSeq`; or a `reason`
    /// (`journalChanged`, `inTrash`, `exists`, `turnPending` with `turnId`/`turnFirstSeq`); from
    /// `session/compact` also `stage`.
    ConflictData {
        /** The `expectedLastSeq` sent. */ expected_last_seq: u64 => "expectedLastSeq",
        /** The session's `lastSeq`. */ last_seq: u64 => "lastSeq",
        /** Why, when not a seq mismatch. */ reason: String => "reason",
        /** `preCommit` (session/compact). */ stage: String => "stage",
        /** The active turn (`turnPending`). */ turn_id: String => "turnId",
        /** Its first seq (`turnPending`). */ turn_first_seq: u64 => "turnFirstSeq",
    }
);
data_struct!(
    /// `data` of `Corrupt` (-31004).
    CorruptData {
        /** The journal line (1 = the header). */ line: u64 => "line",
        /** What is wrong. */ reason: String => "reason",
        /** The record that could not be read (found by a read). */ seq: u64 => "seq",
        /** A missing archived generation (`archiveMissing`). */ generation: u64 => "generation",
        /** A missing or damaged blob. */ blob_ref: String => "ref",
        /** The session. */ session_id: String => "sessionId",
    }
);
data_struct!(
    /// `data` of `UnsafeStore` (-31005).
    UnsafeStoreData {
        /** The session. */ session_id: String => "sessionId",
        /** e.g. `has mode 644, expected 600`. */ reason: String => "reason",
    }
);
data_struct!(
    /// `data` of `NotWritten` (-31006), `RolledBack` (-31007) and `Uncertain` (-31008).
    WriteFailureData {
        /** The errno code, when known (`ENOSPC`, `EIO`). */ errno: String => "errno",
        /** `session/create`'s session (Uncertain). */ session_id: String => "sessionId",
        /** `preCommit` / `postCommit` (session/compact). */ stage: String => "stage",
    }
);
data_struct!(
    /// `data` of `ReadOnly` (-31009).
    ReadOnlyData {
        /** The session (absent for `failStop`). */ session_id: String => "sessionId",
        /** Why. */ reason: ReadOnlyReason => "reason",
    }
);
data_struct!(
    /// `data` of `PayloadTooLarge` (-31010): the message (`maxMessageBytes`), a record (`index`,
    /// `maxBytes`) or the session header (nothing).
    PayloadTooLargeData {
        /** The server's `--max-message-bytes`. */ max_message_bytes: u64 => "maxMessageBytes",
        /** Which record of the append. */ index: u64 => "index",
        /** The largest record. */ max_bytes: u64 => "maxBytes",
    }
);
data_struct!(
    /// `data` of `SecretRejected` (-31012): where and in which encoding, never the value.
    SecretRejectedData {
        /** e.g. `records[0].message.toolCalls[0].arguments<json>.token`. */ path: String => "path",
        /** `raw`, `json-escape`, `percent`, `base64`, `base64url`, `hex`, `nested-json`, … */ rule: String => "rule",
    }
);
data_struct!(
    /// `data` of `InvalidTurnTransition` (-31013).
    InvalidTurnTransitionData {
        /** The current turn state (`None`: the member was absent or `null`). */ turn: TurnState => "turn",
        /** Why. */ reason: String => "reason",
    }
);
data_struct!(
    /// `data` of `SessionLocked` (-31014).
    SessionLockedData {
        /** The session. */ session_id: String => "sessionId",
        /** The process holding the writer lease (absent for a lease without a holder record). */ holder: LockHolder => "holder",
    }
);
data_struct!(
    /// The holder of a writer lease.
    LockHolder {
        /** Its process id. */ pid: i64 => "pid",
        /** Its host. */ hostname: String => "hostname",
        /** When it took the lease. */ started_at: String => "startedAt",
    }
);
data_struct!(
    /// `data` of `LeaseLost` (-31015).
    LeaseLostData { /** The session. */ session_id: String => "sessionId" }
);
data_struct!(
    /// `data` of `Unavailable` (-31016, PostgreSQL backend).
    UnavailableData {
        /** A fixed word: `connect`, `connectionLost`, `shutdown`, … */ reason: String => "reason",
        /** Whether retrying may succeed. */ retryable: bool => "retryable",
        /** When to retry. */ retry_after_ms: u64 => "retryAfterMs",
        /** For writes: `notWritten` or `unknown`. */ outcome: String => "outcome",
    }
);
data_struct!(
    /// `data` of `KeyMismatch` (-31017).
    KeyMismatchData {
        /** `wrongKey`, `keyRequired`, `notEncrypted` or `rekeyUnfinished`. */ reason: String => "reason",
        /** The session, when one session's files are concerned. */ session_id: String => "sessionId",
    }
);
data_struct!(
    /// `data` of -32603 (internal error): the reference of the server's stderr line.
    InternalData { /** The `internal error <ref>` of the server's stderr. */ reference: String => "ref" }
);

/// `data.reason` of `ReadOnly`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ReadOnlyReason {
    /// Not open for writing in this process (or closed): `session/open` it in `write` mode.
    #[serde(rename = "notOpen")]
    NotOpen,
    /// Opened in `read` mode: open it in `write` mode.
    #[serde(rename = "openedReadOnly")]
    OpenedReadOnly,
    /// Stopped by an `Uncertain` in this process: restart the sidecar.
    #[serde(rename = "failStop")]
    FailStop,
    /// A reason this client does not know.
    #[serde(other)]
    Unknown,
}
