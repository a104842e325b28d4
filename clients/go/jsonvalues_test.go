package sidecar

import (
	"encoding/json"
	"testing"
)

func TestRecordsEncodeWithTheirKindFirst(t *testing.T) {
	b, err := encodeJSON(Records{
		userMessage("a<b>&c"),
		event("t", `{"z":1,"a":2}`),
		ToolStreamRecord{ToolSeq: 2, Stream: StreamNameStderr, DataBase64: Ptr("AAE=")},
	})
	ok(t, err)
	want := `[{"kind":"message","message":{"role":"user","content":"a<b>&c"}},{"kind":"event","type":"t","payload":{"z":1,"a":2}},{"kind":"toolStream","toolSeq":2,"stream":"stderr","dataBase64":"AAE="}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// Optional members: nil is absent, a zero value is sent; an empty non-nil slice is [].
	b, err = encodeJSON(SessionUpdateParams{SessionID: "s", Title: Ptr(""), Tags: []string{}})
	ok(t, err)
	if string(b) != `{"sessionId":"s","title":"","tags":[]}` {
		t.Errorf("optional members: %s", b)
	}
}

func TestOpenObjectsKeepUnknownMembers(t *testing.T) {
	in := `{"role":"assistant","content":"x","toolCalls":[{"id":"1","name":"n","arguments":"{}","index":0}],"providerMeta":{"a":[1,2]},"zeta":null}`
	var m ChatMessage
	ok(t, json.Unmarshal([]byte(in), &m))
	if string(m.Extra["providerMeta"]) != `{"a":[1,2]}` || string(m.Extra["zeta"]) != "null" || string(m.ToolCalls[0].Extra["index"]) != "0" {
		t.Fatalf("extra: %v %v", m.Extra, m.ToolCalls[0].Extra)
	}
	out, err := encodeJSON(m)
	ok(t, err)
	if !sameJSON(t, out, []byte(in)) {
		t.Errorf("round trip: %s", out)
	}
	// A named member wins over an Extra of the same name.
	m.Extra["role"] = json.RawMessage(`"system"`)
	out, err = encodeJSON(m)
	ok(t, err)
	var back ChatMessage
	ok(t, json.Unmarshal(out, &back))
	if back.Role != "assistant" {
		t.Errorf("role %q", back.Role)
	}
}

func TestStoredRecordsDecodeByKind(t *testing.T) {
	in := `[{"seq":1,"ts":"t1","kind":"message","message":{"role":"user","content":"hi"}},` +
		`{"seq":2,"ts":"t2","kind":"toolStream","toolSeq":1,"stream":"stdout","text":{"$blob":"sha256:` + sha0 + `","bytes":300000}},` +
		`{"seq":3,"ts":"t3","kind":"fromTheFuture","x":[1]}]`
	var recs StoredRecords
	ok(t, json.Unmarshal([]byte(in), &recs))
	if m, isMsg := recs[0].(StoredMessageRecord); !isMsg || m.Seq != 1 || m.Message.Role != "user" {
		t.Errorf("message: %#v", recs[0])
	}
	if s := recs[1].(StoredToolStreamRecord); s.Text.Blob == nil || s.Text.Blob.Bytes != 300000 || s.Text.String() != "sha256:"+sha0 {
		t.Errorf("blob text: %#v", s.Text)
	}
	u, isUnknown := recs[2].(UnknownStoredRecord)
	if !isUnknown || u.Kind != "fromTheFuture" || u.GetSeq() != 3 || u.GetTs() != "t3" {
		t.Fatalf("unknown: %#v", recs[2])
	}
	out, err := encodeJSON(u)
	ok(t, err)
	if string(out) != `{"seq":3,"ts":"t3","kind":"fromTheFuture","x":[1]}` {
		t.Errorf("unknown round trip: %s", out)
	}
	if _, err := encodeJSON(UnknownRecord{Kind: "x"}); err == nil {
		t.Errorf("an unknown record built in Go was encoded")
	}
	var wrong StoredMessageRecord
	if err := json.Unmarshal([]byte(`{"seq":1,"ts":"t","kind":"event","type":"x","payload":1}`), &wrong); err == nil {
		t.Errorf("an event decoded as a message")
	}
}

const sha0 = "0000000000000000000000000000000000000000000000000000000000000000"
