//! Which sidecar to run: the builder's command, else `$SESSION_SIDECAR_COMMAND`, else
//! `session-sidecar` on `PATH`.

use crate::Error;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable naming the sidecar command line (split as a POSIX shell would,
/// e.g. `node /opt/sidecar/dist/src/cli.js`).
pub const COMMAND_ENV: &str = "SESSION_SIDECAR_COMMAND";

/// The executable looked up on `PATH` when neither a command nor [`COMMAND_ENV`] is given.
pub const EXECUTABLE: &str = "session-sidecar";

/// Splits a command line into words (POSIX shell quoting rules, no expansion).
pub fn split_command_line(line: &str) -> Result<Vec<String>, Error> {
    match shlex::split(line) {
        Some(words) if !words.is_empty() => Ok(words),
        Some(_) => Err(Error::NotFound { message: "the sidecar command line is empty".into() }),
        None => Err(Error::NotFound { message: "the sidecar command line has an unterminated quote".into() }),
    }
}

/// The sidecar's argv prefix: `explicit`, else `$SESSION_SIDECAR_COMMAND`, else `session-sidecar`
/// found on `PATH`.
pub fn resolve_command(explicit: Option<&[String]>) -> Result<Vec<String>, Error> {
    if let Some(argv) = explicit {
        if argv.is_empty() {
            return Err(Error::NotFound { message: "the sidecar command is empty".into() });
        }
        return Ok(argv.to_vec());
    }
    if let Some(line) = std::env::var_os(COMMAND_ENV) {
        let line = line.to_string_lossy();
        if !line.trim().is_empty() {
            return split_command_line(&line);
        }
    }
    match find_on_path(EXECUTABLE, std::env::var_os("PATH")) {
        Some(p) => Ok(vec![p.to_string_lossy().into_owned()]),
        None => Err(Error::NotFound {
            message: format!(
                "no sidecar to run: give Builder::command, set {COMMAND_ENV} (e.g. \"node /path/to/dist/src/cli.js\"), \
                 or put {EXECUTABLE} on PATH (npm install -g session-sidecar)"
            ),
        }),
    }
}

fn find_on_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(split_command_line("node \"/a b/cli.js\" serve").unwrap(), ["node", "/a b/cli.js", "serve"]);
        assert_eq!(split_command_line("  node   cli.js ").unwrap(), ["node", "cli.js"]);
        assert!(split_command_line("node \"unterminated").is_err());
        assert!(split_command_line("   ").is_err());
    }

    #[test]
    fn finds_an_executable_on_path() {
        let dir = std::env::temp_dir().join(format!("sidecar-path-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        assert_eq!(find_on_path("tool", Some(dir.clone().into_os_string())), None, "not executable yet");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(find_on_path("tool", Some(dir.clone().into_os_string())), Some(exe));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
