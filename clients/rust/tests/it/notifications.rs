//! Notifications: `session/didAppend` in seq order, `turn/didChange`, and the bounded buffer's
//! overflow (`Lagged`) recovered by resubscribing, with nothing lost.

use super::common::{builder, spawn, user, TempDir, FRAMINGS};
use session_sidecar::*;
use std::collections::BTreeSet;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn did_append_and_turn_did_change() {
    for framing in FRAMINGS {
        let dir = TempDir::new();
        let client = spawn(&dir.store(), framing);
        let sid = client.create(Default::default()).unwrap().session_id;
        assert_eq!(client.subscribe(SessionSubscribeParams::new(&sid)).unwrap().last_seq, 0);
        client.append(SessionAppendParams::new(&sid, [user("a"), user("b")])).unwrap();
        client.append(SessionAppendParams::new(&sid, [user("c")])).unwrap();
        let mut notes = client.notifications();
        let mut seqs = Vec::new();
        while seqs.len() < 3 {
            match notes.next_timeout(WAIT).expect("didAppend") {
                Ok(Notification::SessionDidAppend(p)) => seqs.extend(p.records.iter().map(StoredRecord::seq)),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seqs, [1, 2, 3]);
        let turn = client.turn_start(TurnStartParams::new(&sid, TurnKind::User)).unwrap().turn_id;
        let changed = loop {
            match notes.next_timeout(WAIT).expect("turn/didChange") {
                Ok(Notification::TurnDidChange(p)) => break p,
                Ok(Notification::SessionDidAppend(p)) => assert!(p.records.iter().all(|r| r.kind() == "turn")),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(changed.session_id, sid);
        let state = changed.turn.expect("a turn");
        assert_eq!((state.turn_id.as_str(), state.status), (turn.as_str(), TurnStatus::Active));
        assert!(client.shutdown().unwrap().success());
        // The iterator ends with the connection.
    }
}

#[test]
fn a_full_buffer_reports_lagged_and_resubscribing_recovers_everything() {
    const N: u64 = 40;
    let dir = TempDir::new();
    let client = builder(&dir.store(), Framing::Ndjson).notification_capacity(1).spawn().unwrap();
    let sid = client.create(Default::default()).unwrap().session_id;
    client.subscribe(SessionSubscribeParams::new(&sid)).unwrap();
    for i in 0..N {
        // One commit each, answered before the next: one notification per append.
        client.append(SessionAppendParams::new(&sid, [user(&format!("#{i}"))])).unwrap();
    }
    // Nothing was consumed so far: the buffer (1) overflowed.
    let mut have = BTreeSet::new();
    let mut lags = 0;
    let mut notes = client.notifications();
    while have.len() < N as usize {
        match notes.next_timeout(WAIT).expect("notifications until every record was seen") {
            Ok(Notification::SessionDidAppend(p)) => {
                for r in &p.records {
                    have.insert(r.seq());
                }
            }
            Ok(other) => panic!("{other:?}"),
            Err(lag) => {
                lags += 1;
                assert!(lag.dropped > 0);
                let after = lag.last_seq[&sid];
                // Every record up to `after` was had. Records past it may have been had too: a
                // notification of the previous subscription still on its way when we resubscribed
                // lands in the buffer (under load this happens), and its records then come again
                // from the new one — matched by seq, as the docs say.
                assert!((1..=after).all(|s| have.contains(&s)), "{lag:?} {have:?}");
                client.subscribe(SessionSubscribeParams::new(&sid).after_seq(after)).unwrap();
            }
        }
    }
    assert!(lags > 0, "a buffer of one notification overflowed");
    assert_eq!(have, (1..=N).collect::<BTreeSet<_>>());
}
