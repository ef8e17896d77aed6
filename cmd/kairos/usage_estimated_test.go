package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// A provider that reports no usage: the adapter estimates the counts, and
// the usage record and `kairos usage` say they are estimates.
func TestUsageShowsEstimatedCounts(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n")
	e.llm.SetQuirks("test-model", testkit.Quirks{NoUsage: true})
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	m := e.main()
	m.Stdin = strings.NewReader("one\n")
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	var lines []map[string]any
	if err := json.Unmarshal([]byte(e.runCLI(t, "usage")), &lines); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0]["calls"] != float64(1) || lines[0]["estimated_calls"] != float64(1) || lines[0]["tokens"].(float64) <= 0 {
		t.Fatalf("usage lines %v", lines)
	}
}
