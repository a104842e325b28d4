//! [`Pending`]: a request sent and not yet answered; [`Notifications`]: the blocking iterator.

use crate::client::Writer;
use crate::core::{Core, Reply};
use crate::notify::NotificationItem;
use crate::{Error, Result};
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// A request sent and not yet answered; [`Pending::wait`] for its answer.
#[must_use = "a request's answer says whether it succeeded"]
pub struct Pending<R> {
    pub(crate) id: u64,
    pub(crate) method: String,
    pub(crate) rx: Option<Receiver<Reply>>,
    pub(crate) early: Option<Error>,
    pub(crate) core: Arc<Core>,
    pub(crate) writer: Arc<Writer>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) _result: PhantomData<fn() -> R>,
}

impl<R> std::fmt::Debug for Pending<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("id", &self.id).field("method", &self.method).finish()
    }
}

impl<R: DeserializeOwned> Pending<R> {
    /// The request's JSON-RPC id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Waits for the answer (the client's request timeout applies).
    pub fn wait(self) -> Result<R> {
        let timeout = self.timeout;
        self.wait_for(timeout)
    }

    /// Waits at most `timeout` for the answer.
    pub fn wait_timeout(self, timeout: Duration) -> Result<R> {
        self.wait_for(Some(timeout))
    }

    fn wait_for(mut self, timeout: Option<Duration>) -> Result<R> {
        if let Some(e) = self.early.take() {
            return Err(e);
        }
        let rx = self.rx.take().expect("a sent request has a receiver");
        let reply = match timeout {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => rx.recv_timeout(t),
        };
        match reply {
            Ok(Ok(value)) => {
                serde_json::from_value(value).map_err(|source| Error::Decode { method: self.method.clone(), source })
            }
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Timeout) => {
                self.core.forget(self.id);
                self.cancel();
                Err(Error::Timeout { method: self.method.clone() })
            }
            Err(RecvTimeoutError::Disconnected) => {
                Err(Error::Exited { reason: self.core.closed_reason().unwrap_or_else(|| "connection closed".into()) })
            }
        }
    }

    /// Asks the server to cancel the request (`$/cancelRequest`): a request that has not
    /// started is answered `RequestCancelled`; one that has runs to completion (§3.4).
    pub fn cancel(&self) {
        if let Ok(frame) = self.core.notification_frame("$/cancelRequest", &serde_json::json!({ "id": self.id })) {
            let _ = self.writer.write(&frame);
        }
    }
}

/// The blocking iterator of [`Client::notifications`].
#[derive(Clone, Copy)]
pub struct Notifications<'a> {
    pub(crate) core: &'a Core,
}

impl Notifications<'_> {
    /// The next notification, waiting at most `timeout`; `None` on timeout or at the end.
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<NotificationItem> {
        self.core.notifications.pop(Some(timeout))
    }

    /// The next buffered notification, without waiting.
    pub fn try_next(&mut self) -> Option<NotificationItem> {
        self.core.notifications.try_pop().ok().flatten()
    }
}

impl Iterator for Notifications<'_> {
    type Item = NotificationItem;

    fn next(&mut self) -> Option<NotificationItem> {
        self.core.notifications.pop(None)
    }
}
