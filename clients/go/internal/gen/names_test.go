package gen

import "testing"

func TestGoIdent(t *testing.T) {
	for in, want := range map[string]string{
		"sessionId": "SessionID", "sessionIds": "SessionIDs", "toolCallId": "ToolCallID", "apiKeyEnv": "APIKeyEnv",
		"openApi": "OpenAPI", "_meta": "Meta", "$blob": "Blob", "dataBase64": "DataBase64", "onFailure": "OnFailure",
		"ndjson": "NDJSON", "LlmConfig": "LLMConfig", "ApiRecord": "APIRecord", "3d": "X3d",
	} {
		if got := goIdent(in); got != want {
			t.Errorf("goIdent(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"session/setPhase": "SessionSetPhase", "tool/allocateScratch": "ToolAllocateScratch", "initialize": "Initialize"} {
		if got := methodGoName(in); got != want {
			t.Errorf("methodGoName(%q) = %q, want %q", in, got, want)
		}
	}
	if lowerFirst("APIRecord") != "apiRecord" || lowerFirst("ChatMessage") != "chatMessage" || lowerFirst("ID") != "id" {
		t.Errorf("lowerFirst")
	}
}

// A schema the generator must refuse: a oneOf whose variants have no common const member.
func TestGenerateRefusesAUnionWithoutDiscriminator(t *testing.T) {
	schema := `{"$defs":{"U":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"string"}}}]}}}`
	meta := `{"protocolVersion":1,"methods":[],"recordKinds":[],"errors":{"jsonRpc":{},"domain":[]}}`
	if _, err := Generate([]byte(schema), []byte(meta)); err == nil {
		t.Fatal("accepted")
	}
}
