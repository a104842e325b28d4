package sidecar

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/session-sidecar/session-sidecar/clients/go/internal/gen"
)

func protocolFile(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "protocol", name))
	ok(t, err)
	return b
}

// The checked-in generated files are what the generator makes of the current schema: after
// `npm run gen:protocol`, run `go generate` in clients/go.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := gen.Generate(protocolFile(t, "schema.json"), protocolFile(t, "meta.json"))
	ok(t, err)
	if len(files) != 2 {
		t.Fatalf("generated %d files", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		ok(t, err)
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate` in clients/go (protocol/schema.json or meta.json changed)", name)
		}
	}
}

type metaMethod struct {
	Method    string `json:"method"`
	Kind      string `json:"kind"`
	Direction string `json:"direction"`
	Params    struct {
		Ref      string `json:"$ref"`
		Optional bool   `json:"optional"`
	} `json:"params"`
	Result *struct {
		Ref  string `json:"$ref"`
		Type string `json:"type"`
	} `json:"result"`
	Capability string `json:"capability"`
	Since      int    `json:"since"`
}

type metaDoc struct {
	ProtocolVersion int          `json:"protocolVersion"`
	Methods         []metaMethod `json:"methods"`
	RecordKinds     []string     `json:"recordKinds"`
	Errors          struct {
		JSONRPC map[string]int `json:"jsonRpc"`
		Domain  []struct {
			Kind string `json:"kind"`
			Code int    `json:"code"`
		} `json:"domain"`
	} `json:"errors"`
}

func readMeta(t *testing.T) metaDoc {
	var m metaDoc
	ok(t, json.Unmarshal(protocolFile(t, "meta.json"), &m))
	return m
}

// Every method of meta.json, in its order, is in Methods, and every method a client sends is
// a method of Client with a context first (checked by reflection, independently of the
// generator).
func TestMethodsMatchMeta(t *testing.T) {
	m := readMeta(t)
	if m.ProtocolVersion != ProtocolVersion {
		t.Fatalf("meta.json protocolVersion %d, package %d", m.ProtocolVersion, ProtocolVersion)
	}
	if len(m.Methods) != len(Methods) {
		t.Fatalf("meta.json has %d methods, Methods %d", len(m.Methods), len(Methods))
	}
	ctxType := reflect.TypeOf((*interface{ Done() <-chan struct{} })(nil)).Elem()
	client := reflect.TypeOf(&Client{})
	for i, mm := range m.Methods {
		got := Methods[i]
		if got.Method != mm.Method || got.Kind != mm.Kind || got.Direction != mm.Direction ||
			got.ParamsOptional != mm.Params.Optional || got.Capability != mm.Capability || got.Since != mm.Since {
			t.Errorf("method %d: %+v differs from meta.json %+v", i, got, mm)
		}
		if mm.Direction != "clientToServer" {
			if got.GoName != "" {
				t.Errorf("%s is the server's, yet has GoName %q", mm.Method, got.GoName)
			}
			continue
		}
		meth, found := client.MethodByName(got.GoName)
		if !found {
			t.Errorf("%s: Client has no method %s", mm.Method, got.GoName)
			continue
		}
		if meth.Type.NumIn() < 2 || !meth.Type.In(1).Implements(ctxType) {
			t.Errorf("%s: Client.%s does not take a context first", mm.Method, got.GoName)
		}
		if mm.Kind == "request" && mm.Result != nil && mm.Result.Ref != "" && !hasSuffix(mm.Result.Ref, "/EmptyResult") {
			if meth.Type.NumOut() != 2 || meth.Type.Out(0).Elem().Name() != got.Result {
				t.Errorf("%s: Client.%s does not return *%s", mm.Method, got.GoName, got.Result)
			}
		}
	}
	if !reflect.DeepEqual(m.RecordKinds, RecordKinds) {
		t.Errorf("record kinds %v, meta.json %v", RecordKinds, m.RecordKinds)
	}
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// Every error kind of meta.json has its constant, its code and (domain kinds) a data type.
func TestErrorKindsMatchMeta(t *testing.T) {
	m := readMeta(t)
	for name, code := range m.Errors.JSONRPC {
		if got := ErrorKind(name).Code(); got != code {
			t.Errorf("%s: code %d, meta.json %d", name, got, code)
		}
		if jsonRPCKinds[code] != ErrorKind(name) {
			t.Errorf("code %d is not %s", code, name)
		}
	}
	var kinds []string
	for _, d := range m.Errors.Domain {
		kinds = append(kinds, d.Kind)
		if got := ErrorKind(d.Kind).Code(); got != d.Code {
			t.Errorf("%s: code %d, meta.json %d", d.Kind, got, d.Code)
		}
		mk, found := dataTypes[ErrorKind(d.Kind)]
		if !found {
			t.Errorf("%s has no data type in dataTypes", d.Kind)
			continue
		}
		if reflect.TypeOf(mk()).Kind() != reflect.Pointer {
			t.Errorf("%s: its data type is not made as a pointer", d.Kind)
		}
		if e := fromRPC("x", &rpcError{Code: d.Code, Message: "m", Data: json.RawMessage(`{"kind":"` + d.Kind + `"}`)}); e.Kind != ErrorKind(d.Kind) || e.Outcome() == 0 {
			t.Errorf("%s: decoded as %s", d.Kind, e.Kind)
		}
	}
	if len(domainCodes) != len(kinds) {
		sort.Strings(kinds)
		t.Errorf("domainCodes has %d kinds, meta.json %d: %v", len(domainCodes), len(kinds), kinds)
	}
}
