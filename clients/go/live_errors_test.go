package sidecar

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The server's error answers arrive as *Error values with their kind's data, usable with
// errors.As, and with the outcome the protocol documents.
func TestTypedErrorsFromTheServer(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		c := start(t, framing, newStore(t))
		secret := "s3cr3t-value-0123456789"
		sid := mustCreate(t, c, SessionCreateParams{Secrets: &SecretsParam{Values: []string{secret}}})
		_, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage("one")}})
		ok(t, err)

		expect := func(err error, kind ErrorKind, outcome Outcome) *Error {
			t.Helper()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want a %s *Error, got %v", kind, err)
			}
			if e.Kind != kind || e.Code != kind.Code() || e.Outcome() != outcome {
				t.Fatalf("want %s (%d, %v), got %s (%d, %v): %v", kind, kind.Code(), outcome, e.Kind, e.Code, e.Outcome(), e)
			}
			return e
		}

		// Conflict: a stale expectedLastSeq, with both seqs in its data; nothing written.
		_, err = c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, ExpectedLastSeq: Ptr(int64(7)), Records: Records{userMessage("two")}})
		expect(err, KindConflict, OutcomeNotWritten)
		if d, found := DataOf[ConflictData](err); !found || *d.ExpectedLastSeq != 7 || *d.LastSeq != 1 {
			t.Errorf("conflict data: %+v", d)
		}

		// SecretRejected: where, never the value; nothing written.
		_, err = c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("x", `{"token":"`+secret+`"}`)}})
		e := expect(err, KindSecretRejected, OutcomeNotWritten)
		if d := e.Data.(*SecretRejectedData); d.Path != "records[0].payload.token" || d.Rule != "raw" || strings.Contains(e.Error(), secret) || strings.Contains(string(e.RawData), secret) {
			t.Errorf("secret rejected: %+v %v", d, e)
		}

		// SessionNotFound and InvalidSessionId.
		_, err = c.SessionRead(ctx, SessionReadParams{SessionID: "01ZZZZZZZZZZZZZZZZZZZZZZZZ"})
		if d := expect(err, KindSessionNotFound, OutcomeNotWritten).Data.(*SessionNotFoundData); d.SessionID != "01ZZZZZZZZZZZZZZZZZZZZZZZZ" {
			t.Errorf("not found: %+v", d)
		}
		_, err = c.SessionRead(ctx, SessionReadParams{SessionID: "../etc"})
		expect(err, KindInvalidSessionID, OutcomeNotWritten)

		// ReadOnly: a closed session, with its reason.
		ok(t, c.SessionClose(ctx, SessionCloseParams{SessionID: sid}))
		_, err = c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage("three")}})
		if d := expect(err, KindReadOnly, OutcomeNotWritten).Data.(*ReadOnlyData); d.Reason != "notOpen" || d.SessionID != sid {
			t.Errorf("read only: %+v", d)
		}
		_, err = c.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid)})
		ok(t, err)

		// InvalidTurnTransition: finishing a turn that is not the pending one.
		err = c.TurnFinish(ctx, TurnFinishParams{SessionID: sid, TurnID: "01NOTATURN0000000000000000", Outcome: TurnOutcomeCompleted})
		expect(err, KindInvalidTurnTransition, OutcomeNotWritten)

		// InvalidParams: the issues, never the values.
		_, err = c.SessionRead(ctx, SessionReadParams{SessionID: sid, Limit: Ptr(int64(0))})
		if d := expect(err, KindInvalidParams, OutcomeNotWritten).Data.(*InvalidParamsErrorData); len(d.Issues) != 1 || d.Issues[0].Path != "limit" {
			t.Errorf("invalid params: %+v", d)
		}
		// Through Call: an unknown method, and a second initialize.
		err = c.Call(ctx, "session/teleport", map[string]string{}, nil)
		expect(err, KindMethodNotFound, OutcomeNotWritten)
		_, err = c.Initialize(ctx, InitializeParams{ProtocolVersion: Ptr(int64(1))})
		expect(err, KindInvalidRequest, OutcomeNotWritten)

		// Params that are not JSON are never sent.
		err = c.Call(ctx, "session/read", map[string]any{"x": func() {}}, nil)
		expect(err, KindEncoding, OutcomeNotWritten)
		// A result that does not fit the Go type: the request did take effect.
		var wrong struct {
			Records string `json:"records"`
		}
		err = c.Call(ctx, "session/read", SessionReadParams{SessionID: sid}, &wrong)
		expect(err, KindDecoding, OutcomeWritten)

		// RequestCancelled: a request and its $/cancelRequest written in one go (protocol
		// §3.4) is never run; the answer carries -32800.
		c.afterFrame = func(id int64) []byte {
			b, _, _ := encodeMessage(nil, "$/cancelRequest", map[string]int64{"id": id})
			return frame(framing, b)
		}
		_, err = c.SessionRead(ctx, SessionReadParams{SessionID: sid})
		c.afterFrame = nil
		expect(err, KindRequestCancelled, OutcomeNotWritten)

		// A context that ended before the call: nothing is sent.
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = c.SessionAppend(done, SessionAppendParams{SessionID: sid, Records: Records{userMessage("never")}})
		if KindOf(err) != KindRequestCancelled || OutcomeOf(err) != OutcomeNotWritten || !errors.Is(err, context.Canceled) {
			t.Errorf("a call with an ended context: %v", err)
		}
		if e, _ := err.(*Error); e.Code != 0 {
			t.Errorf("the client's own refusal has code %d", e.Code)
		}
		read, err := c.SessionRead(ctx, SessionReadParams{SessionID: sid})
		ok(t, err)
		if read.LastSeq != 1 {
			t.Errorf("refused requests wrote something: lastSeq %d", read.LastSeq)
		}
	})
}

// A protocol version the server does not speak: Start fails with UnsupportedProtocolVersion
// and its data, and the sidecar it spawned is gone.
func TestUnsupportedProtocolVersion(t *testing.T) {
	var spawned *Client
	startHook = func(c *Client) { c.protocolVersion, spawned = 2, c }
	t.Cleanup(func() { startHook = nil })
	_, err := Start(testCtx(t), Options{Command: sidecarCommand(t), Store: newStore(t)})
	d, found := DataOf[UnsupportedProtocolVersionData](err)
	if !found || KindOf(err) != KindUnsupportedProtocolVersion || len(d.Supported) != 1 || d.Supported[0] != 1 || string(d.Requested) != "2" {
		t.Fatalf("Start: %v (%+v)", err, d)
	}
	<-spawned.Done()
}

func mustCreate(t *testing.T, c *Client, p SessionCreateParams) string {
	t.Helper()
	r, err := c.SessionCreate(testCtx(t), p)
	ok(t, err)
	return r.SessionID
}
