//! The blocking client: [`Builder`], [`Client`] and [`Pending`].

use crate::command::resolve_command;
use crate::core::{last_line, Core, Reply, StderrTail};
use crate::framing::{read_frame, DEFAULT_MAX_FRAME_BYTES};
use crate::notify::{NotificationItem, DEFAULT_NOTIFICATION_CAPACITY};
use crate::{
    BlobGetParams, ClientInfo, EmptyParams, Error, Framing, InitializeParams, InitializeResult, Method,
    Result, ServerCapabilities, PROTOCOL_VERSION,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the sidecar's stderr (its diagnostics; never protocol frames) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stderr {
    /// To this process's stderr (the default).
    #[default]
    Inherit,
    /// Discarded.
    Null,
    /// Kept (its last 64 KiB) for [`Client::stderr_text`]; its last line is also put in the
    /// reason of [`Error::Exited`].
    Capture,
}

/// How to spawn the sidecar. `Builder::new().store(dir).spawn()` runs
/// `<command> serve --store <dir>`, sends `initialize` and `initialized`, and returns the client.
///
/// The command is [`Builder::command`], else the command line in `$SESSION_SIDECAR_COMMAND`
/// (split as a POSIX shell would: `node "/opt/my sidecar/cli.js"`), else `session-sidecar` on
/// `PATH`. `serve` is added after it unless the command already ends with `serve`.
#[derive(Debug, Clone)]
pub struct Builder {
    pub(crate) command: Option<Vec<String>>,
    pub(crate) args: Vec<OsString>,
    pub(crate) store: Option<PathBuf>,
    pub(crate) framing: Framing,
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) stderr: Stderr,
    pub(crate) notification_capacity: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) exit_timeout: Duration,
    pub(crate) max_frame_bytes: usize,
    pub(crate) initialize: InitializeParams,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// The defaults: NDJSON framing, stderr inherited, 1024 buffered notifications, 120 s per
    /// request, 10 s for the process to exit, `processId` = this process (the sidecar exits
    /// when it is gone).
    pub fn new() -> Self {
        Builder {
            command: None,
            args: Vec::new(),
            store: None,
            framing: Framing::Ndjson,
            env: Vec::new(),
            cwd: None,
            stderr: Stderr::Inherit,
            notification_capacity: DEFAULT_NOTIFICATION_CAPACITY,
            request_timeout: Some(Duration::from_secs(120)),
            exit_timeout: Duration::from_secs(10),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            initialize: InitializeParams::new(PROTOCOL_VERSION)
                .client_info(ClientInfo::new("session-sidecar-rust").version(env!("CARGO_PKG_VERSION")))
                .process_id(i64::from(std::process::id())),
        }
    }

    /// The sidecar's executable and leading arguments, e.g. `["node", "/opt/sidecar/dist/src/cli.js"]`.
    pub fn command<I: IntoIterator<Item = S>, S: Into<String>>(mut self, argv: I) -> Self {
        self.command = Some(argv.into_iter().map(Into::into).collect());
        self
    }

    /// The command as one command line (split as a POSIX shell would).
    pub fn command_line(mut self, line: &str) -> Result<Self> {
        self.command = Some(crate::command::split_command_line(line)?);
        Ok(self)
    }

    /// The store directory (or PostgreSQL URL), passed as `--store`.
    pub fn store(mut self, store: impl Into<PathBuf>) -> Self {
        self.store = Some(store.into());
        self
    }

    /// One more argument for `serve` (e.g. `--log-level`, `--framing`).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// More arguments for `serve`.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The framing this client writes (the server answers in kind). Default NDJSON.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// An environment variable for the sidecar.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Removes an environment variable from the sidecar's environment.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// The sidecar's working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Where the sidecar's stderr goes.
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// How many notifications are buffered before they are dropped (see [`crate::Lagged`]).
    pub fn notification_capacity(mut self, capacity: usize) -> Self {
        self.notification_capacity = capacity.max(1);
        self
    }

    /// How long a request waits for its answer (`None`: forever). On timeout the request is
    /// cancelled (`$/cancelRequest`) and fails with [`Error::Timeout`].
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long shutdown and drop wait for the process to exit before killing it.
    pub fn exit_timeout(mut self, timeout: Duration) -> Self {
        self.exit_timeout = timeout;
        self
    }

    /// The largest frame accepted from the sidecar (default 1 GiB).
    pub fn max_frame_bytes(mut self, max: usize) -> Self {
        self.max_frame_bytes = max;
        self
    }

    /// The `initialize` params (protocol version, `clientInfo`, `processId`).
    pub fn initialize_params(mut self, params: InitializeParams) -> Self {
        self.initialize = params;
        self
    }

    /// The argv that [`Builder::spawn`] runs.
    pub fn argv(&self) -> Result<Vec<OsString>> {
        let mut argv: Vec<OsString> = resolve_command(self.command.as_deref())?.into_iter().map(Into::into).collect();
        if argv.last().is_none_or(|a| a != "serve") {
            argv.push("serve".into());
        }
        if let Some(store) = &self.store {
            argv.push("--store".into());
            argv.push(store.clone().into_os_string());
        }
        argv.extend(self.args.iter().cloned());
        Ok(argv)
    }

    pub(crate) fn std_command(&self) -> Result<(Command, String)> {
        let argv = self.argv()?;
        let shown = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::piped()).stdout(Stdio::piped());
        cmd.stderr(match self.stderr {
            Stderr::Inherit => Stdio::inherit(),
            Stderr::Null => Stdio::null(),
            Stderr::Capture => Stdio::piped(),
        });
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        Ok((cmd, shown))
    }

    /// Spawns the sidecar and initializes the connection (`initialize`, then `initialized`).
    pub fn spawn(self) -> Result<Client> {
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
        let mut client = Client {
            core,
            writer,
            child,
            reader: Some(reader),
            stderr_thread,
            tail,
            server: None,
            request_timeout: self.request_timeout,
            exit_timeout: self.exit_timeout,
        };
        // On failure `client` is dropped: stdin closed, the process waited for (or killed).
        let server = client.call::<crate::method::Initialize>(self.initialize)?;
        client.notify("initialized", &EmptyParams::default())?;
        client.server = Some(server);
        Ok(client)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct Writer {
    stdin: Mutex<Option<ChildStdin>>,
}

impl Writer {
    fn write(&self, frame: &[u8]) -> std::io::Result<()> {
        let mut stdin = lock(&self.stdin);
        match stdin.as_mut() {
            Some(s) => s.write_all(frame).and_then(|()| s.flush()),
            None => Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the sidecar's stdin is closed")),
        }
    }

    fn close(&self) {
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
        let chunk = self.capabilities().blob.as_ref().map_or(1 << 20, |b| u64::try_from(b.max_chunk).unwrap_or(1 << 20).clamp(1, 8 << 20));
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

/// A request sent and not yet answered; [`Pending::wait`] for its answer.
#[must_use = "a request's answer says whether it succeeded"]
pub struct Pending<R> {
    id: u64,
    method: String,
    rx: Option<Receiver<Reply>>,
    early: Option<Error>,
    core: Arc<Core>,
    writer: Arc<Writer>,
    timeout: Option<Duration>,
    _result: PhantomData<fn() -> R>,
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
    core: &'a Core,
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
