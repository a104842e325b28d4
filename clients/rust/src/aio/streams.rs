//! The streams of the async client: notifications and pages.

use super::{AsyncClient, BoxFuture};
use crate::core::Core;
use crate::notify::NotificationItem;
use crate::Result;
use futures_core::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The stream of [`AsyncClient::notifications`]; ends when the connection does.
pub struct NotificationStream {
    pub(crate) core: Arc<Core>,
}

impl NotificationStream {
    /// The next notification (`None` at the end of the connection).
    pub async fn next(&mut self) -> Option<NotificationItem> {
        std::future::poll_fn(|cx| self.core.notifications.poll_pop(cx)).await
    }
}

impl Stream for NotificationStream {
    type Item = NotificationItem;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<NotificationItem>> {
        self.core.notifications.poll_pop(cx)
    }
}

/// A page of items and the params of the next page.
pub(crate) type Page<T, P> = BoxFuture<Result<(Vec<T>, Option<P>)>>;
type Fetch<T, P> = fn(AsyncClient, P) -> Page<T, P>;

struct Paged<T, P> {
    client: AsyncClient,
    next: Option<P>,
    fetch: Fetch<T, P>,
    fut: Option<Page<T, P>>,
    buf: VecDeque<T>,
}

impl<T: Unpin, P: Unpin> Stream for Paged<T, P> {
    type Item = Result<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<T>>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.buf.pop_front() {
                return Poll::Ready(Some(Ok(item)));
            }
            if this.fut.is_none() {
                match this.next.take() {
                    Some(p) => this.fut = Some((this.fetch)(this.client.clone(), p)),
                    None => return Poll::Ready(None),
                }
            }
            let fut = this.fut.as_mut().expect("a page is being fetched");
            match fut.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(r) => {
                    this.fut = None;
                    match r {
                        Ok((items, next)) => {
                            this.buf.extend(items);
                            this.next = next;
                        }
                        Err(e) => return Poll::Ready(Some(Err(e))), // `next` is None: the stream ends
                    }
                }
            }
        }
    }
}

/// A stream of the items of successive pages; an error ends it (after being yielded once).
pub struct PageStream<T> {
    inner: Pin<Box<dyn Stream<Item = Result<T>> + Send>>,
}

impl<T: Send + Unpin + 'static> PageStream<T> {
    pub(crate) fn new<P: Send + Unpin + 'static>(client: AsyncClient, params: P, fetch: Fetch<T, P>) -> Self {
        PageStream { inner: Box::pin(Paged { client, next: Some(params), fetch, fut: None, buf: VecDeque::new() }) }
    }
}

impl<T> PageStream<T> {
    /// The next item (`None` after the last page).
    pub async fn next(&mut self) -> Option<Result<T>> {
        std::future::poll_fn(|cx| self.inner.as_mut().poll_next(cx)).await
    }
}

impl<T> Stream for PageStream<T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<T>>> {
        self.inner.as_mut().poll_next(cx)
    }
}
