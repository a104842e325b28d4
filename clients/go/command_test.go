package sidecar

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitCommandLine(t *testing.T) {
	for in, want := range map[string][]string{
		"node /opt/sidecar/dist/src/cli.js": {"node", "/opt/sidecar/dist/src/cli.js"},
		"  node\t  cli.js  ":                {"node", "cli.js"},
		`node "/path with spaces/cli.js"`:   {"node", "/path with spaces/cli.js"},
		`node '/it''s here/cli.js'`:         {"node", "/its here/cli.js"},
		`a\ b "c\"d" 'e\f'`:                 {"a b", `c"d`, `e\f`},
		`x""`:                               {"x"},
		`""`:                                {""},
	} {
		got, err := SplitCommandLine(in)
		ok(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"", "   ", `node "unterminated`, "node 'x"} {
		if _, err := SplitCommandLine(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestResolveCommand(t *testing.T) {
	got, err := resolveCommand([]string{"my-sidecar", "--x"}, []string{EnvCommand + "=node other.js"})
	ok(t, err)
	if !reflect.DeepEqual(got, []string{"my-sidecar", "--x"}) {
		t.Errorf("Options.Command first: %q", got)
	}
	got, err = resolveCommand(nil, []string{"PATH=/nonexistent", EnvCommand + `=node "/a b/cli.js"`})
	ok(t, err)
	if !reflect.DeepEqual(got, []string{"node", "/a b/cli.js"}) {
		t.Errorf("from the environment: %q", got)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := resolveCommand(nil, []string{"PATH=/nonexistent"}); !errors.Is(err, ErrNoSidecar) {
		t.Errorf("nothing to run: %v", err)
	}
}
