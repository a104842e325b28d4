//! Two sidecar processes on one store: the second is refused the writer lease
//! (`SessionLocked`, with the holder), may read and subscribe, and gets the lease once the
//! first closes the session.

use super::common::{spawn, user, TempDir};
use session_sidecar::*;
use std::time::Duration;

#[test]
fn second_client_gets_session_locked_then_reads_and_follows() {
    let dir = TempDir::new();
    let a = spawn(&dir.store(), Framing::Ndjson);
    let b = spawn(&dir.store(), Framing::Lsp);
    let sid = a.create(Default::default()).unwrap().session_id;
    a.append(SessionAppendParams::new(&sid, [user("one"), user("two")])).unwrap();

    let err = b.open(SessionOpenParams::new().session_id(&sid)).unwrap_err();
    match &err {
        Error::SessionLocked(e) => {
            assert_eq!(e.code, ErrorKind::SessionLocked.code());
            assert_eq!(e.data.session_id.as_deref(), Some(sid.as_str()));
            let holder = e.data.holder.as_ref().expect("the holder");
            assert_eq!(holder.pid, Some(i64::from(a.pid())));
            assert!(holder.hostname.is_some() && holder.started_at.is_some());
        }
        other => panic!("expected SessionLocked, got {other:?}"),
    }
    assert_eq!(err.kind(), Some(ErrorKind::SessionLocked));
    assert_eq!(err.outcome(), Outcome::NotWritten);

    let opened = b.open(SessionOpenParams::new().session_id(&sid).mode(OpenMode::Read)).unwrap();
    assert_eq!((opened.mode, opened.last_seq), (OpenMode::Read, 2));
    assert!(matches!(
        b.append(SessionAppendParams::new(&sid, [user("from b")])),
        Err(Error::ReadOnly(e)) if e.data.reason == Some(ReadOnlyReason::OpenedReadOnly)
    ));

    // B follows what A appends (the journal is watched across processes).
    b.subscribe(SessionSubscribeParams::new(&sid)).unwrap();
    a.append(SessionAppendParams::new(&sid, [user("three")])).unwrap();
    let mut seen = Vec::new();
    let mut notes = b.notifications();
    while seen.len() < 3 {
        match notes.next_timeout(Duration::from_secs(60)).expect("a notification within 60 s") {
            Ok(Notification::SessionDidAppend(p)) => {
                assert_eq!(p.session_id, sid);
                seen.extend(p.records.iter().map(|r| r.as_message().unwrap().content_str().unwrap().to_owned()));
            }
            Ok(_) => {}
            Err(lag) => panic!("{lag}"),
        }
    }
    assert_eq!(seen, ["one", "two", "three"]);

    // Once A closes the session, B may write it.
    a.close(SessionCloseParams::new(&sid)).unwrap();
    assert_eq!(b.open(SessionOpenParams::new().session_id(&sid)).unwrap().mode, OpenMode::Write);
    assert_eq!(b.append(SessionAppendParams::new(&sid, [user("four")])).unwrap().first_seq, 4);
    assert!(matches!(a.append(SessionAppendParams::new(&sid, [user("a again")])), Err(Error::ReadOnly(_))));
    assert!(a.shutdown().unwrap().success());
    assert!(b.shutdown().unwrap().success());
}
