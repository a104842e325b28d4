//! [`AsyncPending`]: the answer to a request, as a future.

use crate::core::{Core, Reply};
use crate::{Error, Result};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The answer to a request, as a future (the request was written when it was made). Dropping
/// it does not cancel the request; [`AsyncPending::cancel`] asks the server to.
#[must_use = "a request's answer says whether it succeeded"]
pub struct AsyncPending<R> {
    pub(crate) id: u64,
    pub(crate) method: String,
    pub(crate) rx: Option<oneshot::Receiver<Reply>>,
    pub(crate) early: Option<Error>,
    pub(crate) core: Arc<Core>,
    pub(crate) tx: Option<mpsc::WeakUnboundedSender<Vec<u8>>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    pub(crate) _result: PhantomData<fn() -> R>,
}

impl<R> std::fmt::Debug for AsyncPending<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncPending").field("id", &self.id).field("method", &self.method).finish()
    }
}

impl<R> AsyncPending<R> {
    /// The request's JSON-RPC id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `$/cancelRequest` for this request (§3.4).
    pub fn cancel(&self) {
        if let (Some(tx), Ok(frame)) = (
            self.tx.as_ref().and_then(mpsc::WeakUnboundedSender::upgrade),
            self.core.notification_frame("$/cancelRequest", &serde_json::json!({ "id": self.id })),
        ) {
            let _ = tx.send(frame);
        }
    }

    /// This request with another timeout (`None`: wait forever).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self.sleep = None;
        self
    }
}

impl<R: DeserializeOwned> Future for AsyncPending<R> {
    type Output = Result<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<R>> {
        let this = self.get_mut();
        if let Some(e) = this.early.take() {
            return Poll::Ready(Err(e));
        }
        let Some(rx) = this.rx.as_mut() else {
            return Poll::Ready(Err(Error::Exited { reason: "the answer was already taken".into() }));
        };
        if let Poll::Ready(reply) = Pin::new(rx).poll(cx) {
            this.rx = None;
            return Poll::Ready(match reply {
                Ok(Ok(value)) => serde_json::from_value(value)
                    .map_err(|source| Error::Decode { method: this.method.clone(), source }),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(Error::Exited {
                    reason: this.core.closed_reason().unwrap_or_else(|| "connection closed".into()),
                }),
            });
        }
        if let Some(t) = this.timeout {
            let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(t)));
            if sleep.as_mut().poll(cx).is_ready() {
                this.core.forget(this.id);
                this.cancel();
                this.rx = None;
                return Poll::Ready(Err(Error::Timeout { method: this.method.clone() }));
            }
        }
        Poll::Pending
    }
}
