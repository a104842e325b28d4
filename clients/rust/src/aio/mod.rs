//! The async client (feature `tokio`): [`AsyncClient`], [`AsyncPending`], and the streams of
//! notifications and pages.
//!
//! A reader task matches answers to requests and fills the notification buffer; a writer task
//! writes frames in the order requests were made. Timeouts use `tokio::time`: run it on a
//! runtime with time enabled (as `#[tokio::main]` gives), or set `request_timeout(None)`.

use crate::client::describe;
use crate::core::{last_line, Core, Reply, StderrTail};
use crate::paging::{next_list, next_read, next_search};
use crate::{
    BlobGetParams, Builder, EmptyParams, Error, InitializeResult, Method, Result, SearchHit, ServerCapabilities,
    SessionListParams, SessionReadParams, SessionSearchParams, SessionSummary, Stderr, StoredRecord,
};
use frames::read_frame;
use serde::Serialize;
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;
use streams::Page;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout};
use tokio::sync::{mpsc, oneshot};

mod frames;
mod pending;
mod streams;

pub use pending::AsyncPending;
pub use streams::{NotificationStream, PageStream};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Inner {
    core: Arc<Core>,
    tx: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    child: Arc<Mutex<Option<Child>>>,
    pid: u32,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    tail: Option<Arc<Mutex<StderrTail>>>,
    server: OnceLock<InitializeResult>,
    request_timeout: Option<Duration>,
    exit_timeout: Duration,
}

impl Drop for Inner {
    fn drop(&mut self) {
        lock(&self.tx).take(); // the writer task ends and closes stdin: an orderly stop
        let Some(mut child) = lock(&self.child).take() else { return };
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        let timeout = self.exit_timeout;
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn(async move {
                    if tokio::time::timeout(timeout, child.wait()).await.is_err() {
                        let _ = child.kill().await;
                    }
                });
            }
            Err(_) => {
                let _ = child.start_kill();
            }
        }
    }
}

/// A connection to a spawned sidecar, for tokio (feature `tokio`). Cheap to clone (all clones
/// share the connection); the last clone dropped closes the sidecar's stdin (an orderly stop)
/// and, on a runtime, waits for it in a task, killing it after the exit timeout. Prefer
/// [`AsyncClient::shutdown`], which reports the exit status.
///
/// Every request method has a typed function returning an [`AsyncPending`]: the request is
/// written when the function is called, so requests made one after another are pipelined in
/// that order; await each for its answer.
///
/// ```no_run
/// # async fn demo() -> session_sidecar::Result<()> {
/// use session_sidecar::{AsyncClient, Builder, Record, SessionAppendParams};
/// let client: AsyncClient = Builder::new().store("/tmp/store").spawn_async().await?;
/// let sid = client.create(Default::default()).await?.session_id;
/// let a = client.append(SessionAppendParams::new(&sid, [Record::text("user", "one")]));
/// let b = client.append(SessionAppendParams::new(&sid, [Record::text("user", "two")]));
/// assert_eq!((a.await?.last_seq, b.await?.last_seq), (1, 2));
/// client.shutdown().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct AsyncClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AsyncClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncClient").field("pid", &self.inner.pid).finish()
    }
}

impl Builder {
    /// Spawns the sidecar with tokio and initializes the connection.
    pub async fn spawn_async(self) -> Result<AsyncClient> {
        let (cmd, shown) = self.std_command()?;
        let mut cmd = tokio::process::Command::from(cmd);
        let mut child = cmd.spawn().map_err(|source| Error::Spawn { command: shown, source })?;
        let pid = child.id().unwrap_or(0);
        let mut stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take();
        let core = Arc::new(Core::new(self.framing, self.notification_capacity));
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(frame) = rx.recv().await {
                if stdin.write_all(&frame).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
            let _ = stdin.shutdown().await;
        });
        let tail = match (stderr, self.stderr) {
            (Some(mut err), Stderr::Capture) => {
                let tail = Arc::new(Mutex::new(StderrTail::default()));
                let t = tail.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        lock(&t).push(&buf[..n]);
                    }
                });
                Some(tail)
            }
            _ => None,
        };
        let child = Arc::new(Mutex::new(Some(child)));
        let reader = tokio::spawn(read_loop(
            stdout,
            core.clone(),
            tx.downgrade(),
            child.clone(),
            tail.clone(),
            self.max_frame_bytes,
        ));
        let client = AsyncClient {
            inner: Arc::new(Inner {
                core,
                tx: Mutex::new(Some(tx)),
                child,
                pid,
                reader: Mutex::new(Some(reader)),
                tail,
                server: OnceLock::new(),
                request_timeout: self.request_timeout,
                exit_timeout: self.exit_timeout,
            }),
        };
        let server = client.send::<crate::method::Initialize>(self.initialize).await?;
        client.notify("initialized", &EmptyParams::default())?;
        let _ = client.inner.server.set(server);
        Ok(client)
    }
}

async fn read_loop(
    stdout: ChildStdout,
    core: Arc<Core>,
    tx: mpsc::WeakUnboundedSender<Vec<u8>>,
    child: Arc<Mutex<Option<Child>>>,
    tail: Option<Arc<Mutex<StderrTail>>>,
    max: usize,
) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    let mut reason = loop {
        match read_frame(&mut r, core.framing, max).await {
            Ok(Some(body)) => match core.dispatch(&body) {
                Ok(Some(answer)) => {
                    if let Some(tx) = tx.upgrade() {
                        let _ = tx.send(answer);
                    }
                }
                Ok(None) => {}
                Err(why) => break why,
            },
            Ok(None) => break "the sidecar closed its output".to_owned(),
            Err(e) => break format!("unreadable output from the sidecar: {e}"),
        }
    };
    for _ in 0..50 {
        let status = match lock(&child).as_mut() {
            Some(c) => c.try_wait().ok().flatten(),
            None => None,
        };
        if let Some(status) = status {
            reason = format!("{reason} ({})", describe(status));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if let Some(line) = tail.and_then(|t| last_line(&lock(&t).text())) {
        reason = format!("{reason}: {line}");
    }
    core.close(reason);
}

impl AsyncClient {
    /// The `initialize` result.
    pub fn server_info(&self) -> &InitializeResult {
        self.inner.server.get().expect("initialized")
    }

    /// The server's capabilities.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.server_info().capabilities
    }

    /// The sidecar's process id.
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.core.closed_reason().is_some()
    }

    /// The captured stderr (with [`Stderr::Capture`]).
    pub fn stderr_text(&self) -> Option<String> {
        self.inner.tail.as_ref().map(|t| lock(t).text())
    }

    fn gone(&self) -> Error {
        Error::Exited {
            reason: self.inner.core.closed_reason().unwrap_or_else(|| "the client was shut down".to_owned()),
        }
    }

    /// Writes a request now; the returned future resolves to its typed answer.
    pub fn send<M: Method>(&self, params: M::Params) -> AsyncPending<M::Result> {
        self.send_raw(M::NAME, &params)
    }

    /// Any request with untyped params and result.
    pub fn call_raw(&self, method: &str, params: Option<serde_json::Value>) -> AsyncPending<serde_json::Value> {
        let params = params.unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        self.send_raw(method, &params)
    }

    fn send_raw<P: Serialize, R>(&self, method: &str, params: &P) -> AsyncPending<R> {
        let inner = &self.inner;
        let tx = lock(&inner.tx).clone();
        let mut p = AsyncPending {
            id: 0,
            method: method.to_owned(),
            rx: None,
            early: None,
            core: inner.core.clone(),
            tx: tx.as_ref().map(mpsc::UnboundedSender::downgrade),
            timeout: inner.request_timeout,
            sleep: None,
            _result: PhantomData,
        };
        let Some(tx) = tx else {
            p.early = Some(self.gone());
            return p;
        };
        let (id, frame) = match inner.core.request_frame(method, params) {
            Ok(x) => x,
            Err(e) => {
                p.early = Some(e);
                return p;
            }
        };
        p.id = id;
        let (otx, orx) = oneshot::channel::<Reply>();
        if let Err(e) = inner.core.register(id, Box::new(move |r| drop(otx.send(r)))) {
            p.early = Some(e);
            return p;
        }
        if tx.send(frame).is_err() {
            inner.core.forget(id);
            p.early = Some(self.gone());
            return p;
        }
        p.rx = Some(orx);
        p
    }

    /// Sends a notification.
    pub fn notify<P: Serialize>(&self, method: &str, params: &P) -> Result<()> {
        let frame = self.inner.core.notification_frame(method, params)?;
        match lock(&self.inner.tx).as_ref() {
            Some(tx) if tx.send(frame).is_ok() => Ok(()),
            _ => Err(self.gone()),
        }
    }

    /// The server's notifications as a stream (one consumer at a time); `Err(Lagged)` items
    /// mark notifications dropped on a full buffer (see [`crate::Lagged`]).
    pub fn notifications(&self) -> NotificationStream {
        NotificationStream { core: self.inner.core.clone() }
    }

    /// Every record of a session, page by page (see [`crate::Client::records`]).
    pub fn records(&self, params: SessionReadParams) -> PageStream<StoredRecord> {
        fn fetch(c: AsyncClient, p: SessionReadParams) -> Page<StoredRecord, SessionReadParams> {
            Box::pin(async move {
                let page = c.read(p.clone()).await?;
                Ok((page.records, next_read(p, page.next_after_seq)))
            })
        }
        PageStream::new(self.clone(), params, fetch)
    }

    /// All of a session's records, collected.
    pub async fn read_all(&self, params: SessionReadParams) -> Result<Vec<StoredRecord>> {
        let mut out = Vec::new();
        let mut s = self.records(params);
        while let Some(r) = s.next().await {
            out.push(r?);
        }
        Ok(out)
    }

    /// Every session of the store, page by page (see [`crate::Client::sessions`]).
    pub fn sessions(&self, params: SessionListParams) -> PageStream<SessionSummary> {
        fn fetch(c: AsyncClient, p: SessionListParams) -> Page<SessionSummary, SessionListParams> {
            Box::pin(async move {
                let page = c.list(p.clone()).await?;
                Ok((page.sessions, next_list(p, page.next_cursor)))
            })
        }
        PageStream::new(self.clone(), params, fetch)
    }

    /// Every hit of a search, page by page.
    pub fn search_hits(&self, params: SessionSearchParams) -> PageStream<SearchHit> {
        fn fetch(c: AsyncClient, p: SessionSearchParams) -> Page<SearchHit, SessionSearchParams> {
            Box::pin(async move {
                let page = c.search(p.clone()).await?;
                Ok((page.hits, next_search(p, page.next_cursor)))
            })
        }
        PageStream::new(self.clone(), params, fetch)
    }

    /// All of a blob's bytes (see [`crate::Client::read_blob`]).
    pub async fn read_blob(&self, session_id: &str, digest: &str) -> Result<Vec<u8>> {
        use base64::Engine as _;
        let chunk = self.capabilities().blob.as_ref().map_or(1 << 20, |b| b.max_chunk.clamp(1, 8 << 20));
        let mut out = Vec::new();
        loop {
            let r = self.blob_get(BlobGetParams::new(session_id, digest).offset(out.len() as u64).length(chunk)).await?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(r.data_base64.as_bytes())
                .map_err(|e| Error::Io(io::Error::new(io::ErrorKind::InvalidData, e)))?;
            out.extend_from_slice(&bytes);
            if r.eof || bytes.is_empty() {
                return Ok(out);
            }
        }
    }

    /// `shutdown`, `exit`, then waits for the process (killing it after the exit timeout);
    /// every clone is unusable afterwards.
    pub async fn shutdown(&self) -> Result<ExitStatus> {
        let timeout = self.inner.exit_timeout;
        let asked = match tokio::time::timeout(timeout, self.send::<crate::method::Shutdown>(EmptyParams::default())).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout { method: "shutdown".into() }),
        };
        if asked.is_ok() {
            let _ = self.notify("exit", &EmptyParams::default());
        }
        let status = self.finish().await?;
        asked.map(|()| status)
    }

    async fn finish(&self) -> Result<ExitStatus> {
        lock(&self.inner.tx).take();
        let child = lock(&self.inner.child).take();
        let Some(mut child) = child else {
            return Err(self.gone());
        };
        let status = match tokio::time::timeout(self.inner.exit_timeout, child.wait()).await {
            Ok(status) => status?,
            Err(_) => {
                let _ = child.kill().await;
                child.wait().await?
            }
        };
        let reader = lock(&self.inner.reader).take();
        if let Some(reader) = reader {
            let _ = reader.await;
        }
        Ok(status)
    }

    /// Kills the sidecar at once (SIGKILL) and waits for it.
    pub async fn kill(&self) -> Result<ExitStatus> {
        let child = lock(&self.inner.child).take();
        let Some(mut child) = child else {
            return Err(self.gone());
        };
        let _ = child.start_kill();
        let status = child.wait().await?;
        *lock(&self.inner.child) = Some(child);
        Ok(status)
    }
}
