package sidecar

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// EnvCommand names the environment variable holding the sidecar's command line.
const EnvCommand = "SESSION_SIDECAR_COMMAND"

// Executable is what Start runs when neither Options.Command nor $SESSION_SIDECAR_COMMAND
// says otherwise (found on PATH; `npm install -g session-sidecar`).
const Executable = "session-sidecar"

// ErrNoSidecar: no command given, $SESSION_SIDECAR_COMMAND unset and no session-sidecar on PATH.
var ErrNoSidecar = errors.New("sidecar: no sidecar to run: set Options.Command, or " + EnvCommand +
	` (e.g. "node /path/to/dist/src/cli.js"), or put ` + Executable + " on PATH")

// resolveCommand is the argv prefix of the sidecar: Options.Command, else the command line
// in $SESSION_SIDECAR_COMMAND (in env when given), else session-sidecar on PATH.
func resolveCommand(command []string, env []string) ([]string, error) {
	if len(command) > 0 {
		return command, nil
	}
	line, ok := lookupEnv(env, EnvCommand)
	if ok && strings.TrimSpace(line) != "" {
		argv, err := SplitCommandLine(line)
		if err != nil {
			return nil, fmt.Errorf("sidecar: %s: %w", EnvCommand, err)
		}
		return argv, nil
	}
	path, err := exec.LookPath(Executable)
	if err != nil {
		return nil, ErrNoSidecar
	}
	return []string{path}, nil
}

func lookupEnv(env []string, name string) (string, bool) {
	if env == nil {
		return os.LookupEnv(name)
	}
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// SplitCommandLine splits a command line into words at unquoted whitespace, as a POSIX shell
// does without expansions: '...' keeps everything literally, "..." keeps whitespace and
// takes \" and \\ as escapes, and a backslash outside quotes escapes the next character. So
// `node /opt/sidecar/dist/src/cli.js` and `node "/path with spaces/cli.js"` both work.
func SplitCommandLine(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				cur.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return nil, errors.New("an unterminated ' quote")
			}
			i = j
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && (rs[j+1] == '"' || rs[j+1] == '\\' || rs[j+1] == '$' || rs[j+1] == '`') {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New(`an unterminated " quote`)
			}
			i = j
		case r == '\\':
			inWord = true
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			}
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("an empty command line")
	}
	return out, nil
}
