package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is this client's version, sent as clientInfo.version.
const Version = "0.1.0"

// Options configure Start. The zero value runs `session-sidecar serve` from
// $SESSION_SIDECAR_COMMAND or PATH on its default store, in NDJSON framing.
type Options struct {
	// Command is the sidecar's argv prefix, e.g. {"node", "/opt/sidecar/dist/src/cli.js"}.
	// Default: $SESSION_SIDECAR_COMMAND split by SplitCommandLine, else session-sidecar on PATH.
	Command []string
	// Store is passed as --store (a directory, or a postgres:// URL).
	Store string
	// Args are more arguments after `serve --framing F [--store S]` (e.g. "--log-level", "debug").
	Args []string
	// Framing is FramingNDJSON (the default) or FramingLSP; passed as --framing.
	Framing Framing
	// Env is the sidecar's environment (default: this process's). It is also where
	// SESSION_SIDECAR_COMMAND is looked up when set.
	Env []string
	// Dir is the sidecar's working directory (default: this process's).
	Dir string
	// Stderr receives a copy of the sidecar's stderr (its log lines). The client always
	// drains stderr and keeps the last 64 KiB (Client.Stderr).
	Stderr io.Writer
	// ClientInfo is sent in initialize (default: {Name: "session-sidecar-go", Version}).
	ClientInfo *ClientInfo
	// ProcessID is sent in initialize: the sidecar exits when that process is gone. Default:
	// this process's id; Ptr[int64](0) for no watch.
	ProcessID *int64
	// NotificationBuffer is how many notifications wait for the reader of Notifications()
	// (default 1024). See Notifications for what happens when it is full.
	NotificationBuffer int
	// CancelWait is how long a call whose context ended waits, after sending
	// $/cancelRequest, for the server's answer (default 5s): the answer says whether the
	// request ran. Past it the call returns KindAbandoned (OutcomeUncertain). Negative: do
	// not wait.
	CancelWait time.Duration
	// CloseTimeout bounds Close: shutdown, exit, end of stdin and the process's exit; then it
	// is killed (default 10s).
	CloseTimeout time.Duration
	// MaxMessageBytes is the largest message accepted from the sidecar (default 1 GiB).
	MaxMessageBytes int
}

// Client is a connection to one sidecar process. Its methods are safe for concurrent use;
// requests are pipelined (many may be in flight) and matched to their answers by id.
type Client struct {
	opts    Options
	framing Framing
	cmd     *exec.Cmd
	stdin   *os.File

	writeMu sync.Mutex
	nextID  atomic.Int64

	mu      sync.Mutex
	pending map[int64]*call
	dead    *Error // set once the connection ended: what later calls get
	closed  bool   // Close began: no more requests

	server *InitializeResult
	notes  *notifier

	exited     chan struct{} // closed once the process has been waited for
	state      *os.ProcessState
	readerDone chan struct{}
	stderr     *tailBuffer
	stderrDone chan struct{}

	closeOnce sync.Once
	closeErr  error

	protocolVersion int64
	// trace, when set (tests), is called with each method before it is sent.
	trace func(method string)
	// afterFrame, when set (tests), returns bytes written together with a request's frame.
	afterFrame func(id int64) []byte
}

// startHook, when set (tests), sees each Client before its process is spawned.
var startHook func(*Client)

type call struct {
	method string
	ch     chan response
	// onResult runs on the reader goroutine with a successful result, before any later
	// message is handled (the subscription bookkeeping of Notifications).
	onResult func(result json.RawMessage)
}

type response struct {
	result json.RawMessage
	err    *rpcError
	gone   *Error
}

// Start spawns the sidecar, sends initialize and initialized, and returns the client. ctx
// bounds the start only (the process lives until Close).
func Start(ctx context.Context, opts Options) (*Client, error) {
	c, err := spawnClient(opts)
	if err != nil {
		return nil, err
	}
	info := c.opts.ClientInfo
	if info == nil {
		info = &ClientInfo{Name: "session-sidecar-go", Version: Ptr(Version)}
	}
	pid := c.opts.ProcessID
	if pid == nil {
		pid = Ptr(int64(os.Getpid()))
	}
	res, err := c.Initialize(ctx, InitializeParams{ProtocolVersion: Ptr(c.protocolVersion), ClientInfo: info, ProcessID: pid})
	if err == nil {
		err = c.Initialized(ctx)
	}
	if err != nil {
		_ = c.Kill()
		c.notes.stop()
		return nil, err
	}
	c.server = res
	return c, nil
}

// spawnClient is Start without initialize and initialized (the protocol/vectors.json replay
// of vectors_test.go sends them itself, through Call and Notify).
func spawnClient(opts Options) (*Client, error) {
	if opts.Framing == "" {
		opts.Framing = FramingNDJSON
	}
	if opts.Framing != FramingNDJSON && opts.Framing != FramingLSP {
		return nil, fmt.Errorf("sidecar: unknown framing %q", opts.Framing)
	}
	if opts.NotificationBuffer <= 0 {
		opts.NotificationBuffer = 1024
	}
	if opts.CancelWait == 0 {
		opts.CancelWait = 5 * time.Second
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 10 * time.Second
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 1 << 30
	}
	argv, err := resolveCommand(opts.Command, opts.Env)
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), argv[1:]...), "serve", "--framing", string(opts.Framing))
	if opts.Store != "" {
		args = append(args, "--store", opts.Store)
	}
	args = append(args, opts.Args...)

	c := &Client{
		opts: opts, framing: opts.Framing, pending: map[int64]*call{},
		exited: make(chan struct{}), readerDone: make(chan struct{}), stderrDone: make(chan struct{}),
		stderr: &tailBuffer{max: 64 << 10}, notes: newNotifier(opts.NotificationBuffer),
		protocolVersion: ProtocolVersion,
	}
	if startHook != nil {
		startHook(c)
	}
	if err := c.spawn(argv[0], args); err != nil {
		return nil, err
	}
	return c, nil
}

// spawn starts the process with three pipes of our own (so that Wait never waits for a copy).
func (c *Client) spawn(name string, args []string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.Env, cmd.Dir = c.opts.Env, c.opts.Dir
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return &Error{Kind: KindConnectionClosed, Message: "the sidecar could not be started (" + name + ")", Err: err}
	}
	c.cmd, c.stdin = cmd, inW
	go c.drainStderr(errR)
	go func() {
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	go c.readLoop(newFrameReader(outR, c.framing, c.opts.MaxMessageBytes), outR)
	go c.notes.pump()
	return nil
}

// Server is the initialize result: the server's version, capabilities and store.
func (c *Client) Server() *InitializeResult { return c.server }

// Capabilities are the server's capabilities (initialize).
func (c *Client) Capabilities() ServerCapabilities { return c.server.Capabilities }

// PID is the sidecar's process id.
func (c *Client) PID() int { return c.cmd.Process.Pid }

// Stderr is the last 64 KiB the sidecar wrote to stderr.
func (c *Client) Stderr() string { return c.stderr.String() }

// Done is closed when the sidecar process has ended.
func (c *Client) Done() <-chan struct{} { return c.exited }

// ExitCode is the sidecar's exit code once Done is closed (-1: ended by a signal, or still
// running).
func (c *Client) ExitCode() int {
	select {
	case <-c.exited:
		return c.state.ExitCode()
	default:
		return -1
	}
}

// Call sends a request and decodes its result into result (a pointer, or nil to ignore it).
// It is what the typed methods use; use it for methods this package does not know.
//
// Cancellation: when ctx ends before the answer, Call sends $/cancelRequest and waits up to
// Options.CancelWait for the answer. A request the server had not started is answered
// RequestCancelled (an *Error wrapping ctx.Err(), OutcomeNotWritten); one it had started
// runs to completion and Call returns its result as if ctx had not ended (an append that
// was acknowledged is durable: its firstSeq/lastSeq are not lost). No answer within
// CancelWait: KindAbandoned (OutcomeUncertain).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result, c.opts.CancelWait)
}

func (c *Client) call(ctx context.Context, method string, params, result any, cancelWait time.Duration) error {
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindRequestCancelled, Method: method, Message: "not sent: the context ended first", Err: err}
	}
	id := c.nextID.Add(1)
	body, paramsJSON, err := encodeMessage(&id, method, params)
	if err != nil {
		return &Error{Kind: KindEncoding, Method: method, Message: "the params cannot be encoded as JSON", Err: err}
	}
	cl := &call{method: method, ch: make(chan response, 1)}
	switch method {
	case "session/subscribe":
		var p struct {
			SessionID string `json:"sessionId"`
			AfterSeq  int64  `json:"afterSeq"`
		}
		_ = json.Unmarshal(paramsJSON, &p)
		cl.onResult = func(json.RawMessage) { c.notes.subscribed(p.SessionID, p.AfterSeq) }
	case "session/unsubscribe":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(paramsJSON, &p)
		cl.onResult = func(json.RawMessage) { c.notes.unsubscribed(p.SessionID) }
	}
	c.mu.Lock()
	if gone := c.notSent(method); gone != nil {
		c.mu.Unlock()
		return gone
	}
	c.pending[id] = cl
	c.mu.Unlock()
	out := frame(c.framing, body)
	if c.afterFrame != nil {
		out = append(out, c.afterFrame(id)...)
	}
	if c.trace != nil {
		c.trace(method)
	}
	if err := c.write(out); err != nil {
		c.forget(id)
		return &Error{Kind: KindConnectionClosed, Method: method, Message: "writing to the sidecar failed: not sent", Err: err}
	}
	select {
	case r := <-cl.ch:
		return c.finish(method, r, result, nil)
	case <-ctx.Done():
	}
	cancelBody, _, _ := encodeMessage(nil, "$/cancelRequest", map[string]int64{"id": id})
	_ = c.write(frame(c.framing, cancelBody))
	if cancelWait < 0 {
		c.forget(id)
		return &Error{Kind: KindAbandoned, Method: method, Message: "the context ended; $/cancelRequest sent, the answer not awaited", Err: ctx.Err()}
	}
	timer := time.NewTimer(cancelWait)
	defer timer.Stop()
	select {
	case r := <-cl.ch:
		return c.finish(method, r, result, ctx.Err())
	case <-timer.C:
		c.forget(id)
		return &Error{Kind: KindAbandoned, Method: method, Message: fmt.Sprintf("the context ended; no answer %v after $/cancelRequest", cancelWait), Err: ctx.Err()}
	}
}

// notSent is the error of a request that cannot be sent now (c.mu held), or nil.
func (c *Client) notSent(method string) *Error {
	if c.dead != nil {
		e := *c.dead
		e.Kind, e.Method = KindConnectionClosed, method
		e.Message = "not sent: " + c.dead.Message
		return &e
	}
	if c.closed {
		return &Error{Kind: KindConnectionClosed, Method: method, Message: "not sent: the client is closed"}
	}
	return nil
}

func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) finish(method string, r response, result any, ctxErr error) error {
	switch {
	case r.gone != nil:
		e := *r.gone
		e.Method = method
		return &e
	case r.err != nil:
		e := fromRPC(method, r.err)
		if ctxErr != nil && e.Kind == KindRequestCancelled {
			e.Err = ctxErr
		}
		return e
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(r.result, result); err != nil {
		return &Error{Kind: KindDecoding, Method: method, Message: "the result does not decode into " + fmt.Sprintf("%T", result), Err: err, RawData: cloneRaw(r.result)}
	}
	return nil
}

// Notify sends a notification (no answer comes). ctx is checked before sending only.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindRequestCancelled, Method: method, Message: "not sent: the context ended first", Err: err}
	}
	body, _, err := encodeMessage(nil, method, params)
	if err != nil {
		return &Error{Kind: KindEncoding, Method: method, Message: "the params cannot be encoded as JSON", Err: err}
	}
	c.mu.Lock()
	gone := c.notSent(method)
	c.mu.Unlock()
	if gone != nil && method != "exit" {
		return gone
	}
	if c.trace != nil {
		c.trace(method)
	}
	if err := c.write(frame(c.framing, body)); err != nil {
		return &Error{Kind: KindConnectionClosed, Method: method, Message: "writing to the sidecar failed: not sent", Err: err}
	}
	return nil
}

func (c *Client) write(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(b)
	return err
}

// encodeMessage is a request (id set) or notification, jsonrpc/id/method first (protocol
// §2.3: the id stays visible in a message's first bytes). It also returns the params' JSON.
func encodeMessage(id *int64, method string, params any) ([]byte, []byte, error) {
	var p []byte
	if params != nil {
		var err error
		if p, err = encodeJSON(params); err != nil {
			return nil, nil, err
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0",`)
	if id != nil {
		fmt.Fprintf(&b, `"id":%d,`, *id)
	}
	m, _ := encodeJSON(method)
	b.WriteString(`"method":`)
	b.Write(m)
	if p != nil {
		b.WriteString(`,"params":`)
		b.Write(p)
	}
	b.WriteByte('}')
	return b.Bytes(), p, nil
}

// envelope is any message from the server.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

func (c *Client) readLoop(fr *frameReader, out io.Closer) {
	defer close(c.readerDone)
	defer out.Close()
	var cause error
	for {
		body, err := fr.next()
		if err != nil {
			cause = err
			break
		}
		if err := c.dispatch(body); err != nil {
			cause = err
			break
		}
	}
	c.connectionLost(cause)
}

func (c *Client) dispatch(body []byte) error {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("an unreadable message from the sidecar: %w", err)
	}
	if env.Method != nil {
		if len(env.ID) > 0 && string(env.ID) != "null" {
			// The server sends no requests in version 1: refuse one politely.
			reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, env.ID)
			_ = c.write(frame(c.framing, []byte(reply)))
			return nil
		}
		n := Notification{Method: *env.Method, Params: cloneRaw(env.Params)}
		_ = n.decodeParams() // undecodable params: delivered with Params only
		c.notes.push(n)
		return nil
	}
	var id int64
	if err := json.Unmarshal(env.ID, &id); err != nil {
		return nil // id null or foreign: an answer to nothing this client sent
	}
	c.mu.Lock()
	cl := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if cl == nil {
		return nil // abandoned meanwhile
	}
	if env.Error == nil && cl.onResult != nil {
		cl.onResult(env.Result)
	}
	cl.ch <- response{result: env.Result, err: env.Error}
	return nil
}

// connectionLost fails every pending request: the sidecar's output ended or became unreadable.
func (c *Client) connectionLost(cause error) {
	if cause != nil && cause != io.EOF {
		// Unreadable output: nothing more can be matched; make sure the process goes.
		_ = c.cmd.Process.Kill()
	}
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second): // stdout closed by a process still running
	}
	select {
	case <-c.stderrDone:
	case <-time.After(2 * time.Second): // stderr held open by another process
	}
	d := &ExitedData{ExitCode: -1, LastStderrLine: c.stderr.lastLine(500)}
	if cause != nil && cause != io.EOF {
		d.Cause = cause.Error()
	} else {
		d.Cause = "end of the sidecar's output"
	}
	msg := "the sidecar's output ended"
	select {
	case <-c.exited:
		d.ExitCode = c.state.ExitCode()
		if ws, ok := c.state.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
			d.Signal = signalName(c.state)
		}
		msg = "the sidecar exited (" + c.state.String() + ")"
	default:
	}
	if d.Cause != "end of the sidecar's output" {
		msg += ": " + d.Cause
	}
	if d.LastStderrLine != "" {
		msg += ": " + d.LastStderrLine
	}
	gone := &Error{Kind: KindExited, Message: msg, Data: d}
	c.mu.Lock()
	c.dead = gone
	pending := c.pending
	c.pending = map[int64]*call{}
	c.mu.Unlock()
	for _, cl := range pending {
		cl.ch <- response{gone: gone}
	}
	c.notes.end()
}

func signalName(s *os.ProcessState) string {
	str := s.String() // "signal: killed"
	return strings.TrimPrefix(str, "signal: ")
}

func (c *Client) drainStderr(r *os.File) {
	defer close(c.stderrDone)
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.stderr.Write(buf[:n])
			if c.opts.Stderr != nil {
				_, _ = c.opts.Stderr.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// Close ends the sidecar cleanly: shutdown (every in-flight append is finished), exit, end
// of stdin, and waits for the process; if that takes longer than Options.CloseTimeout, it
// is killed. Requests made after Close began fail with KindConnectionClosed. Close returns
// nil when the process exited with code 0, else an *Error of KindExited; later calls
// return the same.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Client) close() error {
	deadline := time.Now().Add(c.opts.CloseTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	c.mu.Lock()
	alive := c.dead == nil
	c.mu.Unlock()
	if alive {
		_ = c.call(ctx, "shutdown", EmptyParams{}, nil, -1)
		_ = c.Notify(ctx, "exit", EmptyParams{})
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	_ = c.stdin.Close()
	killed := false
	select {
	case <-c.exited:
	case <-time.After(time.Until(deadline)):
		killed = true
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	<-c.readerDone
	c.notes.stop()
	if code := c.state.ExitCode(); code == 0 {
		return nil
	}
	d := &ExitedData{ExitCode: c.state.ExitCode(), LastStderrLine: c.stderr.lastLine(500), Cause: "close"}
	msg := "the sidecar exited (" + c.state.String() + ")"
	if killed {
		d.Cause = "killed after CloseTimeout"
		msg = fmt.Sprintf("the sidecar did not exit within %v and was killed", c.opts.CloseTimeout)
	}
	if d.ExitCode < 0 {
		d.Signal = signalName(c.state)
	}
	return &Error{Kind: KindExited, Message: msg, Data: d}
}

// Kill ends the sidecar with SIGKILL at once (for crash tests) and waits for it. Requests
// in flight fail with KindExited (OutcomeUncertain). Close may still be called.
func (c *Client) Kill() error {
	err := c.cmd.Process.Kill()
	<-c.exited
	<-c.readerDone
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (t *tailBuffer) lastLine(max int) string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > max {
		last = last[:max]
	}
	return last
}
