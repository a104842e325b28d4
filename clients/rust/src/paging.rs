//! Paging iterators: every record of a session (`session/read` following `nextAfterSeq`),
//! every session of the store (`session/list` following `nextCursor`), every search hit.

use crate::{
    Client, Result, SearchHit, SessionListParams, SessionReadParams, SessionSearchParams, SessionSummary,
    StoredRecord,
};
use std::collections::VecDeque;

/// Fetches the next page (`None` after the last one).
type FetchPage<'a, T> = Box<dyn FnMut(&Client) -> Option<Result<Vec<T>>> + Send + 'a>;

/// A blocking iterator over the items of successive pages; an error ends it (after being
/// yielded once).
pub struct Pages<'a, T> {
    client: &'a Client,
    fetch: FetchPage<'a, T>,
    buf: VecDeque<T>,
    done: bool,
}

impl<T> std::fmt::Debug for Pages<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages").field("buffered", &self.buf.len()).field("done", &self.done).finish()
    }
}

impl<T> Iterator for Pages<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            if let Some(item) = self.buf.pop_front() {
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            match (self.fetch)(self.client) {
                None => self.done = true,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Some(Ok(items)) => self.buf.extend(items), // may be empty (a `kinds` filter): read on
            }
        }
    }
}

/// The next params of `session/read` after a page, or `None` when it reached `lastSeq`.
pub(crate) fn next_read(mut params: SessionReadParams, next_after_seq: Option<u64>) -> Option<SessionReadParams> {
    next_after_seq.map(|seq| {
        params.after_seq = Some(seq);
        params
    })
}

pub(crate) fn next_list(mut params: SessionListParams, cursor: Option<String>) -> Option<SessionListParams> {
    cursor.map(|c| {
        params.cursor = Some(c);
        params
    })
}

pub(crate) fn next_search(mut params: SessionSearchParams, cursor: Option<String>) -> Option<SessionSearchParams> {
    cursor.map(|c| {
        params.cursor = Some(c);
        params
    })
}

impl Client {
    /// Every record of a session after `params.after_seq`, page by page (`limit` is the page
    /// size): follows `nextAfterSeq` until it is `null` (§4.8).
    ///
    /// ```no_run
    /// # fn main() -> session_sidecar::Result<()> {
    /// # let client = session_sidecar::Client::spawn("/tmp/store")?;
    /// use session_sidecar::SessionReadParams;
    /// for record in client.records(SessionReadParams::new("01M8K1WKJ0VTPTCMTSTY8EW4CN").limit(500)) {
    ///     let record = record?;
    ///     println!("{} {}", record.seq(), record.kind());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn records(&self, params: SessionReadParams) -> Pages<'_, StoredRecord> {
        let mut next = Some(params);
        Pages {
            client: self,
            fetch: Box::new(move |c| {
                let p = next.take()?;
                Some(c.read(p.clone()).map(|page| {
                    next = next_read(p, page.next_after_seq);
                    page.records
                }))
            }),
            buf: VecDeque::new(),
            done: false,
        }
    }

    /// All the records [`Client::records`] yields, collected.
    pub fn read_all(&self, params: SessionReadParams) -> Result<Vec<StoredRecord>> {
        self.records(params).collect()
    }

    /// Every session of the store (most recently updated first), page by page, following
    /// `nextCursor` (§4.9). The filters of `params` apply to every page.
    pub fn sessions(&self, params: SessionListParams) -> Pages<'_, SessionSummary> {
        let mut next = Some(params);
        Pages {
            client: self,
            fetch: Box::new(move |c| {
                let p = next.take()?;
                Some(c.list(p.clone()).map(|page| {
                    next = next_list(p, page.next_cursor);
                    page.sessions
                }))
            }),
            buf: VecDeque::new(),
            done: false,
        }
    }

    /// Every hit of a `session/search`, page by page, following `nextCursor` (§4.12).
    pub fn search_hits(&self, params: SessionSearchParams) -> Pages<'_, SearchHit> {
        let mut next = Some(params);
        Pages {
            client: self,
            fetch: Box::new(move |c| {
                let p = next.take()?;
                Some(c.search(p.clone()).map(|page| {
                    next = next_search(p, page.next_cursor);
                    page.hits
                }))
            }),
            buf: VecDeque::new(),
            done: false,
        }
    }
}
