//! Values the server may store as blobs ([`BlobOr`]) and reading a blob back.

use crate::BlobRef;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A member that is either its value or, when the server stored it as a content-addressed blob
/// (protocol §15.4: a string longer than the session's `blobThreshold` at a BlobRef position —
/// a tool call's `arguments`, an interruption's `assistant_text`, a tool stream's output), a
/// [`BlobRef`] to it. Nowhere else does the server write one.
///
/// `session/read` returns references unless asked for `inline: true`; read a blob's bytes with
/// [`Client::read_blob`](crate::Client::read_blob). A reference read back may be appended again
/// (the server checks that the blob exists).
///
/// ```
/// use session_sidecar::{BlobOr, ToolCall};
/// let call: ToolCall = serde_json::from_value(serde_json::json!({
///     "id": "call_1", "name": "bash",
///     "arguments": {"$blob": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "bytes": 4}
/// })).unwrap();
/// match &call.arguments {
///     BlobOr::Blob(r) => assert_eq!(r.bytes, 4),
///     BlobOr::Value(text) => println!("inline: {text}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum BlobOr<T> {
    /// The value itself.
    Value(T),
    /// A reference to the blob holding it.
    Blob(BlobRef),
}

impl<T> BlobOr<T> {
    /// The value, when it is not a blob reference.
    pub fn as_value(&self) -> Option<&T> {
        match self {
            BlobOr::Value(v) => Some(v),
            BlobOr::Blob(_) => None,
        }
    }

    /// The reference, when it is one.
    pub fn as_blob(&self) -> Option<&BlobRef> {
        match self {
            BlobOr::Value(_) => None,
            BlobOr::Blob(r) => Some(r),
        }
    }

    /// Whether this is a blob reference.
    pub fn is_blob(&self) -> bool {
        matches!(self, BlobOr::Blob(_))
    }

    /// The value, when it is not a blob reference.
    pub fn into_value(self) -> Option<T> {
        match self {
            BlobOr::Value(v) => Some(v),
            BlobOr::Blob(_) => None,
        }
    }
}

impl<T: Default> Default for BlobOr<T> {
    fn default() -> Self {
        BlobOr::Value(T::default())
    }
}

impl<T> From<T> for BlobOr<T> {
    fn from(v: T) -> Self {
        BlobOr::Value(v)
    }
}

impl From<&str> for BlobOr<String> {
    fn from(v: &str) -> Self {
        BlobOr::Value(v.to_owned())
    }
}

impl<T: Serialize> Serialize for BlobOr<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BlobOr::Value(v) => v.serialize(serializer),
            BlobOr::Blob(r) => r.serialize(serializer),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for BlobOr<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("$blob").is_some() {
            BlobRef::deserialize(value).map(BlobOr::Blob).map_err(D::Error::custom)
        } else {
            T::deserialize(value).map(BlobOr::Value).map_err(D::Error::custom)
        }
    }
}

impl BlobRef {
    /// The `sha256:<hex>` digest naming the blob (the `ref` of `blob/get`).
    pub fn digest(&self) -> &str {
        &self.blob
    }
}
