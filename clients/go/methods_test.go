package sidecar

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every method of protocol v1 a client sends, through its typed function, against the built
// sidecar, in both framings; the test fails if one of meta.json's methods was not sent.
func TestEveryMethod(t *testing.T) {
	forEachFraming(t, testEveryMethod)
}

func testEveryMethod(t *testing.T, framing Framing) {
	tr := traceAll(t)
	ctx := testCtx(t)
	store := newStore(t)
	c := start(t, framing, store)

	// initialize (Start): the server, its capabilities and the store.
	srv := c.Server()
	if srv.ProtocolVersion != 1 || srv.ServerInfo.Name != "session-sidecar" || srv.Store.Backend != StoreBackendFile {
		t.Fatalf("initialize: %+v", srv)
	}
	if root, _ := filepath.EvalSymlinks(store); srv.Store.Root != root && srv.Store.Root != store {
		t.Errorf("store.root %q, want %q", srv.Store.Root, store)
	}
	if !slices.Contains(srv.Capabilities.Framings, framing) {
		t.Errorf("framings %v", srv.Capabilities.Framings)
	}

	// session/create
	created, err := c.SessionCreate(ctx, SessionCreateParams{
		Title: Ptr("Fix the build"), Cwd: Ptr("/work/project"), SystemPrompt: Ptr("You are terse."),
		LLM:      &LLMConfig{Provider: Ptr("openai"), Model: Ptr("gpt-4o")},
		Metadata: map[string]json.RawMessage{"agent": MustJSON("go-test")},
		Tags:     []string{"ci"},
	})
	ok(t, err)
	sid := created.SessionID
	if sid == "" || created.CreatedAt == "" {
		t.Fatalf("create: %+v", created)
	}

	// session/append: every kind a client appends, in one batch. The event payload's bytes
	// (member order, raw non-ASCII and HTML characters) come back exactly.
	payload := `{"z":1,"a":"<b>&é ☃","n":[true,null,{}],"m":{"y":"x"}}`
	batch := Records{
		userMessage("The build fails."),
		MessageRecord{Message: ChatMessage{Role: "assistant", Content: json.RawMessage(`null`),
			ToolCalls: []ToolCall{{ID: "call_1", Name: "bash", Arguments: Text(`{"cmd":"make"}`)}},
			Extra:     map[string]json.RawMessage{"providerMeta": json.RawMessage(`{"cacheHit":true}`)}}},
		event("tool.started", payload),
		APIRecord{Direction: APIDirectionRequest, Payload: json.RawMessage(`{"model":"gpt-4o","messages":[]}`)},
		APIRecord{Direction: APIDirectionResponse, Payload: json.RawMessage(`{"model":"gpt-4o","usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)},
		ToolStartRecord{RequestID: "req-1", Tool: "bash", ToolUseID: Ptr("call_1")},
		ToolStreamRecord{ToolSeq: 1, Stream: StreamNameStdout, Text: Ptr("ok\n")},
		ToolFinishRecord{ToolSeq: 1, RequestID: "req-1", Success: true, ExitCode: Ptr(int64(0))},
		MessageRecord{Message: ChatMessage{Role: "tool", ToolCallID: Ptr("call_1"), Content: MustJSON("ok")}},
		InterruptionRecord{Reason: "user cancelled", Phase: "providerStream", AssistantText: Ptr(Text("The error"))},
	}
	app, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: batch, ExpectedLastSeq: Ptr(int64(0))})
	ok(t, err)
	if app.FirstSeq != 1 || app.LastSeq != int64(len(batch)) {
		t.Fatalf("append: %+v", app)
	}

	// session/read: typed records, in order.
	read, err := c.SessionRead(ctx, SessionReadParams{SessionID: sid})
	ok(t, err)
	if len(read.Records) != len(batch) || read.NextAfterSeq != nil || read.LastSeq != app.LastSeq {
		t.Fatalf("read: %d records, next %v", len(read.Records), read.NextAfterSeq)
	}
	for i, r := range read.Records {
		if r.GetSeq() != int64(i+1) || r.GetTs() == "" || r.StoredRecordKind() != batch[i].RecordKind() {
			t.Errorf("record %d: seq %d kind %s", i, r.GetSeq(), r.StoredRecordKind())
		}
	}
	if m := read.Records[0].(StoredMessageRecord); m.Message.Role != "user" || string(m.Message.Content) != `"The build fails."` {
		t.Errorf("message: %+v", m.Message)
	}
	if m := read.Records[1].(StoredMessageRecord); string(m.Message.Extra["providerMeta"]) != `{"cacheHit":true}` ||
		m.Message.ToolCalls[0].Arguments.Text != `{"cmd":"make"}` {
		t.Errorf("provider members and tool calls: %+v", m.Message)
	}
	if e := read.Records[2].(StoredEventRecord); string(e.Payload) != payload || e.Type != "tool.started" {
		t.Errorf("event payload %s, sent %s", e.Payload, payload)
	}
	if !bytes.Contains(read.Records[2].Raw(), []byte(payload)) {
		t.Errorf("raw record %s", read.Records[2].Raw())
	}
	if a := read.Records[4].(StoredAPIRecord); a.APISeq != 1 || a.Direction != APIDirectionResponse {
		t.Errorf("api: %+v", a)
	}
	if s := read.Records[6].(StoredToolStreamRecord); s.Text == nil || s.Text.Text != "ok\n" {
		t.Errorf("tool stream: %+v", s)
	}
	if in := read.Records[9].(StoredInterruptionRecord); in.AssistantText.Text != "The error" {
		t.Errorf("interruption: %+v", in)
	}

	// session/open in read mode answers "write": this connection has it open for writing.
	opened, err := c.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid), Mode: Ptr(OpenModeRead)})
	ok(t, err)
	if opened.Mode != OpenModeWrite || opened.LastSeq != app.LastSeq || *opened.Title != "Fix the build" || opened.Turn != nil {
		t.Errorf("open: %+v", opened)
	}

	// session/update, session/list, session/search
	upd, err := c.SessionUpdate(ctx, SessionUpdateParams{SessionID: sid, Title: Ptr("Fix CI"),
		Metadata: map[string]json.RawMessage{"ticket": MustJSON("OPS-7"), "agent": json.RawMessage("null")}, Tags: []string{"ci", "team:infra"}})
	ok(t, err)
	if *upd.Title != "Fix CI" || upd.Seq != app.LastSeq+1 || len(upd.Metadata) != 1 || !slices.Equal(upd.Tags, []string{"ci", "team:infra"}) {
		t.Errorf("update: %+v", upd)
	}
	list, err := c.SessionList(ctx, SessionListParams{Tags: []string{"team:infra"}})
	ok(t, err)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || *list.Sessions[0].Title != "Fix CI" {
		t.Errorf("list: %+v", list)
	}
	search, err := c.SessionSearch(ctx, SessionSearchParams{Query: "BUILD FAILS"})
	ok(t, err)
	if len(search.Hits) != 1 || search.Hits[0].Seq != 1 || search.Hits[0].SessionID != sid {
		t.Errorf("search: %+v", search)
	}

	// session/usage: the OpenAI usage of the api response.
	usage, err := c.SessionUsage(ctx, SessionUsageParams{SessionID: sid})
	ok(t, err)
	if usage.Total.Input != 10 || usage.Total.Output != 5 || usage.Total.Total != 15 || usage.Total.Requests != 1 || usage.ByModel["gpt-4o"].Total != 15 {
		t.Errorf("usage: %+v", usage)
	}

	// turn/*
	turn, err := c.TurnStart(ctx, TurnStartParams{SessionID: sid, Kind: TurnKindUser})
	ok(t, err)
	ok(t, c.TurnSetPhase(ctx, TurnSetPhaseParams{SessionID: sid, TurnID: turn.TurnID, Phase: TurnPhaseProviderStream}))
	ok(t, c.TurnFail(ctx, TurnFailParams{SessionID: sid, TurnID: turn.TurnID, Error: "rate limited"}))
	got, err := c.TurnGet(ctx, TurnGetParams{SessionID: sid})
	ok(t, err)
	if got.Turn == nil || got.Turn.Status != TurnStatusRetryable || got.Turn.TurnID != turn.TurnID {
		t.Errorf("turn after fail: %+v", got.Turn)
	}
	ok(t, c.TurnResume(ctx, TurnResumeParams{SessionID: sid, TurnID: turn.TurnID}))
	ok(t, c.TurnFinish(ctx, TurnFinishParams{SessionID: sid, TurnID: turn.TurnID, Outcome: TurnOutcomeCompleted}))
	got, err = c.TurnGet(ctx, TurnGetParams{SessionID: sid})
	ok(t, err)
	if got.Turn.Status != TurnStatusCompleted || got.Turn.LastSeq == nil {
		t.Errorf("turn after finish: %+v", got.Turn)
	}

	// session/context: the system prompt first, then the conversation.
	cx, err := c.SessionContext(ctx, SessionContextParams{SessionID: sid})
	ok(t, err)
	if len(cx.Messages) < 3 || cx.Messages[0].Role != "system" || string(cx.Messages[0].Content) != `"You are terse."` || cx.Messages[1].Role != "user" {
		t.Errorf("context: %+v", cx.Messages)
	}

	// tool/allocateScratch: a real private directory.
	scratch, err := c.ToolAllocateScratch(ctx, ToolAllocateScratchParams{SessionID: sid, RequestID: "req-2", KeepScratch: Ptr(KeepScratchAlways)})
	ok(t, err)
	if fi, err := os.Stat(scratch.TmpDir); err != nil || !fi.IsDir() || scratch.ToolSeq != 2 {
		t.Errorf("scratch: %+v %v", scratch, err)
	}

	// state/set, state/get, state/delete
	_, err = c.StateSet(ctx, StateSetParams{SessionID: sid, Key: "bashState", Value: MustJSON(map[string]any{"cwd": "/work", "env": map[string]string{"PAGER": "cat"}})})
	ok(t, err)
	val, err := c.StateGet(ctx, StateGetParams{SessionID: sid, Key: "bashState"})
	ok(t, err)
	if !sameJSON(t, val.Value, []byte(`{"cwd":"/work","env":{"PAGER":"cat"}}`)) {
		t.Errorf("state/get: %s", val.Value)
	}
	del, err := c.StateDelete(ctx, StateDeleteParams{SessionID: sid, Key: "bashState"})
	ok(t, err)
	val, err = c.StateGet(ctx, StateGetParams{SessionID: sid, Key: "bashState"})
	ok(t, err)
	if !del.Deleted || string(val.Value) != "null" {
		t.Errorf("state/delete: %v, then %s", del.Deleted, val.Value)
	}

	// blob/get: tool-call arguments past the session's blobThreshold (a BlobRef position,
	// protocol §15.4; the default threshold, 256 KiB) are stored as a blob and read back byte for byte.
	content := "hello, blob world: é " + strings.Repeat("x", 300_000)
	ba, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{
		MessageRecord{Message: ChatMessage{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "write", Arguments: Text(content)}}}},
	}})
	ok(t, err)
	br, err := c.SessionRead(ctx, SessionReadParams{SessionID: sid, AfterSeq: Ptr(ba.FirstSeq - 1), Kinds: []string{"message"}})
	ok(t, err)
	var stored struct{ Img BlobRef }
	if ref := br.Records[0].(StoredMessageRecord).Message.ToolCalls[0].Arguments.Blob; ref != nil {
		stored.Img = *ref
	}
	if stored.Img.Bytes != int64(len(content)) || stored.Img.MediaType != nil {
		t.Fatalf("blob ref: %+v", stored.Img)
	}
	chunk, err := c.BlobGet(ctx, BlobGetParams{SessionID: sid, Ref: stored.Img.Blob, Length: Ptr(int64(5))})
	ok(t, err)
	if chunk.Eof || chunk.Bytes != int64(len(content)) || chunk.DataBase64 != "aGVsbG8=" {
		t.Errorf("blob/get chunk: %+v", chunk)
	}
	whole, err := c.ReadBlob(ctx, sid, stored.Img.Blob, 65536) // several chunks
	ok(t, err)
	if string(whole) != content {
		t.Errorf("ReadBlob: %q", whole)
	}

	// session/subscribe: the stored records, then session/unsubscribe.
	sub, err := c.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid})
	ok(t, err)
	var seen int64
	for seen < sub.LastSeq {
		n := nextNotification(t, c)
		if n.SessionDidAppend == nil {
			continue // turn/didChange follows the batches holding turn records
		}
		for _, r := range n.SessionDidAppend.Records {
			if r.GetSeq() != seen+1 {
				t.Fatalf("didAppend seq %d after %d", r.GetSeq(), seen)
			}
			seen = r.GetSeq()
		}
	}
	ok(t, c.SessionUnsubscribe(ctx, SessionUnsubscribeParams{SessionID: sid}))

	// session/rewind: back to the first user message.
	if c.Capabilities().Session.Rewind == nil || !*c.Capabilities().Session.Rewind {
		t.Fatalf("capabilities.session.rewind is not advertised")
	}
	last := ba.LastSeq
	rw, err := c.SessionRewind(ctx, SessionRewindParams{SessionID: sid, ToSeq: 1, ExpectedLastSeq: Ptr(last)})
	ok(t, err)
	if rw.Seq != last+1 || rw.ToSeq != 1 {
		t.Errorf("rewind: %+v", rw)
	}
	cx, err = c.SessionContext(ctx, SessionContextParams{SessionID: sid})
	ok(t, err)
	if len(cx.Messages) != 2 || cx.Messages[1].Role != "user" {
		t.Errorf("context after rewind: %+v", cx.Messages)
	}

	// session/compact, session/history, session/read of the archived generation.
	cp, err := c.SessionCompact(ctx, SessionCompactParams{SessionID: sid, Summary: "The user reported a failing build.", ThroughSeq: 1})
	ok(t, err)
	if cp.Generation != 1 || cp.CheckpointSeq != 1 || cp.Archived.Generation != 0 {
		t.Errorf("compact: %+v", cp)
	}
	hist, err := c.SessionHistory(ctx, SessionHistoryParams{SessionID: sid})
	ok(t, err)
	if len(hist.Generations) != 1 || hist.Generations[0].ThroughSeq != 1 {
		t.Errorf("history: %+v", hist)
	}
	active, err := c.ReadAll(ctx, SessionReadParams{SessionID: sid})
	ok(t, err)
	if cpr, isCp := active[0].(StoredCheckpointRecord); !isCp || cpr.Seq != 1 || cpr.Summary != "The user reported a failing build." {
		t.Errorf("the active journal starts with %T %+v", active[0], active[0])
	}
	archived, err := c.ReadAll(ctx, SessionReadParams{SessionID: sid, Generation: Ptr(int64(0))})
	ok(t, err)
	if len(archived) != int(rw.Seq) || string(archived[2].(StoredEventRecord).Payload) != payload {
		t.Errorf("archived generation: %d records", len(archived))
	}

	// session/fork, session/close, session/delete, session/restore
	fork, err := c.SessionFork(ctx, SessionForkParams{SessionID: sid, AtSeq: Ptr(int64(5))})
	ok(t, err)
	fopen, err := c.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(fork.SessionID)})
	ok(t, err)
	if fopen.Parent == nil || fopen.Parent.SessionID != sid || fopen.Parent.Relation != ParentRelationFork || fopen.LastSeq != 5 {
		t.Errorf("fork: %+v", fopen)
	}
	ok(t, c.SessionClose(ctx, SessionCloseParams{SessionID: fork.SessionID}))
	ok(t, c.SessionDelete(ctx, SessionDeleteParams{SessionID: fork.SessionID}))
	if ids := listIDs(t, c, SessionListParams{}); slices.Contains(ids, fork.SessionID) || !slices.Contains(listIDs(t, c, SessionListParams{IncludeDeleted: Ptr(true)}), fork.SessionID) {
		t.Errorf("after delete: %v", ids)
	}
	ok(t, c.SessionRestore(ctx, SessionRestoreParams{SessionID: fork.SessionID}))
	if ids := listIDs(t, c, SessionListParams{}); !slices.Contains(ids, fork.SessionID) {
		t.Errorf("after restore: %v", ids)
	}

	// session/prune, dry run: both sessions are older than 0s; nothing moves.
	pr, err := c.SessionPrune(ctx, SessionPruneParams{OlderThan: "0s", DryRun: Ptr(true)})
	ok(t, err)
	if !pr.DryRun || len(pr.Sessions)+len(pr.Skipped) != 2 {
		t.Errorf("prune: %+v", pr)
	}
	if len(listIDs(t, c, SessionListParams{})) != 2 {
		t.Errorf("a dry run moved sessions")
	}

	ok(t, c.SessionClose(ctx, SessionCloseParams{SessionID: sid}))
	// shutdown and exit (Close): exit code 0.
	ok(t, c.Close())
	if c.ExitCode() != 0 {
		t.Errorf("exit code %d", c.ExitCode())
	}
	var missing []string
	sent := tr.methods()
	for _, m := range Methods {
		if m.Direction == "clientToServer" && !slices.Contains(sent, m.Method) {
			missing = append(missing, m.Method)
		}
	}
	if len(missing) > 0 {
		t.Errorf("methods of meta.json never sent: %v", missing)
	}
}

func listIDs(t *testing.T, c *Client, p SessionListParams) []string {
	var ids []string
	for s, err := range c.ListSessions(testCtx(t), p) {
		ok(t, err)
		ids = append(ids, s.SessionID)
	}
	return ids
}
