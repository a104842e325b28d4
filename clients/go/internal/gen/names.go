package gen

import (
	"strings"
	"unicode"
)

// initialisms are written in capitals in Go names (sessionId → SessionID).
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "api": "API", "llm": "LLM",
	"lsp": "LSP", "ndjson": "NDJSON", "json": "JSON", "utf": "UTF",
}

// words splits a JSON name into words: at a lower-to-upper change and at anything that is
// not a letter or a digit ("toolCallId" → tool Call Id, "$blob" → blob, "AES-256-GCM" → AES 256 GCM).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = nil
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return out
}

// goIdent is the exported Go name of a JSON member, enum value or schema name.
func goIdent(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	if b.Len() == 0 {
		return "X"
	}
	if unicode.IsDigit([]rune(b.String())[0]) {
		return "X" + b.String()
	}
	return b.String()
}

// lowerFirst makes an unexported name of an exported one (ChatMessage → chatMessage).
func lowerFirst(s string) string {
	rs := []rune(s)
	i := 0
	for i < len(rs) && unicode.IsUpper(rs[i]) {
		i++
	}
	switch {
	case i == 0:
	case i == 1 || i == len(rs):
		for j := 0; j < i; j++ {
			rs[j] = unicode.ToLower(rs[j])
		}
	default: // APIRecord → apiRecord
		for j := 0; j < i-1; j++ {
			rs[j] = unicode.ToLower(rs[j])
		}
	}
	return string(rs)
}

// methodGoName is the Client method of a protocol method (session/setPhase → SessionSetPhase).
func methodGoName(method string) string {
	var b strings.Builder
	for _, part := range strings.Split(method, "/") {
		if part == "$" || part == "" {
			continue
		}
		b.WriteString(goIdent(part))
	}
	return b.String()
}

func singular(s string) string {
	if strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss") {
		return strings.TrimSuffix(s, "s")
	}
	return s
}

// inlineNames names some inline objects better than parent + member would.
var inlineNames = map[string]string{
	"InitializeParamsClientInfo":     "ClientInfo",
	"InitializeResultServerInfo":     "ServerInfo",
	"InitializeResultStore":          "StoreInfo",
	"InterruptionRecordToolResult":   "ToolResult",
	"InvalidParamsErrorDataIssue":    "InvalidParamsIssue",
	"ServerCapabilitiesSession":      "SessionCapabilities",
	"SessionHistoryResultGeneration": "HistoryGeneration",
	"SessionPruneResultSkipped":      "PruneSkipped",
	"SessionContextParamsPrune":      "ContextPrune",
	"ParentLinkSummary":              "ParentSummary",
}

// enumNames names the protocol's string enums by their values (the same values anywhere are
// one Go type). An enum not listed gets parent + member as its name.
var enumNames = map[string]string{
	"write|read":      "OpenMode",
	"manual|auto":     "TurnsMode",
	"user|background": "TurnKind",
	"accepted|compacting|providerStream|executingTools":                "TurnPhase",
	"active|retryable|completed|interrupted|terminalFailure|abandoned": "TurnStatus",
	"completed|interrupted|terminalFailure|abandoned":                  "TurnOutcome",
	"request|response":               "APIDirection",
	"stdout|stderr":                  "StreamName",
	"start|phase|fail|resume|finish": "TurnEvent",
	"continuation|fork":              "ParentRelation",
	"file|postgres":                  "StoreBackend",
	"lsp|ndjson":                     "Framing",
	"open|gone|inTrash":              "PruneSkipReason",
}
