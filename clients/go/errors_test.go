package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func rpcErr(t *testing.T, s string) *rpcError {
	var re rpcError
	ok(t, json.Unmarshal([]byte(s), &re))
	return &re
}

// The error answers of protocol/README.md §6, as the server writes them.
func TestErrorsFromTheSpecsExamples(t *testing.T) {
	conflict := fromRPC("session/append", rpcErr(t, `{"code":-31003,"message":"expectedLastSeq 3 does not match lastSeq 5","data":{"expectedLastSeq":3,"lastSeq":5,"kind":"Conflict"}}`))
	var err error = fmt.Errorf("wrapped: %w", conflict)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindConflict || e.Code != -31003 || e.Method != "session/append" {
		t.Fatalf("errors.As: %#v", e)
	}
	d, found := DataOf[ConflictData](err)
	if !found || *d.ExpectedLastSeq != 3 || *d.LastSeq != 5 {
		t.Fatalf("ConflictData: %#v", d)
	}
	if OutcomeOf(err) != OutcomeNotWritten || KindOf(err) != KindConflict {
		t.Errorf("outcome %v kind %v", OutcomeOf(err), KindOf(err))
	}
	if string(e.RawData) != `{"expectedLastSeq":3,"lastSeq":5,"kind":"Conflict"}` {
		t.Errorf("RawData %s", e.RawData)
	}

	uncertain := fromRPC("session/append", rpcErr(t, `{"code":-31008,"message":"append may or may not be durable (EIO); the session is read-only in this process","data":{"errno":"EIO","kind":"Uncertain"}}`))
	if uncertain.Outcome() != OutcomeUncertain || uncertain.Data.(*UncertainData).Errno != "EIO" {
		t.Errorf("Uncertain: %v %#v", uncertain.Outcome(), uncertain.Data)
	}
	for _, nw := range []string{
		`{"code":-31006,"message":"append not written (ENOSPC); nothing changed","data":{"errno":"ENOSPC","kind":"NotWritten"}}`,
		`{"code":-31007,"message":"append failed (ENOSPC) and was rolled back; nothing changed","data":{"errno":"ENOSPC","kind":"RolledBack"}}`,
		`{"code":-31009,"message":"read-only","data":{"reason":"failStop","kind":"ReadOnly"}}`,
		`{"code":-32800,"message":"Request cancelled","data":{"kind":"RequestCancelled"}}`,
		`{"code":-31016,"message":"x","data":{"kind":"Unavailable","reason":"connect","retryable":true,"retryAfterMs":500,"outcome":"notWritten"}}`,
	} {
		if e := fromRPC("m", rpcErr(t, nw)); e.Outcome() != OutcomeNotWritten {
			t.Errorf("%s: %v", nw, e.Outcome())
		}
	}
	unknownOutcome := fromRPC("m", rpcErr(t, `{"code":-31016,"message":"x","data":{"kind":"Unavailable","reason":"connectionLost","retryable":true,"outcome":"unknown"}}`))
	if unknownOutcome.Outcome() != OutcomeUncertain {
		t.Errorf("Unavailable outcome unknown: %v", unknownOutcome.Outcome())
	}

	internal := fromRPC("m", rpcErr(t, `{"code":-32603,"message":"internal error (reference 3d5f51e8; see the server's stderr)","data":{"kind":"Internal","ref":"3d5f51e8"}}`))
	if internal.Kind != KindInternalError || internal.Data.(*InternalErrorData).Ref != "3d5f51e8" || internal.Outcome() != OutcomeUncertain {
		t.Errorf("internal: %#v", internal)
	}
	invalid := fromRPC("m", rpcErr(t, `{"code":-32602,"message":"Invalid params: limit: Too small","data":{"kind":"InvalidParams","issues":[{"path":"limit","message":"Too small: expected number to be >=1"},{"path":"","message":"unrecognized member: color"}]}}`))
	if ip := invalid.Data.(*InvalidParamsErrorData); len(ip.Issues) != 2 || ip.Issues[1].Message != "unrecognized member: color" {
		t.Errorf("invalid params: %#v", invalid.Data)
	}
	locked := fromRPC("m", rpcErr(t, `{"code":-31014,"message":"locked","data":{"sessionId":"S","holder":{"pid":42,"hostname":"h","startedAt":"2026-01-01T00:00:00.000Z"},"kind":"SessionLocked"}}`))
	if h := locked.Data.(*SessionLockedData).Holder; h == nil || h.PID != 42 {
		t.Errorf("holder: %#v", locked.Data)
	}
	version := fromRPC("initialize", rpcErr(t, `{"code":-31011,"message":"unsupported protocol version 2","data":{"kind":"UnsupportedProtocolVersion","supported":[1],"requested":2}}`))
	if v := version.Data.(*UnsupportedProtocolVersionData); len(v.Supported) != 1 || string(v.Requested) != "2" {
		t.Errorf("version: %#v", version.Data)
	}
	plain := fromRPC("m", rpcErr(t, `{"code":-32601,"message":"Method not found: \"session/teleport\""}`))
	if plain.Kind != KindMethodNotFound || plain.Data != nil || plain.Outcome() != OutcomeNotWritten {
		t.Errorf("method not found: %#v", plain)
	}
	// A kind this package does not know: its raw data, and the worst outcome assumed.
	future := fromRPC("m", rpcErr(t, `{"code":-31099,"message":"new","data":{"kind":"FromTheFuture","x":1}}`))
	if future.Kind != "FromTheFuture" || string(future.Data.(json.RawMessage)) != `{"kind":"FromTheFuture","x":1}` || future.Outcome() != OutcomeUncertain {
		t.Errorf("future: %#v", future)
	}
}

func TestClientErrorsOutcomes(t *testing.T) {
	cancelled := &Error{Kind: KindRequestCancelled, Err: context.Canceled}
	if !errors.Is(cancelled, context.Canceled) || cancelled.Outcome() != OutcomeNotWritten {
		t.Errorf("cancelled: %v", cancelled.Outcome())
	}
	for kind, want := range map[ErrorKind]Outcome{
		KindExited: OutcomeUncertain, KindAbandoned: OutcomeUncertain, KindConnectionClosed: OutcomeNotWritten,
		KindEncoding: OutcomeNotWritten, KindDecoding: OutcomeWritten,
	} {
		if got := (&Error{Kind: kind}).Outcome(); got != want {
			t.Errorf("%s: %v, want %v", kind, got, want)
		}
	}
	if OutcomeOf(nil) != OutcomeWritten || OutcomeOf(errors.New("x")) != OutcomeUncertain {
		t.Errorf("OutcomeOf")
	}
}
