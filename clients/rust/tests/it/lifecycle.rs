//! Ending the connection: drop (stdin closed, process reaped), shutdown (exit code 0), and a
//! SIGKILL failing every pending and later request with `Exited`.

use super::common::{spawn, user, TempDir};
use session_sidecar::*;
use std::path::Path;

#[test]
fn drop_stops_and_reaps_the_sidecar() {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), Framing::Ndjson);
    let sid = client.create(Default::default()).unwrap().session_id;
    // Pipelined appends not waited for: EOF still answers (and commits) everything read.
    let pid = client.pid();
    for i in 0..20 {
        drop(client.send::<method::SessionAppend>(SessionAppendParams::new(&sid, [user(&format!("#{i}"))])));
    }
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(client);
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the sidecar was waited for");
    let client = spawn(&dir.store(), Framing::Ndjson);
    assert_eq!(client.read(SessionReadParams::new(&sid)).unwrap().last_seq, 20, "EOF is an orderly stop");
}

#[test]
fn kill_fails_pending_and_later_requests() {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), Framing::Lsp);
    let sid = client.create(Default::default()).unwrap().session_id;
    let pending: Vec<_> = (0..50)
        .map(|i| client.send::<method::SessionAppend>(SessionAppendParams::new(&sid, [user(&format!("#{i}"))])))
        .collect();
    let status = client.kill().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9));
    }
    for p in pending {
        if let Err(e) = p.wait() {
            assert!(matches!(e, Error::Exited { .. }), "{e:?}");
            assert_eq!(e.outcome(), Outcome::Uncertain);
        }
    }
    let e = client.list(Default::default()).unwrap_err();
    match &e {
        Error::Exited { reason } => assert!(reason.contains("signal 9") || reason.contains("closed"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(client.is_closed());
    assert_eq!(client.notifications().next(), None, "the notification iterator ends");
}
