package agent

import (
	"encoding/json"
	"testing"

	"github.com/kairos-agent/kairos"
)

// A tool set is marshalled and counted once while its specs stay the
// same, and counted again as soon as any spec's text changes (a tool's
// spec follows the policy), whatever the tools' identity.
func TestToolTokensCachedBySpecContent(t *testing.T) {
	calls := 0
	tc := &tokenCounter{count: func(_, s string) int { calls++; return len(s) }}
	specs := []kairos.ToolSpec{{Name: "code", Description: "Run JavaScript.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	first := tc.toolTokens("m", kairos.ToolCallingNative, specs)
	if again := tc.toolTokens("m", kairos.ToolCallingNative, []kairos.ToolSpec{specs[0]}); again != first || calls != 1 {
		t.Fatalf("same set: %d then %d tokens, %d counts (want 1)", first, again, calls)
	}
	changed := []kairos.ToolSpec{specs[0]}
	changed[0].Description = "Run JavaScript. getJSON(url) reads the network."
	if n := tc.toolTokens("m", kairos.ToolCallingNative, changed); n == first || calls != 2 {
		t.Fatalf("changed spec: %d tokens (was %d), %d counts (want 2)", n, first, calls)
	}
	if n := tc.toolTokens("m", kairos.ToolCallingPrompted, specs); n == first || calls != 3 {
		t.Fatalf("prompted mode: %d tokens, %d counts (want 3)", n, calls)
	}
}
