package sidecar

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a misbehaving sidecar (a helper process): with
// SIDECAR_GO_FAKE set it speaks just enough of the protocol to be started.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SIDECAR_GO_FAKE"); mode != "" {
		fakeSidecar(mode)
		return
	}
	// What Start runs by itself in the examples: this repository's build, unless
	// $SESSION_SIDECAR_COMMAND says otherwise.
	if os.Getenv(EnvCommand) == "" {
		cli := filepath.Join(repoRoot(nil), "dist", "src", "cli.js")
		if _, err := os.Stat(cli); err == nil {
			os.Setenv(EnvCommand, "node "+strconv.Quote(cli))
		}
	}
	os.Exit(m.Run())
}

// fakeSidecar answers initialize; then, by mode, "hang": ignores every request and stdin's
// end (only a kill stops it); "die": at the next request writes a line to stderr and exits
// with code 3 without answering.
func fakeSidecar(mode string) {
	framing := FramingNDJSON
	for i, a := range os.Args {
		if a == "--framing" && i+1 < len(os.Args) {
			framing = Framing(os.Args[i+1])
		}
	}
	fr := newFrameReader(os.Stdin, framing, 1<<20)
	for {
		body, err := fr.next()
		if err != nil {
			if mode == "hang" {
				select {} // stdin ended: stay anyway
			}
			os.Exit(0)
		}
		var req struct {
			ID     *int64 `json:"id"`
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		if req.ID == nil {
			continue
		}
		if req.Method == "initialize" {
			res := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1,"serverInfo":{"name":"fake","version":"0"},`+
				`"capabilities":{"framings":["lsp","ndjson"],"maxMessageBytes":1024,"recordKinds":[],"session":{},"turns":{"modes":[]}},`+
				`"store":{"root":"/nowhere","backend":"file"}}}`, *req.ID)
			os.Stdout.Write(frame(framing, []byte(res)))
			continue
		}
		if mode == "die" {
			fmt.Fprintln(os.Stderr, "fake sidecar: boom at", req.Method)
			os.Exit(3)
		}
	}
}

func startFake(t *testing.T, mode string, mod func(*Options)) *Client {
	opts := Options{Command: []string{os.Args[0]}, Env: append(os.Environ(), "SIDECAR_GO_FAKE="+mode)}
	if mod != nil {
		mod(&opts)
	}
	c, err := Start(testCtx(t), opts)
	ok(t, err)
	t.Cleanup(func() { _ = c.Kill(); _ = c.Close() })
	return c
}

// Close of a sidecar that does not answer shutdown and does not exit at the end of its
// input: it is killed after CloseTimeout, and Close says so.
func TestCloseKillsAfterTimeout(t *testing.T) {
	c := startFake(t, "hang", func(o *Options) { o.CloseTimeout = 500 * time.Millisecond })
	err := c.Close()
	d, found := DataOf[ExitedData](err)
	if !found || KindOf(err) != KindExited || d.Cause != "killed after CloseTimeout" || d.Signal != "killed" {
		t.Fatalf("Close: %v (%+v)", err, d)
	}
	<-c.Done()
	if again := c.Close(); again != err {
		t.Errorf("a second Close: %v", again)
	}
	_, err = c.SessionList(testCtx(t), SessionListParams{})
	if KindOf(err) != KindConnectionClosed || OutcomeOf(err) != OutcomeNotWritten {
		t.Errorf("a call after Close: %v", err)
	}
}

// The sidecar dies with a request in flight: the request fails with KindExited and
// OutcomeUncertain, naming the exit code and the last stderr line; later ones are not sent.
func TestSidecarDiesMidRequest(t *testing.T) {
	for _, framing := range framings() {
		c := startFake(t, "die", func(o *Options) { o.Framing = framing })
		_, err := c.SessionAppend(testCtx(t), SessionAppendParams{SessionID: "x", Records: Records{userMessage("hi")}})
		d, found := DataOf[ExitedData](err)
		if !found || KindOf(err) != KindExited || OutcomeOf(err) != OutcomeUncertain || d.ExitCode != 3 ||
			d.LastStderrLine != "fake sidecar: boom at session/append" || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("%s: in flight: %v (%+v)", framing, err, d)
		}
		_, err = c.SessionList(testCtx(t), SessionListParams{})
		if KindOf(err) != KindConnectionClosed || OutcomeOf(err) != OutcomeNotWritten {
			t.Fatalf("%s: after: %v", framing, err)
		}
		if c.ExitCode() != 3 {
			t.Errorf("exit code %d", c.ExitCode())
		}
		if _, open := <-c.Notifications(); open {
			t.Errorf("the notification channel is still open after the end")
		}
	}
}

// A clean Close: shutdown, exit, code 0; the notification channel is closed.
func TestCloseIsClean(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		c := start(t, framing, newStore(t))
		sid := mustCreate(t, c, SessionCreateParams{})
		_, err := c.SessionAppend(testCtx(t), SessionAppendParams{SessionID: sid, Records: Records{userMessage("hi")}})
		ok(t, err)
		ok(t, c.Close())
		if c.ExitCode() != 0 {
			t.Fatalf("exit code %d\n%s", c.ExitCode(), c.Stderr())
		}
		if _, open := <-c.Notifications(); open {
			t.Errorf("the notification channel is still open after Close")
		}
	})
}
