//! Shared by the tests: the sidecar under test, temporary stores, records.

use session_sidecar::{Builder, Client, Framing, Record, Stderr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const FRAMINGS: [Framing; 2] = [Framing::Ndjson, Framing::Lsp];

/// The repository root (this crate is `clients/rust`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// The sidecar's argv prefix.
pub fn command() -> Vec<String> {
    if let Ok(line) = std::env::var(session_sidecar::COMMAND_ENV) {
        if !line.trim().is_empty() {
            return session_sidecar::split_command_line(&line).expect("SESSION_SIDECAR_COMMAND");
        }
    }
    let cli = repo_root().join("dist/src/cli.js");
    assert!(cli.exists(), "{} is missing: run `npm run build` in the repository root first", cli.display());
    vec!["node".into(), cli.to_string_lossy().into_owned()]
}

/// A fresh directory, removed on drop; `store()` is a path inside it that the sidecar creates.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "sidecar-rs-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn store(&self) -> PathBuf {
        self.0.join("store")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A builder for the sidecar under test on `store`, with the server's framing forced to the
/// client's (`--framing`), so a client writing the other framing could not pass.
pub fn builder(store: &Path, framing: Framing) -> Builder {
    Builder::new()
        .command(command())
        .store(store)
        .framing(framing)
        .args(["--framing", framing.as_str()])
        .stderr(Stderr::Capture)
        .request_timeout(Some(Duration::from_secs(120)))
        .exit_timeout(Duration::from_secs(30))
}

pub fn spawn(store: &Path, framing: Framing) -> Client {
    builder(store, framing).spawn().expect("spawn the sidecar")
}

pub fn user(text: &str) -> Record {
    Record::text("user", text)
}
