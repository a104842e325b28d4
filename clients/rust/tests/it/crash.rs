//! SIGKILL of the sidecar in the middle of a pipeline of appends: after a restart, every
//! acknowledged record is there, identical, at its acknowledged seq; no append is partly there.

use super::common::{spawn, TempDir, FRAMINGS};
use session_sidecar::*;
use std::collections::BTreeMap;
use std::sync::mpsc;

const APPENDS: usize = 3000;
const KILL_AFTER_ACKS: usize = 100;

fn text(i: usize, j: usize) -> String {
    format!("append {i} record {j} of {}", 1 + i % 3)
}

#[test]
fn sigkill_mid_pipeline_keeps_every_acknowledged_record() {
    for framing in FRAMINGS {
        sigkill_mid_pipeline(framing);
    }
}

fn sigkill_mid_pipeline(framing: Framing) {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), framing);
    let sid = client.create(SessionCreateParams::new().title("crash")).unwrap().session_id;

    let mut acked: BTreeMap<u64, String> = BTreeMap::new(); // seq -> content
    let mut failed = 0usize;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Pending<SessionAppendResult>)>();
        let (client, sid) = (&client, &sid);
        // The sender pipelines appends of 1 to 3 records as fast as it can write them.
        scope.spawn(move || {
            for i in 0..APPENDS {
                if client.is_closed() {
                    break;
                }
                let records: Vec<Record> = (0..1 + i % 3).map(|j| Record::text("user", text(i, j))).collect();
                let p = client.send::<method::SessionAppend>(SessionAppendParams::new(sid, records));
                if tx.send((i, p)).is_err() {
                    break;
                }
            }
        });
        // The answers, in order; the sidecar is killed once KILL_AFTER_ACKS have come back.
        let mut acks = 0usize;
        for (i, p) in rx {
            match p.wait() {
                Ok(ack) => {
                    assert_eq!(ack.last_seq - ack.first_seq + 1, 1 + i as u64 % 3);
                    for (j, seq) in (ack.first_seq..=ack.last_seq).enumerate() {
                        acked.insert(seq, text(i, j));
                    }
                    acks += 1;
                    if acks == KILL_AFTER_ACKS {
                        let status = client.kill().unwrap();
                        assert!(!status.success());
                    }
                }
                Err(e) => {
                    assert!(matches!(e, Error::Exited { .. }), "append {i}: {e}");
                    assert_eq!(e.outcome(), Outcome::Uncertain);
                    failed += 1;
                }
            }
        }
    });
    assert!(acked.len() >= KILL_AFTER_ACKS);
    assert!(failed > 0, "the kill came after every append was answered: not mid-pipeline ({framing})");
    assert!(client.is_closed());
    drop(client);

    // A new sidecar on the same store: a write open repairs a torn tail, then read everything.
    let client = spawn(&dir.store(), framing);
    let opened = client.open(SessionOpenParams::new().session_id(&sid)).unwrap();
    let records = client.read_all(SessionReadParams::new(&sid)).unwrap();
    assert_eq!(records.len() as u64, opened.last_seq);
    let by_seq: BTreeMap<u64, String> = records
        .iter()
        .map(|r| (r.seq(), r.as_message().and_then(ChatMessage::content_str).unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(by_seq.keys().copied().collect::<Vec<_>>(), (1..=opened.last_seq).collect::<Vec<_>>(), "gapless");
    for (seq, content) in &acked {
        assert_eq!(by_seq.get(seq), Some(content), "acknowledged seq {seq} ({framing})");
    }
    // All or nothing: every append present has all its records, consecutively, in send order.
    let mut seq = 1u64;
    let mut i = 0usize;
    while seq <= opened.last_seq {
        for j in 0..1 + i % 3 {
            assert_eq!(by_seq.get(&seq), Some(&text(i, j)), "append {i} is whole and in order");
            seq += 1;
        }
        i += 1;
    }
    // And the session is writable again after the repair.
    let next = client.append(SessionAppendParams::new(&sid, [Record::text("user", "after the crash")])).unwrap();
    assert_eq!(next.first_seq, opened.last_seq + 1);
    assert!(client.shutdown().unwrap().success());
}
