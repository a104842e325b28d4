package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Ptr returns a pointer to v: optional members are pointers, so that an absent member and a
// zero value are told apart (Ptr(0) sends 0, nil sends nothing).
func Ptr[T any](v T) *T { return &v }

// MustJSON is the JSON text of v, for the json.RawMessage members (message content, event
// payloads, metadata values, state values). It panics if v cannot be encoded (a channel, a
// function, NaN). HTML characters are not escaped. A json.RawMessage is sent as it is, so
// pass one to keep exact bytes (member order, number spelling).
func MustJSON(v any) json.RawMessage {
	b, err := encodeJSON(v)
	if err != nil {
		panic(fmt.Sprintf("sidecar.MustJSON: %v", err))
	}
	return b
}

// encodeJSON is json.Marshal without HTML escaping and without the encoder's newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func cloneRaw(b []byte) json.RawMessage {
	return append(json.RawMessage(nil), b...)
}

var errNoRaw = errors.New("sidecar: a record of an unknown kind can only be sent back as it was decoded")

func marshalRaw(raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return nil, errNoRaw
	}
	return raw, nil
}

// marshalWithMember encodes v (an object) with the member name: value first (a record's kind).
func marshalWithMember(name, value string, v any) ([]byte, error) {
	body, err := encodeJSON(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("sidecar: %s %q does not encode as an object", name, value)
	}
	n, _ := encodeJSON(name)
	val, _ := encodeJSON(value)
	out := make([]byte, 0, len(body)+len(n)+len(val)+2)
	out = append(out, '{')
	out = append(out, n...)
	out = append(out, ':')
	out = append(out, val...)
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// unmarshalVariant decodes data into v after checking that its member name is value.
func unmarshalVariant(data []byte, name, value string, v any) error {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	var got string
	if raw, ok := head[name]; !ok || json.Unmarshal(raw, &got) != nil || got != value {
		return fmt.Errorf("sidecar: expected %s %q, got %s", name, value, head[name])
	}
	return json.Unmarshal(data, v)
}

// marshalOpen encodes v (an object) followed by the extra members it does not name, in the
// order of their names.
func marshalOpen(v any, extra map[string]json.RawMessage, known []string) ([]byte, error) {
	body, err := encodeJSON(v)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return body, nil
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, errors.New("sidecar: an open object does not encode as an object")
	}
	skip := map[string]bool{}
	for _, k := range known {
		skip[k] = true
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := append([]byte(nil), body[:len(body)-1]...)
	for _, k := range keys {
		val := extra[k]
		if !json.Valid(val) {
			return nil, fmt.Errorf("sidecar: member %q is not valid JSON", k)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		name, _ := encodeJSON(k)
		out = append(out, name...)
		out = append(out, ':')
		var compact bytes.Buffer
		if err := json.Compact(&compact, val); err != nil {
			return nil, err
		}
		out = append(out, compact.Bytes()...)
	}
	return append(out, '}'), nil
}

// extraMembers returns the members of the object data that are not in known (nil if none).
func extraMembers(data []byte, known []string) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for _, k := range known {
		delete(all, k)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

// StringOrBlob is a string member that the store may keep as a blob (protocol §15.4): in
// what is read back, a string longer than the session's blobThreshold is a BlobRef. Exactly
// one of Text and Blob is meaningful: Blob when it is not nil.
type StringOrBlob struct {
	Text string
	Blob *BlobRef
}

// Text is a StringOrBlob holding the string s.
func Text(s string) StringOrBlob { return StringOrBlob{Text: s} }

// String is the text, or the blob's reference ("sha256:…") when it is a blob.
func (v StringOrBlob) String() string {
	if v.Blob != nil {
		return v.Blob.Blob
	}
	return v.Text
}

func (v StringOrBlob) MarshalJSON() ([]byte, error) {
	if v.Blob != nil {
		return encodeJSON(v.Blob)
	}
	return encodeJSON(v.Text)
}

func (v *StringOrBlob) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		v.Blob = nil
		return json.Unmarshal(data, &v.Text)
	}
	ref := new(BlobRef)
	if err := json.Unmarshal(data, ref); err != nil {
		return fmt.Errorf("sidecar: neither a string nor a blob reference: %w", err)
	}
	v.Text, v.Blob = "", ref
	return nil
}
