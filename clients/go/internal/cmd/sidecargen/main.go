// Command sidecargen writes types_gen.go and methods_gen.go from protocol/schema.json and
// protocol/meta.json (run by `go generate` in clients/go; see doc.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/session-sidecar/session-sidecar/clients/go/internal/gen"
)

func main() {
	schema := flag.String("schema", "../../protocol/schema.json", "protocol/schema.json")
	meta := flag.String("meta", "../../protocol/meta.json", "protocol/meta.json")
	out := flag.String("out", ".", "the directory to write the files into")
	flag.Parse()
	if err := run(*schema, *meta, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sidecargen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, metaPath, out string) error {
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	meta, err := os.ReadFile(metaPath)
	if err != nil {
		return err
	}
	files, err := gen.Generate(schema, meta)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(out, n), files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
