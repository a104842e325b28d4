//! The bounded buffer between the connection's reader and the consumer of notifications.
//!
//! **Overflow.** The reader never blocks on a full buffer (it must go on reading answers).
//! When the buffer holds `capacity` notifications, the next one is dropped, and so is every
//! one after it until the consumer has taken all that are buffered; the consumer then gets one
//! [`Lagged`] (as the `Err` item) before any newer notification. `Lagged::last_seq` tells, per
//! session that lost something, up to which seq every record was delivered: resubscribe with
//! `afterSeq` set to it and skip records you already have (match by `seq`). Nothing is lost
//! silently.

use crate::Notification;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The default capacity of the notification buffer.
pub const DEFAULT_NOTIFICATION_CAPACITY: usize = 1024;

/// Notifications were dropped because the buffer was full (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lagged {
    /// How many notifications were dropped.
    pub dropped: u64,
    /// For each session with a dropped notification: every one of its records up to this seq
    /// was delivered before (0 when none was). Resubscribe with `afterSeq` = this value.
    pub last_seq: BTreeMap<String, u64>,
}

impl std::fmt::Display for Lagged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} notification(s) dropped: the notification buffer was full", self.dropped)
    }
}

impl std::error::Error for Lagged {}

/// What the buffer yields: a notification, or the mark of dropped ones.
pub type NotificationItem = Result<Notification, Lagged>;

#[derive(Default)]
struct State {
    items: VecDeque<Notification>,
    capacity: usize,
    lag: Option<Lagged>,
    closed: bool,
    waker: Option<Waker>,
    /// The highest seq buffered per session (the consumer has, or will get, every record
    /// up to it that was ever buffered).
    buffered_seq: HashMap<String, u64>,
}

pub(crate) struct NotificationQueue {
    state: Mutex<State>,
    cond: Condvar,
}

fn session_of(n: &Notification) -> Option<(&str, Option<(u64, u64)>)> {
    match n {
        Notification::SessionDidAppend(p) => {
            let seqs = p.records.first().zip(p.records.last()).map(|(a, b)| (a.seq(), b.seq()));
            Some((&p.session_id, seqs))
        }
        Notification::SessionDidOverflow(p) => Some((&p.session_id, None)),
        Notification::TurnDidChange(p) => Some((&p.session_id, None)),
        _ => None,
    }
}

impl NotificationQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        NotificationQueue {
            state: Mutex::new(State { capacity: capacity.max(1), ..State::default() }),
            cond: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by the reader: never blocks.
    pub(crate) fn push(&self, n: Notification) {
        let mut s = self.lock();
        if s.closed {
            return;
        }
        let session = session_of(&n);
        if s.lag.is_some() || s.items.len() >= s.capacity {
            let buffered = session.and_then(|(sid, _)| s.buffered_seq.get(sid).copied());
            let lag = s.lag.get_or_insert_with(Lagged::default);
            lag.dropped += 1;
            if let Some((sid, seqs)) = session {
                let delivered = buffered.unwrap_or_else(|| seqs.map_or(0, |(first, _)| first.saturating_sub(1)));
                lag.last_seq.entry(sid.to_owned()).or_insert(delivered);
            }
        } else {
            if let Some((sid, Some((first, last)))) = session {
                // The seq through which every record reached the buffer: only a notification that
                // continues it advances it (one from an older subscription after a resubscribe may
                // skip ahead; the records between would then not be "had").
                let e = s.buffered_seq.entry(sid.to_owned()).or_insert(first.saturating_sub(1));
                if first <= *e + 1 {
                    *e = (*e).max(last);
                }
            }
            s.items.push_back(n);
        }
        self.wake(s);
    }

    /// The connection ended: the consumer gets what is buffered, then the end.
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        self.wake(s);
    }

    fn wake(&self, mut s: MutexGuard<'_, State>) {
        let waker = s.waker.take();
        drop(s);
        self.cond.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn take(s: &mut State) -> Option<NotificationItem> {
        if let Some(n) = s.items.pop_front() {
            return Some(Ok(n));
        }
        s.lag.take().map(Err)
    }

    /// The next item, without waiting: `Ok(None)` when none is buffered, `Err(())` at the end.
    pub(crate) fn try_pop(&self) -> Result<Option<NotificationItem>, ()> {
        let mut s = self.lock();
        match Self::take(&mut s) {
            Some(item) => Ok(Some(item)),
            None if s.closed => Err(()),
            None => Ok(None),
        }
    }

    /// The next item, waiting at most `timeout` (forever: `None`). `None` at the end of the
    /// connection or when the time is up.
    pub(crate) fn pop(&self, timeout: Option<Duration>) -> Option<NotificationItem> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = self.lock();
        loop {
            if let Some(item) = Self::take(&mut s) {
                return Some(item);
            }
            if s.closed {
                return None;
            }
            s = match deadline {
                None => self.cond.wait(s).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    self.cond.wait_timeout(s, d - now).unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }

    /// The async version of `pop(None)`.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn poll_pop(&self, cx: &mut Context<'_>) -> Poll<Option<NotificationItem>> {
        let mut s = self.lock();
        if let Some(item) = Self::take(&mut s) {
            return Poll::Ready(Some(item));
        }
        if s.closed {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn did_append(sid: &str, seqs: &[u64]) -> Notification {
        let records: Vec<_> = seqs
            .iter()
            .map(|s| json!({"seq": s, "ts": "t", "kind": "event", "type": "x", "payload": null}))
            .collect();
        Notification::from_message("session/didAppend", json!({"sessionId": sid, "records": records}))
    }

    fn seqs(item: NotificationItem) -> Vec<u64> {
        match item {
            Ok(Notification::SessionDidAppend(p)) => p.records.iter().map(|r| r.seq()).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn overflow_drops_until_drained_then_reports_once() {
        let q = NotificationQueue::new(2);
        q.push(did_append("a", &[1]));
        q.push(did_append("a", &[2, 3]));
        q.push(did_append("a", &[4])); // full: dropped
        q.push(did_append("b", &[7, 8])); // dropped (b had nothing buffered: delivered up to 6)
        assert_eq!(seqs(q.pop(None).unwrap()), [1]);
        q.push(did_append("a", &[5])); // still lagging: dropped although there is room
        assert_eq!(seqs(q.pop(None).unwrap()), [2, 3]);
        let lag = q.pop(None).unwrap().unwrap_err();
        assert_eq!(lag.dropped, 3);
        assert_eq!(lag.last_seq, BTreeMap::from([("a".to_owned(), 3), ("b".to_owned(), 6)]));
        q.push(did_append("a", &[4, 5]));
        assert_eq!(seqs(q.pop(None).unwrap()), [4, 5], "after the Lagged mark, delivery goes on");
        assert_eq!(q.try_pop(), Ok(None));
        q.close();
        assert_eq!(q.try_pop(), Err(()));
        assert_eq!(q.pop(None), None);
    }

    #[test]
    fn pop_times_out_and_close_wakes_a_waiter() {
        let q = std::sync::Arc::new(NotificationQueue::new(4));
        assert_eq!(q.pop(Some(Duration::from_millis(1))), None);
        let q2 = q.clone();
        let waiter = std::thread::spawn(move || q2.pop(None));
        q.push(did_append("a", &[1]));
        assert_eq!(seqs(waiter.join().unwrap().unwrap()), [1]);
        let q2 = q.clone();
        let waiter = std::thread::spawn(move || q2.pop(None));
        q.close();
        assert_eq!(waiter.join().unwrap(), None);
    }
}
