package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// protocol/vectors.json, the language-neutral test vectors (protocol/README.md §16.1 "Test
// vectors"): every scenario replayed through Client.Call (the generic request) against a fresh
// sidecar on a fresh, empty store, in each framing; each answer normalized as §16.1 says and
// compared with the file's expect as parsed JSON (the reference: test/vectors/normalize.ts).
//
// Member order: decoding into map[string]any loses it, so answers are normalized while walking
// their raw JSON tokens with json.Decoder.Token, in the order received; ULIDs are numbered
// <id:N> in that order.

var (
	vecULID  = regexp.MustCompile(`[0-9A-HJKMNP-TV-Z]{26}`)
	vecTS    = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	vecIDRef = regexp.MustCompile(`<id:\d+>`)
)

type vectorStep struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Expect json.RawMessage `json:"expect"`
}

// vectorsFile is protocol/vectors.json ($SIDECAR_PROTOCOL_VECTORS when set): the scenarios in
// the file's order.
func vectorsFile(t *testing.T) (names []string, scenarios map[string][]vectorStep) {
	t.Helper()
	path := os.Getenv("SIDECAR_PROTOCOL_VECTORS")
	if path == "" {
		path = filepath.Join(repoRoot(t), "protocol", "vectors.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Scenarios json.RawMessage `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.Scenarios, &scenarios); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(f.Scenarios))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names, scenarios
}

// vecNormalizer is §16.1's normalization of one scenario's answers.
type vecNormalizer struct {
	ids    map[string]string // ULID -> <id:N>
	actual map[string]string // <id:N> -> ULID
	root   string
}

func newVecNormalizer() *vecNormalizer {
	return &vecNormalizer{ids: map[string]string{}, actual: map[string]string{}}
}

func (n *vecNormalizer) str(s, key, parent string) string {
	if key == "version" && parent == "serverInfo" {
		return "<version>"
	}
	if n.root != "" {
		s = strings.ReplaceAll(s, n.root, "<root>")
	}
	s = vecULID.ReplaceAllStringFunc(s, func(u string) string {
		id, ok := n.ids[u]
		if !ok {
			id = fmt.Sprintf("<id:%d>", len(n.ids)+1)
			n.ids[u] = id
			n.actual[id] = u
		}
		return id
	})
	return vecTS.ReplaceAllString(s, "<ts>")
}

// normalize walks raw JSON in document order and returns it normalized, as json.Unmarshal
// into any would return it (map[string]any, []any, float64, ...).
func (n *vecNormalizer) normalize(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	v, err := n.walk(dec, "", "")
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	return v, err
}

func (n *vecNormalizer) walk(dec *json.Decoder, key, parent string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			m := map[string]any{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := n.walk(dec, k.(string), key)
				if err != nil {
					return nil, err
				}
				m[k.(string)] = v
			}
			_, err := dec.Token() // }
			return m, err
		}
		a := []any{}
		for dec.More() {
			v, err := n.walk(dec, "", parent)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	case string:
		return n.str(t, key, parent), nil
	default: // float64, bool, nil
		return t, nil
	}
}

// substitute replaces every <id:N> of a request's params by the ULID it stands for.
func (n *vecNormalizer) substitute(v any) any {
	switch x := v.(type) {
	case string:
		return vecIDRef.ReplaceAllStringFunc(x, func(id string) string {
			if u, ok := n.actual[id]; ok {
				return u
			}
			return id
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.substitute(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = n.substitute(e)
		}
		return out
	}
	return v
}

// answerJSON is the answer to one request through Call, as the JSON the file's expect holds:
// {"result": ...} or {"error": {code, message, data?}} with the error as the client received it.
func answerJSON(ctx context.Context, c *Client, method string, params any) ([]byte, error) {
	var result json.RawMessage
	err := c.Call(ctx, method, params, &result)
	var e *Error
	switch {
	case err == nil:
		return []byte(`{"result":` + string(result) + `}`), nil
	case errors.As(err, &e) && e.Code != 0:
		msg, _ := encodeJSON(e.Message)
		b := fmt.Sprintf(`{"error":{"code":%d,"message":%s`, e.Code, msg)
		if e.RawData != nil {
			b += `,"data":` + string(e.RawData)
		}
		return []byte(b + `}}`), nil
	}
	return nil, err
}

func replayVectors(t *testing.T, framing Framing, steps []vectorStep) []any {
	t.Helper()
	c, err := spawnClient(Options{Command: sidecarCommand(t), Store: newStore(t), Framing: framing})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	t.Cleanup(func() { _ = c.Kill(); c.notes.stop() })
	ctx := testCtx(t)
	n := newVecNormalizer()
	var answers []any
	for i, step := range steps {
		var params any
		if step.Params != nil {
			dec := json.NewDecoder(bytes.NewReader(step.Params))
			dec.UseNumber() // params are sent with their numbers as written
			if err := dec.Decode(&params); err != nil {
				t.Fatal(err)
			}
			params = n.substitute(params)
		}
		raw, err := answerJSON(ctx, c, step.Method, params)
		if err != nil {
			t.Fatalf("step %d (%s): %v\nstderr: %s", i, step.Method, err, c.Stderr())
		}
		if i == 0 {
			var init struct {
				Result struct {
					Store struct {
						Root string `json:"root"`
					} `json:"store"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &init); err != nil || init.Result.Store.Root == "" {
				t.Fatalf("initialize: no store.root in %s (%v)", raw, err)
			}
			n.root = init.Result.Store.Root
			if err := c.Notify(ctx, "initialized", EmptyParams{}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := n.normalize(raw)
		if err != nil {
			t.Fatalf("step %d (%s): %v in %s", i, step.Method, err, raw)
		}
		answers = append(answers, got)
	}
	return answers
}

func TestVectorsNormalizeNumbersIdsInMemberOrder(t *testing.T) {
	a, b := "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01BX5ZZKBKACTAV9WEVGEMMVRY"
	n := newVecNormalizer()
	got, err := n.normalize([]byte(`{"z":"x ` + b + `","a":["` + a + `","` + b + `"],"at":"2026-01-02T03:04:05.678Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"z": "x <id:1>", "a": []any{"<id:2>", "<id:1>"}, "at": "<ts>"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if s := n.substitute([]any{"<id:2>", "<id:9>"}); !reflect.DeepEqual(s, []any{a, "<id:9>"}) {
		t.Fatalf("substitute: %#v", s)
	}
}

func TestVectors(t *testing.T) {
	names, scenarios := vectorsFile(t)
	if len(names) < 10 {
		t.Fatalf("protocol/vectors.json has %d scenarios", len(names))
	}
	forEachFraming(t, func(t *testing.T, framing Framing) {
		for _, name := range names {
			steps := scenarios[name]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if len(steps) == 0 || steps[0].Method != "initialize" {
					t.Fatalf("%s does not begin with initialize", name)
				}
				got := replayVectors(t, framing, steps)
				for i, step := range steps {
					var want any
					if err := json.Unmarshal(step.Expect, &want); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got[i], want) {
						g, _ := json.Marshal(got[i])
						t.Errorf("step %d (%s):\n got  %s\n want %s", i, step.Method, g, step.Expect)
					}
				}
			})
		}
	})
}
