//! The tokio client (feature `tokio`) against the built sidecar, in both framings.

use super::common::{builder, user, TempDir, FRAMINGS};
use session_sidecar::*;
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_client_in_both_framings() {
    for framing in FRAMINGS {
        let dir = TempDir::new();
        let client = builder(&dir.store(), framing).spawn_async().await.unwrap();
        assert!(client.capabilities().framings.contains(&framing));
        let sid = client.create(SessionCreateParams::new().blob_threshold(1024)).await.unwrap().session_id;
        client.subscribe(SessionSubscribeParams::new(&sid)).await.unwrap();

        // Pipelined: every request is written when made, answered in order of seq.
        let pending: Vec<_> =
            (0..30).map(|i| client.append(SessionAppendParams::new(&sid, [user(&format!("#{i}"))]))).collect();
        for (i, p) in pending.into_iter().enumerate() {
            let ack = p.await.unwrap();
            assert_eq!(ack.first_seq, i as u64 + 1);
        }
        let e = client.append(SessionAppendParams::new(&sid, [user("x")]).expected_last_seq(3)).await.unwrap_err();
        assert!(matches!(&e, Error::Conflict(c) if c.data.last_seq == Some(30)), "{e:?}");

        let mut notes = client.notifications();
        let mut seqs = Vec::new();
        while seqs.len() < 30 {
            match tokio::time::timeout(WAIT, notes.next()).await.expect("didAppend within 60 s") {
                Some(Ok(Notification::SessionDidAppend(p))) => seqs.extend(p.records.iter().map(StoredRecord::seq)),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seqs, (1..=30).collect::<Vec<_>>());

        let mut records = client.records(SessionReadParams::new(&sid).limit(7));
        let mut n = 0u64;
        while let Some(r) = records.next().await {
            n += 1;
            assert_eq!(r.unwrap().seq(), n);
        }
        assert_eq!(n, 30);
        assert_eq!(client.read_all(SessionReadParams::new(&sid)).await.unwrap().len(), 30);
        let mut sessions = client.sessions(SessionListParams::new().limit(1));
        assert_eq!(sessions.next().await.unwrap().unwrap().session_id, sid);
        assert!(sessions.next().await.is_none());
        let mut hits = client.search_hits(SessionSearchParams::new("#2").limit(2));
        let mut found = 0;
        while let Some(h) = hits.next().await {
            h.unwrap();
            found += 1;
        }
        assert_eq!(found, 11, "#2 and #20..#29");

        let big = "b".repeat(5000);
        // Tool-call arguments are a BlobRef position (protocol §15.4): past the threshold, a blob.
        let call = Record::message(ChatMessage::new("assistant").tool_calls([ToolCall::new("call_1", "write", big.as_str())]));
        client.append(SessionAppendParams::new(&sid, [call])).await.unwrap();
        let last = client.read(SessionReadParams::new(&sid).after_seq(30)).await.unwrap();
        let StoredRecord::Message(m) = &last.records[0] else { panic!() };
        let blob = &m.message.tool_calls.as_ref().expect("tool calls")[0].arguments;
        let digest = blob.as_blob().expect("a blob reference").digest().to_owned();
        assert_eq!(client.read_blob(&sid, &digest).await.unwrap(), big.as_bytes());

        let clone = client.clone();
        assert!(clone.shutdown().await.unwrap().success());
        assert!(matches!(client.list(Default::default()).await, Err(Error::Exited { .. })));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_kill_and_drop() {
    let dir = TempDir::new();
    let client = builder(&dir.store(), Framing::Ndjson).spawn_async().await.unwrap();
    let sid = client.create(Default::default()).await.unwrap().session_id;
    let pending: Vec<_> = (0..50).map(|i| client.append(SessionAppendParams::new(&sid, [user(&format!("#{i}"))]))).collect();
    let status = client.kill().await.unwrap();
    assert!(!status.success());
    for p in pending {
        if let Err(e) = p.await {
            assert!(matches!(e, Error::Exited { .. }), "{e:?}");
            assert_eq!(e.outcome(), Outcome::Uncertain);
        }
    }
    assert!(matches!(client.usage(SessionUsageParams::new(&sid)).await, Err(Error::Exited { .. })));

    // Dropping the last clone closes stdin; a task waits for the process.
    let client = builder(&dir.store(), Framing::Lsp).spawn_async().await.unwrap();
    let pid = client.pid();
    drop(client);
    let proc_dir = format!("/proc/{pid}");
    let gone = tokio::time::timeout(WAIT, async {
        while Path::new(&proc_dir).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the dropped client's sidecar exited and was reaped");
}
