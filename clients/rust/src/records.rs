//! Conveniences over the generated record types.

use crate::{
    Attachment, ChatMessage, EventRecord, InterruptionRecord, MessageRecord, Record, StoredRecord,
};
use serde_json::Value;

impl Record {
    /// A `message` record.
    pub fn message(message: ChatMessage) -> Self {
        Record::Message(MessageRecord::new(message))
    }

    /// A `message` record with a string `content`, e.g. `Record::text("user", "hi")`.
    pub fn text(role: impl Into<String>, content: impl Into<String>) -> Self {
        Record::message(ChatMessage::text(role, content))
    }

    /// An `event` record (`payload` is required by the protocol: use `Value::Null` for none).
    pub fn event(type_: impl Into<String>, payload: impl Into<Value>) -> Self {
        Record::Event(EventRecord::new(type_, payload))
    }

    /// An `interruption` record.
    pub fn interruption(reason: impl Into<String>, phase: impl Into<String>) -> Self {
        Record::Interruption(InterruptionRecord::new(reason, phase))
    }
}

impl ChatMessage {
    /// A message whose `content` is a string.
    pub fn text(role: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::new(role).content(Value::String(content.into()))
    }

    /// The `content`, when it is a string.
    pub fn content_str(&self) -> Option<&str> {
        self.content.as_ref().and_then(Value::as_str)
    }
}

impl StoredRecord {
    /// The message of a `message` record.
    pub fn as_message(&self) -> Option<&ChatMessage> {
        match self {
            StoredRecord::Message(r) => Some(&r.message),
            _ => None,
        }
    }

    /// The turn the record belongs to: the pending turn it was appended in, or, for a `turn`
    /// record, its own.
    pub fn turn_id(&self) -> Option<&str> {
        match self {
            StoredRecord::Message(r) => r.turn_id.as_deref(),
            StoredRecord::Interruption(r) => r.turn_id.as_deref(),
            StoredRecord::Event(r) => r.turn_id.as_deref(),
            StoredRecord::Api(r) => r.turn_id.as_deref(),
            StoredRecord::ToolStart(r) => r.turn_id.as_deref(),
            StoredRecord::ToolFinish(r) => r.turn_id.as_deref(),
            StoredRecord::ToolStream(r) => r.turn_id.as_deref(),
            StoredRecord::Turn(r) => Some(&r.turn_id),
            StoredRecord::Unknown(v) => v.get("turnId").and_then(Value::as_str),
            _ => None,
        }
    }
}

impl Attachment {
    /// As a JSON value: `{"$attach": ..., "mediaType"?: ...}`. Protocol version 1 accepts none in a
    /// record (§15.4): a message's `content` or an event's `payload` holding one is refused with
    /// -32602; send the value itself, or a large string as a tool call's `arguments`.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
