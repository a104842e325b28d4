package sidecar

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, f Framing, input string, max int) ([]string, error) {
	fr := newFrameReader(strings.NewReader(input), f, max)
	var out []string
	for {
		b, err := fr.next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, string(b))
	}
}

func TestFrameWritesBothFramings(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if got := string(frame(FramingLSP, body)); got != "Content-Length: 77\r\n\r\n"+string(body) {
		t.Errorf("lsp: %q", got)
	}
	if got := string(frame(FramingNDJSON, body)); got != string(body)+"\n" {
		t.Errorf("ndjson: %q", got)
	}
}

func TestFrameReaderNDJSON(t *testing.T) {
	got, err := readAll(t, FramingNDJSON, "{\"a\":1}\r\n\n  \n{\"b\":\"x\\ny\"}\n", 1<<20)
	ok(t, err)
	if strings.Join(got, "|") != `{"a":1}|{"b":"x\ny"}` {
		t.Errorf("got %q", got)
	}
	// A final line without \n is never a message.
	if _, err := readAll(t, FramingNDJSON, "{\"a\":1}\n{\"b\":", 1<<20); !errors.Is(err, errTruncated) {
		t.Errorf("truncated: %v", err)
	}
	// Longer than the internal buffer, below the maximum.
	long := `{"s":"` + strings.Repeat("x", 200<<10) + `"}`
	got, err = readAll(t, FramingNDJSON, long+"\n", 1<<20)
	ok(t, err)
	if len(got) != 1 || got[0] != long {
		t.Errorf("a long line was not read whole")
	}
	if _, err := readAll(t, FramingNDJSON, long+"\n", 1<<10); err == nil {
		t.Errorf("a line over the maximum was accepted")
	}
}

func TestFrameReaderLSP(t *testing.T) {
	in := "Content-Length: 7\r\n\r\n{\"a\":1}" +
		"content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-LENGTH:  9 \r\n\r\n{\"b\":\"\n\"}" +
		"\r\nContent-Length: 2\r\n\r\n{}"
	got, err := readAll(t, FramingLSP, in, 1<<20)
	ok(t, err)
	if strings.Join(got, "|") != "{\"a\":1}|{\"b\":\"\n\"}|{}" {
		t.Errorf("got %q", got)
	}
	for name, bad := range map[string]string{
		"no length":  "Content-Type: x\r\n\r\n{}",
		"bad length": "Content-Length: -3\r\n\r\n{}",
		"no colon":   "Content-Length 2\r\n\r\n{}",
		"short body": "Content-Length: 10\r\n\r\n{}",
		"huge":       "Content-Length: 99999999\r\n\r\n{}",
		"header":     "X: " + strings.Repeat("y", 9<<10) + "\r\n\r\n",
	} {
		if _, err := readAll(t, FramingLSP, bad, 1<<20); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A round trip of what frame writes.
	var buf bytes.Buffer
	for _, m := range []string{`{"x":"é"}`, `{"y":[1,2]}`} {
		buf.Write(frame(FramingLSP, []byte(m)))
	}
	got, err = readAll(t, FramingLSP, buf.String(), 1<<20)
	ok(t, err)
	if strings.Join(got, "|") != `{"x":"é"}|{"y":[1,2]}` {
		t.Errorf("round trip: %q", got)
	}
}
