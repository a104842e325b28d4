//! Every request method of protocol v1 through its typed function, in both framings (the
//! server's framing is forced to the client's), against the built sidecar.

use super::common::{spawn, user, TempDir, FRAMINGS};
use serde_json::{json, Value};
use session_sidecar::*;
use std::collections::BTreeSet;

#[test]
fn every_method_in_both_framings() {
    for framing in FRAMINGS {
        every_method(framing);
    }
}

fn every_method(framing: Framing) {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), framing);
    let mut used: BTreeSet<&'static str> = BTreeSet::new();
    macro_rules! call {
        ($method:literal, $e:expr) => {{
            used.insert($method);
            $e.unwrap_or_else(|e| panic!("{} ({framing}): {e}", $method))
        }};
    }

    let info = client.server_info();
    assert_eq!(info.protocol_version, 1);
    assert_eq!(info.server_info.name, "session-sidecar");
    assert!(info.capabilities.framings.contains(&framing));
    assert_eq!(info.store.backend, StoreBackend::File);
    assert_eq!(client.framing(), framing);

    // session/create, with a header worth reading back.
    let created = call!(
        "session/create",
        client.create(
            SessionCreateParams::new()
                .title("Fix the build")
                .system_prompt("You are terse.")
                .cwd("/work/project")
                .tags(["ci", "team:infra"])
                .llm(LlmConfig::new().provider("openai").model("gpt-4o").api_key_env("OPENAI_API_KEY"))
                .metadata(json!({"agent": "rust"}).as_object().cloned().unwrap())
                .blob_threshold(1024)
        )
    );
    let sid = created.session_id.clone();
    assert!(!sid.is_empty());

    // tool/allocateScratch, then runtime records and messages in one append.
    let scratch = call!("tool/allocateScratch", client.tool_allocate_scratch(ToolAllocateScratchParams::new(&sid, "req-1")));
    assert!(std::path::Path::new(&scratch.dir).is_dir(), "{}", scratch.dir);
    assert!(std::path::Path::new(&scratch.tmp_dir).is_dir());
    let big_arguments = format!("{{\"cmd\":\"{}\"}}", "x".repeat(3000)); // > blobThreshold: a blob
    let records: Vec<Record> = vec![
        user("The build fails on main. Can you fix it?"),
        ApiRecord::new(ApiDirection::Request, json!({"model": "gpt-4o", "messages": []})).into(),
        Record::message(
            ChatMessage::new("assistant")
                .content(Value::Null)
                .tool_calls([ToolCall::new("call_1", "bash", big_arguments.as_str())]),
        ),
        ToolStartRecord::new("req-1", "bash").tool_seq(scratch.tool_seq).tool_use_id("call_1").into(),
        ToolStreamRecord::new(scratch.tool_seq, OutputStream::Stdout).text("ok\n").into(),
        ToolFinishRecord::new(scratch.tool_seq, "req-1", true).exit_code(0).into(),
        ApiRecord::new(
            ApiDirection::Response,
            json!({"id": "resp_1", "model": "gpt-4o", "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        )
        .into(),
        Record::message(ChatMessage::text("tool", "error TS2304").tool_call_id("call_1")),
        Record::event("tool.started", json!({"toolCallId": "call_1"})),
        Record::interruption("user cancelled", "providerStream"),
        Record::text("assistant", "Fixed: foo was renamed to bar."),
    ];
    let n = records.len() as u64;
    let ack = call!("session/append", client.append(SessionAppendParams::new(&sid, records).expected_last_seq(0)));
    assert_eq!((ack.first_seq, ack.last_seq), (1, n));

    // session/read: typed records, a blob reference, then inline.
    let page = call!("session/read", client.read(SessionReadParams::new(&sid)));
    assert_eq!(page.records.len() as u64, n);
    assert_eq!(page.next_after_seq, None);
    assert_eq!(page.records.iter().map(StoredRecord::seq).collect::<Vec<_>>(), (1..=n).collect::<Vec<_>>());
    assert_eq!(page.records[0].as_message().and_then(ChatMessage::content_str), Some("The build fails on main. Can you fix it?"));
    let StoredRecord::Message(assistant) = &page.records[2] else { panic!("{:?}", page.records[2]) };
    let arguments = &assistant.message.tool_calls.as_ref().unwrap()[0].arguments;
    let blob = arguments.as_blob().unwrap_or_else(|| panic!("not a blob: {arguments:?}")).clone();
    assert_eq!(blob.bytes, big_arguments.len() as u64);
    assert_eq!(assistant.message.content, Some(Value::Null), "an explicit null content reads back as null");
    match &page.records[3] {
        StoredRecord::ToolStart(t) => assert_eq!(t.tool_seq, scratch.tool_seq),
        other => panic!("{other:?}"),
    }
    match &page.records[4] {
        StoredRecord::ToolStream(t) => assert_eq!(t.text.as_ref().and_then(BlobOr::as_value).map(String::as_str), Some("ok\n")),
        other => panic!("{other:?}"),
    }
    match (&page.records[1], &page.records[6]) {
        (StoredRecord::Api(req), StoredRecord::Api(resp)) => assert_eq!(req.api_seq, resp.api_seq),
        other => panic!("{other:?}"),
    }
    assert!(matches!(&page.records[9], StoredRecord::Interruption(i) if i.phase == "providerStream"));
    let inline = call!("session/read", client.read(SessionReadParams::new(&sid).inline(true).after_seq(2).limit(1)));
    let StoredRecord::Message(m) = &inline.records[0] else { panic!() };
    assert_eq!(m.message.tool_calls.as_ref().unwrap()[0].arguments, BlobOr::Value(big_arguments.clone()));
    assert_eq!(inline.next_after_seq, Some(3));

    // blob/get (and read_blob over it).
    let chunk = call!("blob/get", client.blob_get(BlobGetParams::new(&sid, blob.digest()).length(100)));
    assert_eq!((chunk.offset, chunk.bytes, chunk.eof), (0, big_arguments.len() as u64, false));
    assert_eq!(client.read_blob(&sid, blob.digest()).unwrap(), big_arguments.as_bytes());

    // session/open: read mode keeps this connection's write mode; the header as created.
    let opened = call!("session/open", client.open(SessionOpenParams::new().session_id(&sid).mode(OpenMode::Read)));
    assert_eq!(opened.mode, OpenMode::Write);
    assert_eq!((opened.last_seq, opened.title.as_deref()), (n, Some("Fix the build")));
    assert_eq!(opened.llm.as_ref().and_then(|l| l.api_key_env.as_deref()), Some("OPENAI_API_KEY"));

    // session/list, session/update, session/search.
    let listed = call!("session/list", client.list(SessionListParams::new().tags(["ci"])));
    assert_eq!(listed.sessions.len(), 1);
    assert_eq!(listed.sessions[0].session_id, sid);
    let updated = call!(
        "session/update",
        client.update(SessionUpdateParams::new(&sid).title("Fix the CI build").metadata(
            json!({"ticket": "OPS-7", "agent": null}).as_object().cloned().unwrap()
        ))
    );
    assert_eq!(updated.seq, n + 1);
    assert_eq!(updated.title.as_deref(), Some("Fix the CI build"));
    assert_eq!(updated.metadata, json!({"ticket": "OPS-7"}).as_object().cloned());
    let found = call!("session/search", client.search(SessionSearchParams::new("foo was renamed")));
    assert_eq!(found.hits.len(), 1);
    assert_eq!((found.hits[0].session_id.as_str(), found.hits[0].seq), (sid.as_str(), n));

    // session/context: the system prompt first.
    let ctx = call!("session/context", client.context(SessionContextParams::new(&sid)));
    assert_eq!(ctx.messages[0].role, "system");
    assert_eq!(ctx.messages[0].content_str(), Some("You are terse."));

    // The turn methods.
    let turn = call!("turn/start", client.turn_start(TurnStartParams::new(&sid, TurnKind::User))).turn_id;
    call!("turn/setPhase", client.turn_set_phase(TurnSetPhaseParams::new(&sid, &turn, TurnPhase::ProviderStream)));
    call!("turn/fail", client.turn_fail(TurnFailParams::new(&sid, &turn, "rate limited")));
    let state = call!("turn/get", client.turn_get(TurnGetParams::new(&sid))).turn.unwrap();
    assert_eq!((state.status, state.error.as_deref()), (TurnStatus::Retryable, Some("rate limited")));
    call!("turn/resume", client.turn_resume(TurnResumeParams::new(&sid, &turn)));
    call!("turn/finish", client.turn_finish(TurnFinishParams::new(&sid, &turn, TurnOutcome::Completed)));
    let state = call!("turn/get", client.turn_get(TurnGetParams::new(&sid))).turn.unwrap();
    assert_eq!((state.turn_id.as_str(), state.status), (turn.as_str(), TurnStatus::Completed));

    // State values.
    call!("state/set", client.state_set(StateSetParams::new(&sid, "bashState", json!({"cwd": "/work"}))));
    assert_eq!(call!("state/get", client.state_get(StateGetParams::new(&sid, "bashState"))).value, json!({"cwd": "/work"}));
    assert!(call!("state/delete", client.state_delete(StateDeleteParams::new(&sid, "bashState"))).deleted);
    assert_eq!(client.state_get(StateGetParams::new(&sid, "bashState")).unwrap().value, Value::Null);

    // session/usage, session/rewind.
    let usage = call!("session/usage", client.usage(SessionUsageParams::new(&sid)));
    assert_eq!((usage.total.input, usage.total.output, usage.total.total), (10, 5, 15));
    assert_eq!(usage.by_model.keys().collect::<Vec<_>>(), ["gpt-4o"]);
    let last = client.read(SessionReadParams::new(&sid).limit(1)).unwrap().last_seq;
    let rewound = call!("session/rewind", client.rewind(SessionRewindParams::new(&sid, 1).expected_last_seq(last)));
    assert_eq!((rewound.seq, rewound.to_seq), (last + 1, 1));
    let ctx = client.context(SessionContextParams::new(&sid)).unwrap();
    assert_eq!(ctx.messages.len(), 2, "the system prompt and the first message: {:?}", ctx.messages);

    // session/compact, session/history, reading an archived generation.
    let compacted = call!("session/compact", client.compact(SessionCompactParams::new(&sid, "The user asked to fix the build.", 1)));
    assert_eq!((compacted.generation, compacted.checkpoint_seq), (1, 1));
    let history = call!("session/history", client.history(SessionHistoryParams::new(&sid)));
    assert_eq!(history.generations.len(), 1);
    let archived = client.read(SessionReadParams::new(&sid).generation(0)).unwrap();
    assert_eq!(archived.records.len() as u64, last + 1);
    let active = client.read(SessionReadParams::new(&sid)).unwrap();
    assert!(matches!(&active.records[0], StoredRecord::Checkpoint(c) if c.summary == "The user asked to fix the build."));

    // session/subscribe, session/unsubscribe (notifications: tests/it/notifications.rs).
    let sub = call!("session/subscribe", client.subscribe(SessionSubscribeParams::new(&sid).after_seq(active.last_seq)));
    assert_eq!(sub.last_seq, active.last_seq);
    call!("session/unsubscribe", client.unsubscribe(SessionUnsubscribeParams::new(&sid)));

    // session/fork, session/close, session/delete, session/restore, session/prune.
    let fork = call!("session/fork", client.fork(SessionForkParams::new(&sid))).session_id;
    let forked = client.open(SessionOpenParams::new().session_id(&fork)).unwrap();
    assert_eq!(forked.parent.as_ref().map(|p| (p.session_id.as_str(), p.relation)), Some((sid.as_str(), ParentRelation::Fork)));
    call!("session/close", client.close(SessionCloseParams::new(&fork)));
    assert!(matches!(
        client.append(SessionAppendParams::new(&fork, [user("after close")])),
        Err(Error::ReadOnly(e)) if e.data.reason == Some(ReadOnlyReason::NotOpen)
    ));
    call!("session/delete", client.delete(SessionDeleteParams::new(&fork)));
    let ids = |c: &Client| c.sessions(Default::default()).map(|s| s.unwrap().session_id).collect::<Vec<_>>();
    assert!(!ids(&client).contains(&fork));
    call!("session/restore", client.restore(SessionRestoreParams::new(&fork)));
    assert!(ids(&client).contains(&fork));
    let pruned = call!("session/prune", client.prune(SessionPruneParams::new("0s").dry_run(true)));
    assert!(pruned.dry_run);
    let mentioned: BTreeSet<&str> = pruned
        .sessions
        .iter()
        .map(|s| s.session_id.as_str())
        .chain(pruned.skipped.iter().map(|s| s.session_id.as_str()))
        .collect();
    assert!(mentioned.contains(sid.as_str()), "{pruned:?}");
    assert!(client.open(SessionOpenParams::new().session_id(&sid).mode(OpenMode::Read)).is_ok(), "a dry run moves nothing");
    call!("session/delete", client.delete(SessionDeleteParams::new(&fork).purge(true)));

    let expected: BTreeSet<&str> = TYPED_METHODS.iter().map(|(m, _)| *m).collect();
    assert_eq!(used, expected, "every typed method was exercised ({framing})");
    let status = client.shutdown().unwrap();
    assert!(status.success(), "{status:?}");
}
