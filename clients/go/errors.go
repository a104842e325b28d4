package sidecar

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The client's own kinds: what went wrong on this side of the pipe. Their Code is 0.
const (
	// KindConnectionClosed: the request was not sent, because the client is closed or the
	// sidecar had already ended (or writing to it failed). Nothing was written.
	KindConnectionClosed ErrorKind = "ConnectionClosed"
	// KindExited: the request was sent, and the sidecar ended (or its output became
	// unreadable) before answering it. It may or may not have taken effect.
	KindExited ErrorKind = "Exited"
	// KindAbandoned: the context ended, $/cancelRequest was sent, and no answer came within
	// Options.CancelWait. It may or may not take effect.
	KindAbandoned ErrorKind = "Abandoned"
	// KindEncoding: the params could not be encoded as JSON; nothing was sent.
	KindEncoding ErrorKind = "Encoding"
	// KindDecoding: the request succeeded, but its result could not be decoded into the Go type.
	KindDecoding ErrorKind = "Decoding"
)

// Outcome says what a failed request left in the store.
type Outcome int

const (
	// OutcomeNotWritten: nothing of the request was written; it can be retried as it is.
	OutcomeNotWritten Outcome = iota + 1
	// OutcomeUncertain: the request may or may not have been written (protocol §6.3
	// Uncertain, an internal error, the sidecar's death before the answer, an abandoned
	// request). Before retrying a write, start a sidecar (a new one after Uncertain: the
	// session is fail-stopped in this one), open the session for writing and read from the
	// last seq you know was acknowledged.
	OutcomeUncertain
	// OutcomeWritten: the request took effect (also: its result could not be decoded).
	OutcomeWritten
)

func (o Outcome) String() string {
	switch o {
	case OutcomeNotWritten:
		return "NotWritten"
	case OutcomeUncertain:
		return "Uncertain"
	case OutcomeWritten:
		return "Written"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Error is every error a Client returns for a request: the server's JSON-RPC error answers
// (Code, Message and data as sent) and the client's own failures (Code 0, kinds above).
// Use errors.As(err, &e) with e *sidecar.Error, then switch on e.Kind; e.Data holds the
// decoded data of the kind (*ConflictData for KindConflict, ...; DataOf[T] fetches it).
type Error struct {
	Kind ErrorKind
	// Code is the JSON-RPC error code (domain errors: -31001...); 0 for the client's kinds.
	Code    int
	Message string
	// Method is the method of the request that failed.
	Method string
	// Data is error.data decoded into the kind's data type (see dataTypes): a pointer such as
	// *ConflictData; json.RawMessage for a kind this package does not know or data that did
	// not decode; nil when there was none.
	Data any
	// RawData is error.data exactly as the server sent it.
	RawData json.RawMessage
	// Err is the cause: ctx.Err() for a cancelled request, the I/O or JSON error of the
	// client's own kinds.
	Err error
}

func (e *Error) Error() string {
	where := "sidecar"
	if e.Method != "" {
		where += ": " + e.Method
	}
	code := ""
	if e.Code != 0 {
		code = fmt.Sprintf(" (%d)", e.Code)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("%s: %s%s: %s", where, e.Kind, code, msg)
}

// Unwrap returns the cause (for errors.Is(err, context.Canceled) and the like).
func (e *Error) Unwrap() error { return e.Err }

// Outcome says whether the failed request wrote anything (see Outcome).
func (e *Error) Outcome() Outcome {
	switch e.Kind {
	case KindUncertain, KindInternalError, KindExited, KindAbandoned:
		return OutcomeUncertain
	case KindDecoding:
		return OutcomeWritten
	case KindUnavailable:
		if d, ok := e.Data.(*UnavailableData); ok && d.Outcome == "unknown" {
			return OutcomeUncertain
		}
		return OutcomeNotWritten
	case KindConnectionClosed, KindEncoding:
		return OutcomeNotWritten
	}
	if _, ok := domainCodes[e.Kind]; ok {
		return OutcomeNotWritten
	}
	for _, k := range jsonRPCKinds {
		if k == e.Kind {
			return OutcomeNotWritten
		}
	}
	return OutcomeUncertain // a kind this package does not know: assume the worst
}

// OutcomeOf is the Outcome of err: OutcomeWritten for nil, the Outcome of a *Error, and
// OutcomeUncertain for any other error.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeWritten
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Outcome()
	}
	return OutcomeUncertain
}

// KindOf is the ErrorKind of err, or "" when it is not a *Error.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// DataOf returns the typed data of err when err is a *Error whose Data is a *T:
//
//	if d, ok := sidecar.DataOf[sidecar.ConflictData](err); ok { ... d.LastSeq ... }
func DataOf[T any](err error) (*T, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return nil, false
	}
	d, ok := e.Data.(*T)
	return d, ok
}

// Code returns the JSON-RPC code of a kind of protocol/meta.json, or 0.
func (k ErrorKind) Code() int {
	if c, ok := domainCodes[k]; ok {
		return c
	}
	for c, kk := range jsonRPCKinds {
		if kk == k {
			return c
		}
	}
	return 0
}

// The data of each error kind (protocol §6). Every one also has Kind, data.kind as sent.

type SessionNotFoundData struct {
	Kind      string `json:"kind"`
	SessionID string `json:"sessionId"`
}

type InvalidSessionIDData struct {
	Kind string `json:"kind"`
}

// ConflictData: expectedLastSeq and lastSeq for a stale expectedLastSeq; otherwise Reason
// ("journalChanged", "inTrash", "exists", "turnPending" with TurnID and TurnFirstSeq) and,
// from session/compact, Stage ("preCommit").
type ConflictData struct {
	Kind            string `json:"kind"`
	ExpectedLastSeq *int64 `json:"expectedLastSeq,omitempty"`
	LastSeq         *int64 `json:"lastSeq,omitempty"`
	Reason          string `json:"reason,omitempty"`
	Stage           string `json:"stage,omitempty"`
	SessionID       string `json:"sessionId,omitempty"`
	TurnID          string `json:"turnId,omitempty"`
	TurnFirstSeq    *int64 `json:"turnFirstSeq,omitempty"`
}

// CorruptData: the damaged journal Line (from 1, the header is line 1) and Reason; Seq when
// a read found it; Generation for a missing archive (Reason "archiveMissing"); Ref for a
// missing or damaged blob.
type CorruptData struct {
	Kind       string `json:"kind"`
	Line       *int64 `json:"line,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Seq        *int64 `json:"seq,omitempty"`
	Generation *int64 `json:"generation,omitempty"`
	Ref        string `json:"ref,omitempty"`
	SessionID  string `json:"sessionId,omitempty"`
}

type UnsafeStoreData struct {
	Kind      string `json:"kind"`
	SessionID string `json:"sessionId,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

type NotWrittenData struct {
	Kind  string `json:"kind"`
	Errno string `json:"errno,omitempty"`
}

type RolledBackData struct {
	Kind  string `json:"kind"`
	Errno string `json:"errno,omitempty"`
}

// UncertainData: the session is fail-stopped in this sidecar (see OutcomeUncertain). Stage
// is "postCommit" when a compaction's new journal is in place but not known durable.
type UncertainData struct {
	Kind      string `json:"kind"`
	Errno     string `json:"errno,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Stage     string `json:"stage,omitempty"`
}

// ReadOnlyData: Reason is "notOpen" or "openedReadOnly" (open the session for writing and
// retry), or "failStop" (start a new sidecar).
type ReadOnlyData struct {
	Kind      string `json:"kind"`
	SessionID string `json:"sessionId,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// PayloadTooLargeData: MaxMessageBytes for a message; Index and MaxBytes for a record;
// nothing for a session header.
type PayloadTooLargeData struct {
	Kind            string `json:"kind"`
	MaxMessageBytes *int64 `json:"maxMessageBytes,omitempty"`
	Index           *int64 `json:"index,omitempty"`
	MaxBytes        *int64 `json:"maxBytes,omitempty"`
}

// SecretRejectedData says where (Path) and in which form (Rule) a registered secret was
// found; never the value.
type SecretRejectedData struct {
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
	Rule string `json:"rule,omitempty"`
}

type InvalidTurnTransitionData struct {
	Kind   string     `json:"kind"`
	Turn   *TurnState `json:"turn"`
	Reason string     `json:"reason,omitempty"`
}

// LeaseHolder is the process holding a session's writer lease.
type LeaseHolder struct {
	PID       int64  `json:"pid"`
	Hostname  string `json:"hostname"`
	StartedAt string `json:"startedAt,omitempty"`
}

type SessionLockedData struct {
	Kind      string       `json:"kind"`
	SessionID string       `json:"sessionId,omitempty"`
	Holder    *LeaseHolder `json:"holder,omitempty"`
	Reason    string       `json:"reason,omitempty"`
}

type LeaseLostData struct {
	Kind      string `json:"kind"`
	SessionID string `json:"sessionId,omitempty"`
}

// UnavailableData (PostgreSQL store): Outcome is "notWritten" or "unknown" for writes.
type UnavailableData struct {
	Kind         string `json:"kind"`
	Reason       string `json:"reason,omitempty"`
	Retryable    bool   `json:"retryable"`
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
}

// KeyMismatchData: Reason is "wrongKey", "keyRequired", "notEncrypted" or "rekeyUnfinished".
type KeyMismatchData struct {
	Kind      string `json:"kind"`
	Reason    string `json:"reason,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// InternalErrorData: Ref names the server's stderr line about it.
type InternalErrorData struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref,omitempty"`
}

type RequestCancelledData struct {
	Kind string `json:"kind"`
}

// ExitedData is the Data of KindExited (and of KindConnectionClosed once the sidecar has
// ended): how it ended and the last line it wrote to stderr (the sidecar never writes a
// secret there).
type ExitedData struct {
	// ExitCode is the process's exit code, -1 when a signal ended it or it is not known yet.
	ExitCode int
	Signal   string
	// LastStderrLine is the last line of its stderr (at most 500 bytes).
	LastStderrLine string
	// Cause is why the connection ended on this side: end of output, an unreadable frame.
	Cause string
}

// dataTypes makes the data value of each kind. A test checks that every kind of
// protocol/meta.json is here, except the JSON-RPC ones that have no data.
var dataTypes = map[ErrorKind]func() any{
	KindSessionNotFound:            func() any { return new(SessionNotFoundData) },
	KindInvalidSessionID:           func() any { return new(InvalidSessionIDData) },
	KindConflict:                   func() any { return new(ConflictData) },
	KindCorrupt:                    func() any { return new(CorruptData) },
	KindUnsafeStore:                func() any { return new(UnsafeStoreData) },
	KindNotWritten:                 func() any { return new(NotWrittenData) },
	KindRolledBack:                 func() any { return new(RolledBackData) },
	KindUncertain:                  func() any { return new(UncertainData) },
	KindReadOnly:                   func() any { return new(ReadOnlyData) },
	KindPayloadTooLarge:            func() any { return new(PayloadTooLargeData) },
	KindUnsupportedProtocolVersion: func() any { return new(UnsupportedProtocolVersionData) },
	KindSecretRejected:             func() any { return new(SecretRejectedData) },
	KindInvalidTurnTransition:      func() any { return new(InvalidTurnTransitionData) },
	KindSessionLocked:              func() any { return new(SessionLockedData) },
	KindLeaseLost:                  func() any { return new(LeaseLostData) },
	KindUnavailable:                func() any { return new(UnavailableData) },
	KindKeyMismatch:                func() any { return new(KeyMismatchData) },
	KindOutOfRange:                 func() any { return new(OutOfRangeData) },
	KindInvalidParams:              func() any { return new(InvalidParamsErrorData) },
	KindInternalError:              func() any { return new(InternalErrorData) },
	KindRequestCancelled:           func() any { return new(RequestCancelledData) },
}

// rpcError is error of a JSON-RPC response.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// fromRPC is the *Error of a JSON-RPC error answer to method.
func fromRPC(method string, re *rpcError) *Error {
	e := &Error{Code: re.Code, Message: re.Message, Method: method}
	if len(re.Data) > 0 && string(re.Data) != "null" {
		e.RawData = cloneRaw(re.Data)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if e.RawData != nil {
		_ = json.Unmarshal(e.RawData, &head)
	}
	switch k, isRPC := jsonRPCKinds[re.Code]; {
	case isRPC:
		e.Kind = k // by code: -32603's data.kind is "Internal"
	case head.Kind != "":
		e.Kind = ErrorKind(head.Kind)
	default:
		for kind, code := range domainCodes {
			if code == re.Code {
				e.Kind = kind
			}
		}
		if e.Kind == "" {
			e.Kind = ErrorKind(fmt.Sprintf("Code%d", re.Code))
		}
	}
	if e.RawData != nil {
		e.Data = e.RawData
		if mk, ok := dataTypes[e.Kind]; ok {
			v := mk()
			if json.Unmarshal(e.RawData, v) == nil {
				e.Data = v
			}
		}
	}
	return e
}
