//! Errors the real sidecar answers, each as its typed variant with its data; and the client's
//! own failures (no command, a command that cannot start, a sidecar that exits at once).

use super::common::{builder, command, spawn, user, TempDir};
use serde_json::json;
use session_sidecar::*;

#[test]
fn protocol_errors_are_typed_with_their_data() {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), Framing::Lsp);
    let secret = "sk-test-not-a-real-key-1234567890";
    let sid = client
        .create(SessionCreateParams::new().secrets(SecretsParam::new().values([secret])))
        .unwrap()
        .session_id;
    client.append(SessionAppendParams::new(&sid, [user("a")])).unwrap();

    let e = client.read(SessionReadParams::new("../x")).unwrap_err();
    assert!(matches!(e, Error::InvalidSessionId(_)), "{e:?}");
    assert_eq!(e.code(), Some(-31002));

    let e = client.read(SessionReadParams::new("01ZZZZZZZZZZZZZZZZZZZZZZZZ")).unwrap_err();
    assert!(matches!(&e, Error::SessionNotFound(n) if n.data.session_id.as_deref() == Some("01ZZZZZZZZZZZZZZZZZZZZZZZZ")), "{e:?}");

    let e = client.append(SessionAppendParams::new(&sid, [user("b")]).expected_last_seq(7)).unwrap_err();
    match &e {
        Error::Conflict(c) => assert_eq!((c.data.expected_last_seq, c.data.last_seq), (Some(7), Some(1))),
        other => panic!("{other:?}"),
    }
    assert_eq!(e.outcome(), Outcome::NotWritten);

    let e = client.read(SessionReadParams::new(&sid).limit(0)).unwrap_err();
    assert!(matches!(&e, Error::InvalidParams(p) if p.data.issues.iter().any(|i| i.path == "limit")), "{e:?}");

    let e = client
        .append(SessionAppendParams::new(&sid, [Record::event("leak", json!({"token": format!("Bearer {secret}")}))]))
        .unwrap_err();
    match &e {
        Error::SecretRejected(s) => {
            assert!(s.data.path.as_deref().is_some_and(|p| p.starts_with("records[0]")), "{s:?}");
            assert!(s.data.rule.is_some());
        }
        other => panic!("{other:?}"),
    }
    assert!(!format!("{e} {e:?}").contains(secret), "an error never carries the secret");
    assert_eq!(client.read(SessionReadParams::new(&sid)).unwrap().last_seq, 1, "nothing was written");

    client.turn_start(TurnStartParams::new(&sid, TurnKind::User)).unwrap();
    let e = client.turn_start(TurnStartParams::new(&sid, TurnKind::User)).unwrap_err();
    assert!(matches!(&e, Error::InvalidTurnTransition(t) if t.data.turn.as_ref().is_some_and(|t| t.status == TurnStatus::Active)), "{e:?}");

    let e = client.call_raw("session/teleport", None).unwrap_err();
    assert!(matches!(e, Error::MethodNotFound(_)), "{e:?}");
    let e = client.call_raw("initialize", Some(json!({"protocolVersion": 1}))).unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)), "a second initialize: {e:?}");

    // A request and its cancellation: either it was cancelled before it started, or it ran (§3.4).
    let p = client.send::<method::SessionRead>(SessionReadParams::new(&sid));
    p.cancel();
    match p.wait() {
        Ok(page) => assert_eq!(page.last_seq, 2),
        Err(Error::RequestCancelled(_)) => {}
        Err(other) => panic!("{other:?}"),
    }
    assert!(client.shutdown().unwrap().success());
}

#[test]
fn unsupported_protocol_version() {
    let dir = TempDir::new();
    let e = builder(&dir.store(), Framing::Ndjson).initialize_params(InitializeParams::new().protocol_version(2)).spawn().unwrap_err();
    match &e {
        Error::UnsupportedProtocolVersion(u) => {
            assert_eq!(u.data.supported, [1]);
            assert_eq!(u.data.requested, Some(json!(2)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_side_failures() {
    let e = Builder::new().command(Vec::<String>::new()).argv().unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
    let e = Builder::new().command(["/nonexistent/session-sidecar"]).spawn().unwrap_err();
    assert!(matches!(&e, Error::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{e:?}");
    assert_eq!(e.outcome(), Outcome::NotWritten);
    // A usage error: the sidecar exits with code 2 before answering initialize; the reason
    // carries the exit status and its last stderr line.
    let dir = TempDir::new();
    let e = builder(&dir.store(), Framing::Ndjson).arg("--no-such-option").spawn().unwrap_err();
    match &e {
        Error::Exited { reason } => assert!(reason.contains("exit code 2"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // `serve` is added unless the command ends with it.
    let argv = Builder::new().command(command()).store("/s").argv().unwrap();
    assert_eq!(argv.iter().rev().take(3).collect::<Vec<_>>(), ["/s", "--store", "serve"]);
    let mut with_serve = command();
    with_serve.push("serve".into());
    let argv = Builder::new().command(with_serve).argv().unwrap();
    assert_eq!(argv.iter().filter(|a| *a == "serve").count(), 1);
}
