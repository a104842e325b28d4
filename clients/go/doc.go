// Package sidecar is the Go client of session-sidecar: it spawns `session-sidecar serve`, speaks
// the protocol (protocol/README.md, version 1) over the child's stdin/stdout in either framing
// (newline-delimited JSON or LSP Content-Length frames), and gives every method of the protocol
// as a typed function taking a context.Context.
//
// The params, results and records (types_gen.go) and the method wrappers (methods_gen.go) are
// generated from protocol/schema.json and protocol/meta.json by internal/gen; run `go generate`
// in this directory after `npm run gen:protocol`. A test fails when the checked-in files differ
// from what the generator makes of the current schema.
//
// Standard library only.
package sidecar

//go:generate go run ./internal/cmd/sidecargen -schema ../../protocol/schema.json -meta ../../protocol/meta.json -out .
