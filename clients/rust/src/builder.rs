//! [`Builder`]: how to spawn the sidecar (command, store, framing, timeouts, ...), and [`Stderr`].

use crate::command::resolve_command;
use crate::framing::DEFAULT_MAX_FRAME_BYTES;
use crate::notify::DEFAULT_NOTIFICATION_CAPACITY;
use crate::{ClientInfo, Framing, InitializeParams, Result, PROTOCOL_VERSION};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

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
            initialize: InitializeParams::new()
                .protocol_version(PROTOCOL_VERSION)
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
}
