//! The blocking client: [`Client`], its writer and its reader thread.

use crate::core::{last_line, Core, StderrTail};
use crate::framing::read_frame;
use crate::pending::{Notifications, Pending};
use crate::{BlobGetParams, Builder, EmptyParams, Error, Framing, InitializeResult, Method, Result, ServerCapabilities};
use crate::core::Reply;
use serde_json::Value;
use std::io::{BufReader, Read, Write};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

impl Builder {
    /// Spawns the sidecar and initializes the connection (`initialize`, then `initialized`).
    pub fn spawn(self) -> Result<Client> {
        let initialize = self.initialize.clone();
        let mut client = self.spawn_uninitialized()?;
        // On failure `client` is dropped: stdin closed, the process waited for (or killed).
        let server = client.call::<crate::method::Initialize>(initialize)?;
        client.notify("initialized", &EmptyParams::default())?;
        client.server = Some(server);
        Ok(client)
    }

    /// Spawns the sidecar without initializing the connection: the caller sends `initialize`
    /// (with [`Client::call_raw`]) and `initialized` itself, e.g. to replay
    /// `protocol/vectors.json`. [`Client::server_info`] and [`Client::capabilities`] panic on
    /// such a client.
    pub fn spawn_uninitialized(self) -> Result<Client> {
        let (mut cmd, shown) = self.std_command()?;
        let mut child = cmd.spawn().map_err(|source| Error::Spawn { command: shown, source })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take();
        let core = Arc::new(Core::new(self.framing, self.notification_capacity));
        let writer = Arc::new(Writer { stdin: Mutex::new(Some(stdin)) });
        let child = Arc::new(Mutex::new(child));
        let tail = stderr.as_ref().map(|_| Arc::new(Mutex::new(StderrTail::default())));
        let stderr_thread = match (stderr, &tail) {
            (Some(mut err), Some(tail)) => {
                let tail = tail.clone();
                Some(std::thread::Builder::new().name("sidecar-stderr".into()).spawn(move || {
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = err.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        lock(&tail).push(&buf[..n]);
                    }
                })?)
            }
            _ => None,
        };
        let reader = {
            let (core, writer, child, tail) = (core.clone(), writer.clone(), child.clone(), tail.clone());
            let max = self.max_frame_bytes;
            std::thread::Builder::new()
                .name("sidecar-stdout".into())
                .spawn(move || read_loop(stdout, &core, &writer, &child, tail.as_deref(), max))?
        };
        Ok(Client {
            core,
            writer,
            child,
            reader: Some(reader),
            stderr_thread,
            tail,
            server: None,
            request_timeout: self.request_timeout,
            exit_timeout: self.exit_timeout,
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct Writer {
    stdin: Mutex<Option<ChildStdin>>,
}

impl Writer {
    pub(crate) fn write(&self, frame: &[u8]) -> std::io::Result<()> {
        let mut stdin = lock(&self.stdin);
        match stdin.as_mut() {
            Some(s) => s.write_all(frame).and_then(|()| s.flush()),
            None => Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the sidecar's stdin is closed")),
        }
    }

    pub(crate) fn close(&self) {
        lock(&self.stdin).take();
    }
}

fn read_loop(
    stdout: std::process::ChildStdout,
    core: &Core,
    writer: &Writer,
    child: &Mutex<Child>,
    tail: Option<&Mutex<StderrTail>>,
    max: usize,
) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    let mut reason = loop {
        match read_frame(&mut r, core.framing, max) {
            Ok(Some(body)) => match core.dispatch(&body) {
                Ok(Some(answer)) => {
                    let _ = writer.write(&answer);
                }
                Ok(None) => {}
                Err(why) => break why,
            },
            Ok(None) => break "the sidecar closed its output".to_owned(),
            Err(e) => break format!("unreadable output from the sidecar: {e}"),
        }
    };
    // The exit status, when the process is gone (it usually is at EOF).
    let deadline = Instant::now() + Duration::from_millis(500);
    let status = loop {
        match lock(child).try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => break None,
        }
    };
    if let Some(status) = status {
        reason = format!("{reason} ({})", describe(status));
    }
    if let Some(line) = tail.and_then(|t| last_line(&lock(t).text())) {
        reason = format!("{reason}: {line}");
    }
    core.close(reason);
}

pub(crate) fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    match status.code() {
        Some(c) => format!("exit code {c}"),
        None => status.to_string(),
    }
}

/// A connection to a spawned sidecar (blocking API; `Send + Sync`, so several threads may
/// share it and have requests in flight at once).
///
/// Every request method of the protocol has a typed function (`create`, `append`, `read`, …,
/// `turn_start`, `state_set`, `blob_get`; see [`crate::TYPED_METHODS`]); [`Client::send`]
/// pipelines any of them. Dropping the client closes the sidecar's stdin (an orderly stop:
/// every request it read is answered, appends finish durably), waits up to the exit timeout,
/// then kills it. [`Client::shutdown`] does `shutdown` + `exit` and reports the exit status.
pub struct Client {
    core: Arc<Core>,
    writer: Arc<Writer>,
    child: Arc<Mutex<Child>>,
    reader: Option<JoinHandle<()>>,
    stderr_thread: Option<JoinHandle<()>>,
    tail: Option<Arc<Mutex<StderrTail>>>,
    server: Option<InitializeResult>,
    request_timeout: Option<Duration>,
    exit_timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("pid", &self.pid()).field("framing", &self.core.framing).finish()
    }
}

impl Client {
    /// A [`Builder`].
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Spawns a sidecar on `store` with the defaults (see [`Builder`]).
    pub fn spawn(store: impl Into<PathBuf>) -> Result<Client> {
        Builder::new().store(store).spawn()
    }

    /// The `initialize` result: server info, capabilities, store root and backend.
    pub fn server_info(&self) -> &InitializeResult {
        self.server.as_ref().expect("initialized")
    }

    /// The server's capabilities (check them before using optional features, §7).
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.server_info().capabilities
    }

    /// The sidecar's process id.
    pub fn pid(&self) -> u32 {
        lock(&self.child).id()
    }

    /// The framing in use.
    pub fn framing(&self) -> Framing {
        self.core.framing
    }

    /// Whether the connection has ended (every request now fails with [`Error::Exited`]).
    pub fn is_closed(&self) -> bool {
        self.core.closed_reason().is_some()
    }

    /// The captured stderr (with [`Stderr::Capture`]; its last 64 KiB).
    pub fn stderr_text(&self) -> Option<String> {
        self.tail.as_ref().map(|t| lock(t).text())
    }

    /// Sends a request and waits for its typed answer (the client's request timeout applies).
    pub fn call<M: Method>(&self, params: M::Params) -> Result<M::Result> {
        self.send::<M>(params).wait()
    }

    /// Sends a request now and returns at once: wait for the answer with [`Pending::wait`].
    /// Requests reach the server in the order they are sent and may be answered in any order.
    ///
    /// ```no_run
    /// # fn main() -> session_sidecar::Result<()> {
    /// use session_sidecar::{method, Client, Record, SessionAppendParams};
    /// let client = Client::spawn("/tmp/store")?;
    /// let sid = client.create(Default::default())?.session_id;
    /// let pending: Vec<_> = (0..100)
    ///     .map(|i| client.send::<method::SessionAppend>(SessionAppendParams::new(&sid, [Record::text("user", format!("#{i}"))])))
    ///     .collect();
    /// for p in pending {
    ///     println!("durable at seq {}", p.wait()?.last_seq);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn send<M: Method>(&self, params: M::Params) -> Pending<M::Result> {
        self.send_raw(M::NAME, &params)
    }

    /// Sends any request (e.g. a vendor method) with untyped params and result.
    pub fn call_raw(&self, method: &str, params: Option<Value>) -> Result<Value> {
        match params {
            Some(p) => self.send_raw::<_, Value>(method, &p).wait(),
            None => self.send_raw::<_, Value>(method, &serde_json::Map::new()).wait(),
        }
    }

    fn send_raw<P: serde::Serialize, R>(&self, method: &str, params: &P) -> Pending<R> {
        let mut pending = Pending {
            id: 0,
            method: method.to_owned(),
            rx: None,
            early: None,
            core: self.core.clone(),
            writer: self.writer.clone(),
            timeout: self.request_timeout,
            _result: PhantomData,
        };
        let (id, frame) = match self.core.request_frame(method, params) {
            Ok(x) => x,
            Err(e) => {
                pending.early = Some(e);
                return pending;
            }
        };
        pending.id = id;
        let (tx, rx) = sync_channel::<Reply>(1);
        if let Err(e) = self.core.register(id, Box::new(move |r| drop(tx.send(r)))) {
            pending.early = Some(e);
            return pending;
        }
        if let Err(e) = self.writer.write(&frame) {
            self.core.forget(id);
            pending.early = Some(Error::Exited {
                reason: self.core.closed_reason().unwrap_or_else(|| format!("cannot write to the sidecar: {e}")),
            });
            return pending;
        }
        pending.rx = Some(rx);
        pending
    }

    /// Sends a notification (no answer), e.g. `$/cancelRequest`.
    pub fn notify<P: serde::Serialize>(&self, method: &str, params: &P) -> Result<()> {
        let frame = self.core.notification_frame(method, params)?;
        self.writer.write(&frame).map_err(|e| Error::Exited {
            reason: self.core.closed_reason().unwrap_or_else(|| format!("cannot write to the sidecar: {e}")),
        })
    }

    /// The server's notifications, as a blocking iterator (ends when the connection does).
    /// Items are `Err(Lagged)` where notifications were dropped on a full buffer
    /// ([`Builder::notification_capacity`]; see [`crate::Lagged`]).
    pub fn notifications(&self) -> Notifications<'_> {
        Notifications { core: &self.core }
    }

    /// All of a blob's bytes, read with `blob/get` in chunks of `capabilities.blob.maxChunk`
    /// (or 1 MiB). `digest` is a [`crate::BlobRef`]'s `$blob` (`sha256:<hex>`).
    pub fn read_blob(&self, session_id: &str, digest: &str) -> Result<Vec<u8>> {
        use base64::Engine as _;
        let chunk = self.capabilities().blob.as_ref().map_or(1 << 20, |b| b.max_chunk.clamp(1, 8 << 20));
        let mut out = Vec::new();
        loop {
            let r = self.blob_get(
                BlobGetParams::new(session_id, digest).offset(out.len() as u64).length(chunk),
            )?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(r.data_base64.as_bytes())
                .map_err(|e| Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
            out.extend_from_slice(&bytes);
            if r.eof || bytes.is_empty() {
                return Ok(out);
            }
        }
    }

    /// `shutdown` (every in-flight append finishes, every session is closed), `exit`, then
    /// waits for the process (killing it after the exit timeout). Returns its exit status
    /// (success after an orderly stop).
    pub fn shutdown(mut self) -> Result<ExitStatus> {
        let asked = self.send::<crate::method::Shutdown>(EmptyParams::default()).wait_timeout(self.exit_timeout);
        if asked.is_ok() {
            let _ = self.notify("exit", &EmptyParams::default());
        }
        let status = self.finish()?;
        asked.map(|()| status)
    }

    /// Kills the sidecar at once (SIGKILL: a crash, for tests and demos) and waits for it.
    /// Pending requests fail with [`Error::Exited`].
    pub fn kill(&self) -> Result<ExitStatus> {
        let status = {
            let mut child = lock(&self.child);
            let _ = child.kill();
            child.wait()?
        };
        self.writer.close();
        Ok(status)
    }

    /// The exit status, if the process has ended.
    pub fn try_wait(&self) -> Result<Option<ExitStatus>> {
        Ok(lock(&self.child).try_wait()?)
    }

    /// Closes stdin, waits up to the exit timeout, kills if needed, joins the threads.
    fn finish(&mut self) -> Result<ExitStatus> {
        self.writer.close();
        let deadline = Instant::now() + self.exit_timeout;
        let status = loop {
            if let Some(s) = lock(&self.child).try_wait()? {
                break s;
            }
            if Instant::now() >= deadline {
                let mut child = lock(&self.child);
                let _ = child.kill();
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
        Ok(status)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.finish();
        }
    }
}

