// Package gen turns protocol/schema.json and protocol/meta.json into the Go client's
// types_gen.go and methods_gen.go. It is run by `go generate` (internal/cmd/sidecargen) and by
// the drift test, which compares its output with the checked-in files.
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// node is a JSON value that keeps the order of object members (struct fields follow the
// schema's property order).
type node struct {
	keys  []string
	obj   map[string]*node // nil unless an object
	arr   []*node          // nil unless an array (isArr)
	isArr bool
	val   any // string, json.Number, bool or nil for scalars
}

func parseJSON(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{obj: map[string]*node{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.obj[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &node{isArr: true, arr: []*node{}}
			for dec.More() {
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return &node{val: t}, nil
	}
}

func (n *node) get(k string) *node {
	if n == nil || n.obj == nil {
		return nil
	}
	return n.obj[k]
}

func (n *node) str(k string) string {
	if v := n.get(k); v != nil {
		if s, ok := v.val.(string); ok {
			return s
		}
	}
	return ""
}

// canon is a canonical text of n without "description" members: two inline schemas with the
// same canon are one Go type.
func (n *node) canon() string {
	var b strings.Builder
	n.writeCanon(&b)
	return b.String()
}

func (n *node) writeCanon(b *strings.Builder) {
	switch {
	case n.obj != nil:
		keys := append([]string(nil), n.keys...)
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
			if k == "description" {
				continue
			}
			fmt.Fprintf(b, "%q:", k)
			n.obj[k].writeCanon(b)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case n.isArr:
		b.WriteByte('[')
		for _, v := range n.arr {
			v.writeCanon(b)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	default:
		j, _ := json.Marshal(n.val)
		b.Write(j)
	}
}

// schema is the part of JSON Schema the protocol's generated schema uses.
type schema struct {
	n          *node
	ref        string // a $defs name
	typ        string
	props      []string
	prop       map[string]*schema
	required   map[string]bool
	addl       *schema // additionalProperties when it is a schema
	addlFalse  bool
	items      *schema
	enum       []string
	hasConst   bool
	constVal   any
	anyOf      []*schema
	oneOf      []*schema
	desc       string
	isEmptyAny bool // {}: any JSON value
}

func toSchema(n *node) (*schema, error) {
	if n == nil || n.obj == nil {
		return nil, fmt.Errorf("a schema must be an object")
	}
	s := &schema{n: n, prop: map[string]*schema{}, required: map[string]bool{}}
	s.desc = n.str("description")
	if r := n.str("$ref"); r != "" {
		if !strings.HasPrefix(r, "#/$defs/") {
			return nil, fmt.Errorf("unsupported $ref %q", r)
		}
		s.ref = strings.TrimPrefix(r, "#/$defs/")
	}
	s.typ = n.str("type")
	if p := n.get("properties"); p != nil {
		for _, k := range p.keys {
			ps, err := toSchema(p.obj[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			s.props = append(s.props, k)
			s.prop[k] = ps
		}
	}
	if r := n.get("required"); r != nil {
		for _, v := range r.arr {
			s.required[v.val.(string)] = true
		}
	}
	if a := n.get("additionalProperties"); a != nil {
		if a.obj != nil {
			as, err := toSchema(a)
			if err != nil {
				return nil, err
			}
			s.addl = as
		} else if b, ok := a.val.(bool); ok && !b {
			s.addlFalse = true
		}
	}
	if it := n.get("items"); it != nil {
		is, err := toSchema(it)
		if err != nil {
			return nil, err
		}
		s.items = is
	}
	if e := n.get("enum"); e != nil {
		for _, v := range e.arr {
			str, ok := v.val.(string)
			if !ok {
				return nil, fmt.Errorf("only string enums are supported")
			}
			s.enum = append(s.enum, str)
		}
	}
	if c := n.get("const"); c != nil {
		s.hasConst, s.constVal = true, c.val
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if l := n.get(k); l != nil {
			for _, v := range l.arr {
				vs, err := toSchema(v)
				if err != nil {
					return nil, err
				}
				if k == "anyOf" {
					s.anyOf = append(s.anyOf, vs)
				} else {
					s.oneOf = append(s.oneOf, vs)
				}
			}
		}
	}
	meaningful := 0
	for _, k := range n.keys {
		if k != "description" {
			meaningful++
		}
	}
	s.isEmptyAny = meaningful == 0
	return s, nil
}
