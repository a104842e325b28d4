//! What the blocking and the async client share: request ids, the table of requests waiting
//! for an answer, the dispatch of what the server sends, and the notification buffer.

use crate::error::from_response;
use crate::framing::encode;
use crate::notify::NotificationQueue;
use crate::{Error, Framing, Notification};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The answer to one request: its `result`, or the error.
pub(crate) type Reply = Result<Value, Error>;
type Sink = Box<dyn FnOnce(Reply) + Send>;

#[derive(Default)]
struct State {
    pending: HashMap<u64, Sink>,
    closed: Option<String>,
}

pub(crate) struct Core {
    state: Mutex<State>,
    next_id: AtomicU64,
    pub(crate) framing: Framing,
    pub(crate) notifications: NotificationQueue,
}

#[derive(Serialize)]
struct Request<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct Note<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

impl Core {
    pub(crate) fn new(framing: Framing, notification_capacity: usize) -> Self {
        Core {
            state: Mutex::new(State::default()),
            next_id: AtomicU64::new(1),
            framing,
            notifications: NotificationQueue::new(notification_capacity),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new request id and its frame (`jsonrpc`, `id` and `method` first, §2.3).
    pub(crate) fn request_frame<P: Serialize>(&self, method: &str, params: &P) -> Result<(u64, Vec<u8>), Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = serde_json::to_vec(&Request { jsonrpc: "2.0", id, method, params }).map_err(Error::Encode)?;
        Ok((id, encode(self.framing, body)))
    }

    pub(crate) fn notification_frame<P: Serialize>(&self, method: &str, params: &P) -> Result<Vec<u8>, Error> {
        let body = serde_json::to_vec(&Note { jsonrpc: "2.0", method, params }).map_err(Error::Encode)?;
        Ok(encode(self.framing, body))
    }

    /// Waits for the answer to `id` (call before writing the request). Fails once closed.
    pub(crate) fn register(&self, id: u64, sink: Sink) -> Result<(), Error> {
        let mut s = self.lock();
        if let Some(reason) = &s.closed {
            return Err(Error::Exited { reason: reason.clone() });
        }
        s.pending.insert(id, sink);
        Ok(())
    }

    /// Stops waiting for `id` (a timeout, a failed write): a late answer is ignored.
    pub(crate) fn forget(&self, id: u64) {
        self.lock().pending.remove(&id);
    }

    pub(crate) fn closed_reason(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Handles one frame from the server. Returns a frame to write back (the error answer to
    /// a request from the server: there are none in protocol v1), or `Err` when the frame is
    /// not JSON (the connection is then unusable).
    pub(crate) fn dispatch(&self, body: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let message: Value = serde_json::from_slice(body).map_err(|e| format!("unreadable JSON from the sidecar: {e}"))?;
        let Value::Object(mut m) = message else {
            return Ok(None);
        };
        if let Some(Value::String(method)) = m.get("method") {
            let method = method.clone();
            if let Some(id) = m.remove("id") {
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("the client does not handle {method}")}});
                return Ok(Some(encode(self.framing, answer.to_string().into_bytes())));
            }
            let params = m.remove("params").unwrap_or(Value::Null);
            self.notifications.push(Notification::from_message(&method, params));
            return Ok(None);
        }
        let Some(id) = m.get("id").and_then(Value::as_u64) else {
            return Ok(None); // id null: an answer to a frame the server could not read
        };
        let Some(sink) = self.lock().pending.remove(&id) else {
            return Ok(None); // timed out, or not ours
        };
        let reply = match m.remove("error") {
            Some(error) => Err(from_response(&error)),
            None => Ok(m.remove("result").unwrap_or(Value::Null)),
        };
        sink(reply);
        Ok(None)
    }

    /// The connection ended: every pending request fails with `reason`, and every later one.
    pub(crate) fn close(&self, reason: String) {
        let pending = {
            let mut s = self.lock();
            if s.closed.is_none() {
                s.closed = Some(reason.clone());
            }
            std::mem::take(&mut s.pending)
        };
        for (_, sink) in pending {
            sink(Err(Error::Exited { reason: reason.clone() }));
        }
        self.notifications.close();
    }
}

/// The last line of captured stderr, for the reason of an `Exited`.
pub(crate) fn last_line(text: &str) -> Option<String> {
    text.trim_end().rsplit('\n').next().map(|l| l.chars().take(500).collect::<String>()).filter(|l| !l.is_empty())
}

/// The last bytes of the sidecar's stderr, when captured.
#[derive(Default)]
pub(crate) struct StderrTail {
    bytes: Vec<u8>,
}

impl StderrTail {
    pub(crate) const MAX: usize = 64 * 1024;

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > Self::MAX {
            let cut = self.bytes.len() - Self::MAX;
            self.bytes.drain(..cut);
        }
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}
