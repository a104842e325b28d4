package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"
)

// The tests run against the real sidecar: $SESSION_SIDECAR_COMMAND when set (the JS suite's
// test/clients/go.test.ts sets it to the repository's dist/src/cli.js), else the build of the
// repository this module is in (`npm run build` at its root first).

// repoRoot is two directories above this package (clients/go).
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func sidecarCommand(t testing.TB) []string {
	if line := os.Getenv(EnvCommand); line != "" {
		argv, err := SplitCommandLine(line)
		if err != nil {
			t.Fatalf("%s: %v", EnvCommand, err)
		}
		return argv
	}
	cli := filepath.Join(repoRoot(t), "dist", "src", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("no sidecar to test: set %s or run `npm run build` at the repository root (%s is missing)", EnvCommand, cli)
	}
	return []string{"node", cli}
}

// framings are both, or only $SIDECAR_TEST_FRAMING when set.
func framings() []Framing {
	if f := os.Getenv("SIDECAR_TEST_FRAMING"); f != "" {
		return []Framing{Framing(f)}
	}
	return []Framing{FramingNDJSON, FramingLSP}
}

func forEachFraming(t *testing.T, f func(t *testing.T, framing Framing)) {
	for _, fr := range framings() {
		t.Run(string(fr), func(t *testing.T) { f(t, fr) })
	}
}

func newStore(t testing.TB) string {
	return filepath.Join(t.TempDir(), "store")
}

// testCtx is generous: the machine may be loaded.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// start runs a sidecar on store; it is closed (and must exit with 0) at the end of the test
// unless the test closed or killed it.
func start(t testing.TB, framing Framing, store string, mod ...func(*Options)) *Client {
	t.Helper()
	opts := Options{Command: sidecarCommand(t), Store: store, Framing: framing}
	for _, m := range mod {
		m(&opts)
	}
	c, err := Start(testCtx(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		select {
		case <-c.Done():
			_ = c.Close()
		default:
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v\nstderr: %s", err, c.Stderr())
			}
		}
	})
	return c
}

// tracer records the methods sent by every client started while it is installed.
type tracer struct {
	mu   sync.Mutex
	sent map[string]int
}

func traceAll(t *testing.T) *tracer {
	tr := &tracer{sent: map[string]int{}}
	startHook = func(c *Client) {
		c.trace = func(m string) {
			tr.mu.Lock()
			tr.sent[m]++
			tr.mu.Unlock()
		}
	}
	t.Cleanup(func() { startHook = nil })
	return tr
}

func (tr *tracer) methods() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for m := range tr.sent {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v", err)
	}
}

func event(typ string, payload string) EventRecord {
	return EventRecord{Type: typ, Payload: json.RawMessage(payload)}
}

func userMessage(text string) MessageRecord {
	return MessageRecord{Message: ChatMessage{Role: "user", Content: MustJSON(text)}}
}

// sameJSON compares two JSON texts as values.
func sameJSON(t testing.TB, got, want []byte) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("not JSON: %s", got)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatalf("not JSON: %s", want)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// nextNotification waits for the next notification (a liveness bound, not a timing check).
func nextNotification(t testing.TB, c *Client) Notification {
	t.Helper()
	select {
	case n, open := <-c.Notifications():
		if !open {
			t.Fatalf("the notification channel closed\nstderr: %s", c.Stderr())
		}
		return n
	case <-time.After(2 * time.Minute):
		t.Fatalf("no notification within 2 minutes")
	}
	return Notification{}
}
